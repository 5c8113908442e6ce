/**
 * The committed expected values of the advantage, KL and policy-loss tests are what the float64 reference
 * (reference/) computes from Trinity's formulas: same cases, same keys, every number equal. Advantage and KL-penalty
 * numbers are full float64: bit for bit where the arithmetic is sums, products and square roots (the reference sums
 * in PyTorch's order); numbers through exp/log may differ in the last bits, since PyTorch's vectorised exp and log
 * (SLEEF, within 1 ulp) are not the correctly rounded ones of Math.exp/Math.log: those agree within rtol 1e-13 +
 * atol 1e-15, ten times inside the tests' own float64 tolerance. Policy-loss and KL-loss numbers (losses, metrics,
 * gradients) are committed rounded to 10 significant digits, and the reference's, rounded the same way, equal them
 * exactly.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as advantageExpected from './advantage-expected';
import * as klExpected from './kl-expected';
import * as klLossExpected from './kl-loss-expected';
import * as policyLossExpected from './policy-loss-expected';
import { references } from './reference/generate';

interface Tally {
  numbers: number;
  exact: number;
  differences: string[];
}

/** Within float64's exp/log differences, or (`exact`) equal. */
function compare(generated: unknown, committed: unknown, path: string, tally: Tally, exact = false): void {
  if (typeof committed === 'number') {
    tally.numbers++;
    if (typeof generated !== 'number') return void tally.differences.push(`${path}: generated ${String(generated)}`);
    if (generated === committed) tally.exact++;
    else if (exact || !(Math.abs(generated - committed) <= 1e-15 + 1e-13 * Math.abs(committed)))
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
      exact,
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

test('policy-loss-expected.ts is what reference/policy-loss.ts computes, to 10 significant digits', (t) => {
  const tally: Tally = { numbers: 0, exact: 0, differences: [] };
  compare(generated.policyLoss, policyLossExpected, 'policyLoss', tally, true);
  assert.deepEqual(tally.differences, []);
  // 30 cases: a loss, 101 metrics in all, and a 3x4 gradient each (the two dpo cases 4x4)
  assert.equal(tally.numbers, 30 + 101 + 28 * 12 + 2 * 16);
  t.diagnostic(`${tally.numbers} numbers`);
});

test('kl-loss-expected.ts is what reference/kl.ts computes, to 10 significant digits', (t) => {
  const { KL_LOSS_COEF: _coef, ...committed } = klLossExpected;
  const tally: Tally = { numbers: 0, exact: 0, differences: [] };
  compare(generated.klLoss, committed, 'klLoss', tally, true);
  assert.deepEqual(tally.differences, []);
  assert.equal(tally.numbers, 12 * (2 + 12));
  t.diagnostic(`${tally.numbers} numbers`);
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
