/**
 * The README's main job: `examples/arithmetic/demo.mjs` (SFT warm-up then GRPO on a tiny model, through dist/cli.js)
 * must raise greedy eval accuracy over the SFT checkpoint by at least 10 points for each of seeds 1, 2 and 3.
 * The demo script itself exits 1 when a seed falls short; this test also reads its table.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { test } from 'node:test';

const ROOT = resolve(__dirname, '..', '..');

test('npm run demo: GRPO beats the SFT checkpoint by ≥ 10 points on seeds 1, 2, 3', { timeout: 20 * 60 * 1000 }, () => {
  const r = spawnSync(process.execPath, ['examples/arithmetic/demo.mjs', '--seeds', '1,2,3', '--quiet'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr.slice(-3000)}`);
  // npm test's set-up installs OpenBLAS and builds the addon, so the demo says it ran with the OpenBLAS matmul.
  assert.match(r.stdout, /^Backend: wasm \(SIMD, OpenBLAS matmul/m);
  const rows = r.stdout
    .split('\n')
    .map((l) => /^(\d+)\s+([\d.]+)%\s+([\d.]+)%\s+([+-][\d.]+) pts/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null);
  assert.deepEqual(
    rows.map((m) => m[1]),
    ['1', '2', '3'],
  );
  for (const m of rows) assert.ok(Number(m[3]) - Number(m[2]) >= 10, `seed ${m[1]}: ${m[2]}% -> ${m[3]}%`);
});
