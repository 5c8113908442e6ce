/**
 * initBackend() with `auto` (no $TRINITY_WORKBENCH_BACKEND): on a machine without tfjs-node(-gpu) or a WebGPU
 * adapter it picks wasm, measures a positive GFLOP/s, lists what it tried and why those failed; it is idempotent.
 * The tfjs backend is process-global, so this file is its own process.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import {
  BACKEND_ENV,
  BackendUnavailableError,
  currentBackend,
  initBackend,
  probeBackends,
  selfTest,
} from '../../../../runtime/engine/backend';

delete process.env[BACKEND_ENV];

describe('initBackend auto', () => {
  const logs: string[] = [];
  let first: Awaited<ReturnType<typeof initBackend>>;

  test('picks the first backend that starts and reports what it tried', async () => {
    first = await initBackend({ threads: 4, log: (m) => logs.push(m) });
    assert.equal(first.tfBackend, tf.getBackend());
    assert.ok(first.gflops > 0, `gflops ${first.gflops}`);
    assert.equal(first.tried[first.tried.length - 1].name, first.name);
    assert.equal(first.tried[first.tried.length - 1].ok, true);
    for (const t of first.tried.slice(0, -1)) {
      assert.equal(t.ok, false);
      assert.ok(t.reason && t.reason.length > 10, `${t.name} has a reason`);
    }
    assert.ok(
      logs.some((l) => l.startsWith(`tfjs backend: ${first.name}`) && /GFLOP\/s/.test(l)),
      logs.join('\n'),
    );
  });

  test('is wasm here, with tfjs-node-gpu, tfjs-node and webgpu tried first', async (t) => {
    const probes = await probeBackends();
    const better = probes.filter((p) => ['tensorflow-gpu', 'tensorflow', 'webgpu'].includes(p.name) && p.available);
    if (better.length > 0) {
      t.skip(`this machine offers ${better.map((p) => p.name).join(', ')}`);
      return;
    }
    assert.equal(first.name, 'wasm');
    assert.equal(first.tfBackend, 'wasm');
    assert.equal(first.threads, 1, 'stock wasm runs 1 thread whatever `threads` asks');
    assert.ok(
      logs.some((l) => /4 threads asked for, running 1/.test(l)),
      logs.join('\n'),
    );
    assert.deepEqual(
      first.tried.map((x) => x.name),
      ['tensorflow-gpu', 'tensorflow', 'webgpu', 'wasm'],
    );
    const reason = (name: string) => first.tried.find((x) => x.name === name)?.reason ?? '';
    assert.match(reason('tensorflow-gpu'), /^tfjs-node-gpu: .*storage\.googleapis\.com/);
    assert.match(reason('tensorflow'), /^tfjs-node: .*storage\.googleapis\.com/);
    assert.match(reason('webgpu'), /^webgpu: /);
    // Without an adapter webgpu leaves the global scope alone (no navigator, no GPU* constants).
    assert.equal((globalThis as { navigator?: { gpu?: unknown } }).navigator?.gpu, undefined);
    assert.equal((globalThis as { GPUBufferUsage?: unknown }).GPUBufferUsage, undefined);
    // Wasm's kernel gap is filled: UnsortedSegmentSum (the gather gradient) runs.
    const r = tf.unsortedSegmentSum(
      tf.tensor2d([
        [1, 2],
        [3, 4],
        [5, 6],
      ]),
      tf.tensor1d([1, 0, 1], 'int32'),
      2,
    );
    assert.deepEqual(r.arraySync(), [
      [3, 4],
      [6, 8],
    ]);
  });

  test('the chosen backend computes correctly (self-test against the host)', async () => {
    assert.equal(await selfTest(), null);
  });

  test('a second call returns the same info without initialising again', async () => {
    const n = logs.length;
    const again = await initBackend({ log: (m) => logs.push(m) });
    assert.equal(again, first);
    assert.equal(logs.length, n, 'nothing logged: no new measurement');
    assert.equal(currentBackend(), first);
    assert.equal(await initBackend({ prefer: first.name }), first);
  });

  test('asking afterwards for a different backend is an error, not a switch', async () => {
    await assert.rejects(initBackend({ prefer: first.name === 'cpu' ? 'wasm' : 'cpu' }), (e: unknown) => {
      assert.ok(e instanceof BackendUnavailableError);
      assert.match(e.message, /already initialised as `\w[\w-]*`/);
      return true;
    });
    assert.equal(tf.getBackend(), first.tfBackend);
  });

  test('an unknown preference is rejected', async () => {
    await assert.rejects(
      initBackend({ prefer: 'tpu' as never }),
      /unknown backend `tpu`; expected auto, tensorflow-gpu, tensorflow, webgpu, wasm, cpu/,
    );
  });
});
