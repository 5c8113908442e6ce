/**
 * The wasm backend's real failures when its heap runs out, captured from tfjs-backend-wasm and from the native
 * matmul addon in child processes (the heap stays full afterwards), and the run error that explains them.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { explainOutOfMemory } from '../../../runtime/engine/backend/out-of-memory';

const ROOT = join(__dirname, '..', '..', '..');

/**
 * Allocates tensors of 200 MB on wasm until tfjs fails; prints the failure's name and message. Every tensor is written
 * from one JavaScript array (tf.zeros would make a new 200 MB array for each: half the test's time in page faults).
 */
const FILL_THE_HEAP = `
const tf = require('@tensorflow/tfjs-core');
require('@tensorflow/tfjs-backend-wasm');
tf.setBackend('wasm').then(() => {
  const kept = [];
  const zeros = new Float32Array(50 * 1000 * 1000);
  try {
    for (let i = 0; i < 40; i++) kept.push(tf.tensor(zeros, [50, 1000, 1000]));
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

/**
 * Fills 400 MB of the wasm heap, then asks the OpenBLAS matmul kernel for a 3.9 GB product: the heap cannot grow past
 * 4 GiB, so tfjs' malloc answers 0 and the addon finds the output outside the heap (before computing anything).
 */
const OVERFLOW_THE_ADDON = `
const tf = require('@tensorflow/tfjs-core');
require('@tensorflow/tfjs-backend-wasm');
const { installNativeMatmul } = require('./runtime/engine/backend/native-matmul');
tf.setBackend('wasm').then(() => {
  const installed = installNativeMatmul().installed;
  const kept = [];
  const zeros = new Float32Array(50 * 1000 * 1000);
  for (let i = 0; i < 2; i++) kept.push(tf.tensor(zeros, [50, 1000, 1000]));
  try {
    tf.matMul(tf.ones([32768, 1]), tf.ones([1, 30000]));
    console.log(JSON.stringify({ installed, name: 'none', message: 'no failure' }));
  } catch (e) {
    console.log(JSON.stringify({ installed, name: e.name, message: e.message }));
  }
});
`;

test("the native addon's kernels finding a tensor outside the full heap are explained the same way", () => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', '-e', OVERFLOW_THE_ADDON], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const seen = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { installed: boolean; name: string; message: string };
  assert.ok(seen.installed, 'the OpenBLAS addon is built (npm run build:native)');
  assert.deepEqual([seen.name, seen.message], ['RangeError', 'blas_matmul: an operand lies outside the heap']);
  const explained = explainOutOfMemory(Object.assign(new RangeError(seen.message)), 'wasm (SIMD, OpenBLAS matmul)');
  assert.match(
    explained,
    /^the wasm backend most likely ran out of memory \(blas_matmul: an operand lies outside the heap\): WebAssembly gives it one heap of at most 4 GiB/,
  );
  assert.match(explained, /buffer\.batch_size .*max_model_len \/ max_response_tokens/);
  // The fused kernels name themselves (train_kernels.c operand(), decode_step.c): the trainer step's failure as it
  // arrived from the explorer's worker thread, as the stack's text.
  for (const m of [
    'RangeError: blas_matmul: maskedSoftmax: an operand lies outside the heap\n    at maskedSoftmax (train-kernels.ts)',
    'blas_matmul: decodeStep: a layer operand is missing or lies outside the heap',
  ])
    assert.match(explainOutOfMemory(new Error(m), 'wasm'), /ran out of memory .*at most 4 GiB/s);
  // A native kernel's own scratch allocation failing is the machine's memory.
  assert.match(
    explainOutOfMemory(new Error('blas_matmul: rmsNormGrad: out of memory'), 'wasm'),
    /ran out of memory \(blas_matmul: rmsNormGrad: out of memory\): the machine's memory/,
  );
  // The addon's other range errors are bad arguments, not memory.
  const bad = 'blas_matmul: tokenLogProbs: a target is outside the vocabulary';
  assert.equal(explainOutOfMemory(new RangeError(bad), 'wasm'), bad);
});
