/**
 * The engine's memory figures on wasm (runtime/engine/backend/memory.ts): the peak of live tensors includes a tensor
 * that no longer exists, the wasm heap is the reserved figure and grows to hold what was allocated, and the perf/
 * metrics are those figures in GiB. Its own process: the tfjs backend is process-global.
 */
import assert from 'node:assert/strict';
import { totalmem } from 'node:os';
import { before, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { engineMemory, initBackend, memoryMetrics } from '../../../../runtime/engine/backend';

const MIB = 2 ** 20;

before(async () => {
  await initBackend({ prefer: 'wasm' });
});

test('the peak keeps a freed 32 MiB tensor; the wasm heap grew to hold it; no GPU figures on wasm', async () => {
  const before = engineMemory();
  assert.equal(before.backend, 'wasm');
  assert.equal(before.gpu, undefined);
  assert.ok((before.reservedBytes ?? 0) >= 16 * MIB, `heap ${before.reservedBytes}`);
  const big = tf.fill([8 * MIB], 1); // 32 MiB of float32, beyond the 16 MiB heap wasm starts with
  const sum = tf.sum(big);
  assert.equal((await sum.data())[0], 8 * MIB); // exact in float32 (below 2^24)
  sum.dispose();
  const during = engineMemory();
  big.dispose();
  const after = engineMemory();
  assert.ok(during.allocatedBytes >= 32 * MIB, `allocated ${during.allocatedBytes}`);
  assert.ok(after.allocatedBytes <= during.allocatedBytes - 32 * MIB, `freed: ${after.allocatedBytes}`);
  assert.ok(after.peakAllocatedBytes >= before.allocatedBytes + 32 * MIB, `peak ${after.peakAllocatedBytes}`);
  assert.ok((after.reservedBytes ?? 0) >= 32 * MIB, `heap ${after.reservedBytes}`);
  assert.ok(after.maxRssBytes >= after.reservedBytes!, 'the heap is resident');
  assert.ok(after.machineUsedBytes > 0 && after.machineUsedBytes <= totalmem());
});

test("perf/ metrics: veRL's three names and the peak RSS, in GiB", () => {
  const m = memoryMetrics();
  const e = engineMemory();
  assert.deepEqual(Object.keys(m), [
    'perf/max_memory_allocated_gb',
    'perf/max_memory_reserved_gb',
    'perf/cpu_memory_used_gb',
    'perf/max_rss_gb',
  ]);
  assert.equal(m['perf/max_memory_allocated_gb'], e.peakAllocatedBytes / 2 ** 30);
  assert.ok(m['perf/max_memory_allocated_gb'] >= 32 / 1024);
  assert.equal(m['perf/max_memory_reserved_gb'], e.peakReservedBytes! / 2 ** 30);
  assert.ok(Math.abs(m['perf/cpu_memory_used_gb'] - e.machineUsedBytes / 2 ** 30) < 0.5);
});
