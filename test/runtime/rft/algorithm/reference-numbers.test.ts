/**
 * The committed expected values of the advantage and KL-penalty tests are what the float64 reference (reference/)
 * computes from Trinity's formulas: same cases, same keys, every number equal. Bit for bit where the arithmetic is
 * sums, products and square roots (the reference sums in PyTorch's order); numbers through exp/log may differ in the
 * last bits, since PyTorch's vectorised exp and log (SLEEF, within 1 ulp) are not the correctly rounded ones of
 * Math.exp/Math.log: those agree within rtol 1e-13 + atol 1e-15, ten times inside the tests' own float64 tolerance.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as advantageExpected from './advantage-expected';
import * as klExpected from './kl-expected';
import { references } from './reference/generate';

interface Tally {
  numbers: number;
  exact: number;
  differences: string[];
}

function compare(generated: unknown, committed: unknown, path: string, tally: Tally): void {
  if (typeof committed === 'number') {
    tally.numbers++;
    if (typeof generated !== 'number') return void tally.differences.push(`${path}: generated ${String(generated)}`);
    if (generated === committed) tally.exact++;
    else if (!(Math.abs(generated - committed) <= 1e-15 + 1e-13 * Math.abs(committed)))
      tally.differences.push(`${path}: generated ${generated}, committed ${committed}`);
    return;
  }
  if (typeof committed !== 'object' || committed === null) {
    if (generated !== committed)
      tally.differences.push(`${path}: generated ${String(generated)}, committed ${String(committed)}`);
    return;
  }
  const keys = (x: unknown) => (typeof x === 'object' && x !== null ? Object.keys(x).sort() : []);
  if (keys(generated).join() !== keys(committed).join())
    tally.differences.push(`${path}: keys ${keys(generated).join(',')} vs ${keys(committed).join(',')}`);
  for (const k of keys(committed))
    compare(
      (generated as Record<string, unknown>)?.[k],
      (committed as Record<string, unknown>)[k],
      `${path}.${k}`,
      tally,
    );
}

const generated = references();

test('advantage-expected.ts is what reference/advantage.ts computes', (t) => {
  const tally: Tally = { numbers: 0, exact: 0, differences: [] };
  compare(generated.advantage.GROUP, advantageExpected.GROUP, 'GROUP', tally);
  compare(generated.advantage.TRAINER, advantageExpected.TRAINER, 'TRAINER', tally);
  assert.deepEqual(tally.differences, []);
  assert.ok(tally.numbers > 700, `${tally.numbers} numbers compared`);
  t.diagnostic(`${tally.numbers} numbers, ${tally.exact} bit for bit`);
  // only jsd's per-token values (through logsumexp) and what is summed from them may differ in the last bits
  assert.ok(tally.numbers - tally.exact <= 12, `${tally.numbers - tally.exact} numbers not bit for bit`);
});

test('kl-expected.ts is what reference/kl.ts computes', (t) => {
  const { SCORES: _scores, ...committed } = klExpected;
  const again: Tally = { numbers: 0, exact: 0, differences: [] };
  compare(generated.kl, committed, 'kl', again);
  assert.deepEqual(again.differences, []);
  assert.equal(again.numbers, 4 + 12 + 1);
  t.diagnostic(`${again.numbers} numbers, ${again.exact} bit for bit`);
});

test('a committed number off by 1e-12 of itself is caught', () => {
  const tally: Tally = { numbers: 0, exact: 0, differences: [] };
  const nudged = structuredClone(advantageExpected.TRAINER);
  nudged.ppo.adv[0][0] *= 1 + 1e-12;
  compare(generated.advantage.TRAINER, nudged, 'TRAINER', tally);
  assert.deepEqual(tally.differences, [
    `TRAINER.ppo.adv.0.0: generated ${generated.advantage.TRAINER.ppo.adv[0][0]}, committed ${nudged.ppo.adv[0][0]}`,
  ]);
});
