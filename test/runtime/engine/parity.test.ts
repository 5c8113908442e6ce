/**
 * Logits parity with PyTorch on the cpu backend: the cases of test/helpers/logits-parity.ts (the fixtures, models and
 * the 1e-4-relative bound are described there); webgpu-parity.test.ts runs the same cases on webgpu.
 */
import { before, describe } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { describeLogitsParity } from '../../helpers/logits-parity';

before(async () => {
  await tf.setBackend('cpu');
});

describe('logits parity with PyTorch on cpu (float64 reference, 1e-4 relative)', () => {
  describeLogitsParity();
});
