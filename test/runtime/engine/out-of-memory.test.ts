/**
 * The wasm backend's real failures when its heap runs out, captured from tfjs-backend-wasm in a child process (the
 * heap stays full afterwards), and the run error that explains them.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { explainOutOfMemory } from '../../../runtime/engine/backend/out-of-memory';

const ROOT = join(__dirname, '..', '..', '..');

/** Allocates tensors of 200 MB on wasm until tfjs fails; prints the failure's name and message. */
const FILL_THE_HEAP = `
const tf = require('@tensorflow/tfjs-core');
require('@tensorflow/tfjs-backend-wasm');
tf.setBackend('wasm').then(() => {
  const kept = [];
  try {
    for (let i = 0; i < 40; i++) kept.push(tf.zeros([50, 1000, 1000]));
    console.log(JSON.stringify({ name: 'none', message: 'no failure' }));
  } catch (e) {
    console.log(JSON.stringify({ name: e.name, message: e.message }));
  }
});
`;

test('the wasm heap running out is explained as memory, with what to lower, and the original text kept', () => {
  const r = spawnSync(process.execPath, ['-e', FILL_THE_HEAP], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const seen = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { name: string; message: string };
  assert.equal(seen.name, 'RuntimeError', r.stdout);
  const real = Object.assign(new Error(seen.message), { name: seen.name });
  const explained = explainOutOfMemory(real, 'wasm');
  assert.match(explained, /^the wasm backend most likely ran out of memory \(memory access out of bounds\)/);
  assert.match(explained, /at most 4 GiB/);
  assert.match(explained, /buffer\.batch_size/);
  // The same text from the explorer's worker thread arrives as the stack's text.
  assert.match(explainOutOfMemory(new Error(`RuntimeError: ${seen.message}\n    at wasm://`), 'wasm'), /ran out/);
  // Another backend's error, or another error, is left as it is.
  assert.equal(explainOutOfMemory(real, 'webgpu'), seen.message);
  assert.equal(
    explainOutOfMemory(new Error('the batch needs rolloutLogprobs'), 'wasm'),
    'the batch needs rolloutLogprobs',
  );
});

test('a tensor larger than a typed array may hold is explained too', () => {
  let caught: unknown;
  try {
    new Float32Array(2 ** 33);
  } catch (e) {
    caught = e;
  }
  assert.ok(caught instanceof RangeError);
  assert.match(explainOutOfMemory(caught, 'wasm (SIMD, OpenBLAS matmul)'), /most likely ran out of memory/);
});
