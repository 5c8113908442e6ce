/** Rotary position tables (cos, sin) for every position, computed in float64 on the host. */
import * as tf from '@tensorflow/tfjs-core';
import type { ModelConfig } from './config';

export interface RopeTables {
  /** `[maxPositions, headDim / 2]`. */
  cos: tf.Tensor2D;
  sin: tf.Tensor2D;
}

/** inv_freq_i = θ^(−2i/d), then adjusted by the config's rope_scaling (linear, or Llama 3's frequency bands). */
function inverseFrequencies(c: ModelConfig): number[] {
  const half = c.headDim / 2;
  const inv = Array.from({ length: half }, (_, i) => 1 / Math.pow(c.ropeTheta, (2 * i) / c.headDim));
  const s = c.ropeScaling;
  if (s.type === 'linear') return inv.map((f) => f / s.factor);
  if (s.type === 'llama3') {
    const lowWavelen = s.originalMaxPositions / s.lowFreqFactor;
    const highWavelen = s.originalMaxPositions / s.highFreqFactor;
    return inv.map((f) => {
      const wavelen = (2 * Math.PI) / f;
      if (wavelen < highWavelen) return f;
      if (wavelen > lowWavelen) return f / s.factor;
      const smooth = (s.originalMaxPositions / wavelen - s.lowFreqFactor) / (s.highFreqFactor - s.lowFreqFactor);
      return (1 - smooth) * (f / s.factor) + smooth * f;
    });
  }
  return inv;
}

export function ropeTables(c: ModelConfig): RopeTables {
  const inv = inverseFrequencies(c);
  const half = inv.length;
  const cos = new Float32Array(c.maxPositions * half);
  const sin = new Float32Array(c.maxPositions * half);
  for (let p = 0; p < c.maxPositions; p++) {
    for (let i = 0; i < half; i++) {
      const angle = p * inv[i];
      cos[p * half + i] = Math.cos(angle);
      sin[p * half + i] = Math.sin(angle);
    }
  }
  return { cos: tf.tensor2d(cos, [c.maxPositions, half]), sin: tf.tensor2d(sin, [c.maxPositions, half]) };
}
