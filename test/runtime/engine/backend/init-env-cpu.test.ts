/** $TRINITY_WORKBENCH_BACKEND=cpu forces the cpu backend, over the caller's preference. Its own process. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { BACKEND_ENV, initBackend } from '../../../../runtime/engine/backend';

test('$TRINITY_WORKBENCH_BACKEND=cpu wins over prefer and starts cpu only', async () => {
  process.env[BACKEND_ENV] = ' CPU ';
  const logs: string[] = [];
  const info = await initBackend({ prefer: 'wasm', log: (m) => logs.push(m) });
  assert.equal(info.name, 'cpu');
  assert.equal(info.tfBackend, 'cpu');
  assert.equal(tf.getBackend(), 'cpu');
  assert.equal(info.threads, 1);
  assert.deepEqual(info.tried, [{ name: 'cpu', ok: true }]);
  assert.ok(info.gflops > 0);
  assert.equal(logs.length, 1);
  assert.match(
    logs[0],
    /^tfjs backend: cpu \(pure JavaScript, 1 thread\), [\d.]+ GFLOP\/s \(256³ matmul\) \[forced by \$TRINITY_WORKBENCH_BACKEND\]$/,
  );
});
