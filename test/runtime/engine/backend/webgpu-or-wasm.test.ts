/** `auto`'s webgpu-or-wasm choice as a function of the measured rates (the measuring is in doctor.test.ts). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pickWebgpuOrWasm } from '../../../../runtime/engine/backend';

test('a hardware adapter is picked only when its matmul beats wasm', () => {
  const faster = pickWebgpuOrWasm({ webgpu: 900, wasm: 45 });
  assert.equal(faster.pick, 'webgpu');
  assert.equal(faster.reason, "webgpu's matmul beats wasm's: webgpu 900.0 GFLOP/s, wasm 45.0 GFLOP/s (20.0×)");
  const slower = pickWebgpuOrWasm({ webgpu: 30, wasm: 45 });
  assert.equal(slower.pick, 'wasm');
  assert.equal(slower.reason, "webgpu's matmul does not beat wasm's: webgpu 30.0 GFLOP/s, wasm 45.0 GFLOP/s");
  assert.equal(pickWebgpuOrWasm({ webgpu: 45, wasm: 45 }).pick, 'wasm', 'a tie keeps wasm');
  assert.equal(pickWebgpuOrWasm({ webgpu: 45.001, wasm: 45 }).pick, 'webgpu');
});

test('a software adapter is never picked, whatever its rate', () => {
  const sw = 'the adapter is a fallback (software) adapter';
  const r = pickWebgpuOrWasm({ webgpu: 500, wasm: 40, software: sw });
  assert.equal(r.pick, 'wasm');
  assert.equal(r.reason, `auto skips it: ${sw} (webgpu 500.0 GFLOP/s, wasm 40.0 GFLOP/s)`);
  assert.equal(pickWebgpuOrWasm({ webgpu: 0.4, software: sw }).pick, 'wasm', 'not even when wasm did not start');
});

test('wasm not starting leaves webgpu; a webgpu rate of zero or NaN leaves wasm', () => {
  const r = pickWebgpuOrWasm({ webgpu: 3 });
  assert.equal(r.pick, 'webgpu');
  assert.equal(r.reason, 'wasm did not start (webgpu 3.0 GFLOP/s, wasm did not start)');
  for (const bad of [0, Number.NaN, Number.POSITIVE_INFINITY, -1])
    assert.equal(pickWebgpuOrWasm({ webgpu: bad, wasm: 10 }).pick, 'wasm', String(bad));
});
