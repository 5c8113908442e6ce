/** Measurements on the active tfjs backend: a matmul throughput figure and a correctness self-test. */
import * as tf from '@tensorflow/tfjs-core';

/**
 * Float32 `n×n · n×n` matmul throughput of the active backend in GFLOP/s (2n³ over the median product's time),
 * after one warm-up product. Repeats while under `targetMs` (at least once), so the whole measurement stays well
 * under 300 ms even on the pure-JS cpu backend (30–60 ms per 256³ product). Each sample queues `batch` products
 * and reads only the last: on a GPU one read's round trip then does not count as compute time (as in training,
 * where kernels queue); on wasm and cpu, which compute as they are called, the figure is the same for any batch.
 */
export async function measureMatmulGflops(n = 256, targetMs = 80, batch = 1): Promise<number> {
  const a = tf.tidy(() => tf.randomUniform([n, n], -1, 1, 'float32', 1));
  const b = tf.tidy(() => tf.randomUniform([n, n], -1, 1, 'float32', 2));
  try {
    const once = async (): Promise<void> => {
      const cs = Array.from({ length: batch }, () => tf.matMul(a, b));
      try {
        await cs[cs.length - 1].data();
      } finally {
        for (const c of cs) c.dispose();
      }
    };
    await once();
    const times: number[] = [];
    const t0 = performance.now();
    do {
      const t = performance.now();
      await once();
      times.push((performance.now() - t) / batch);
    } while (performance.now() - t0 < targetMs && times.length < 50);
    // The median product: this VM-class machine is noisy, and a neighbour's burst should not set the figure.
    times.sort((x, y) => x - y);
    const mid = times.length >> 1;
    const ms = times.length % 2 ? times[mid] : (times[mid - 1] + times[mid]) / 2;
    return (2 * n ** 3) / (ms / 1000) / 1e9;
  } finally {
    a.dispose();
    b.dispose();
  }
}

/**
 * Runs a 48×40·40×56 matmul plus a softmax and a sum on the active backend and compares them with the same
 * computed on the host. Returns null when they agree (relative error ≤ 1e-3), else what went wrong. For backends
 * that can start yet compute nonsense (a GPU driver that accepts shaders and returns zeros).
 */
export async function selfTest(): Promise<string | null> {
  const [m, k, n] = [48, 40, 56];
  const av = Float32Array.from({ length: m * k }, (_, i) => ((i * 7919) % 13) / 13 - 0.5);
  const bv = Float32Array.from({ length: k * n }, (_, i) => ((i * 104729) % 17) / 17 - 0.5);
  const want = new Float64Array(m * n);
  for (let i = 0; i < m; i++)
    for (let j = 0; j < n; j++) {
      let s = 0;
      for (let p = 0; p < k; p++) s += av[i * k + p] * bv[p * n + j];
      want[i * n + j] = s;
    }
  const wantRowSoftmaxSum = m; // each softmax row sums to 1
  let got: Float32Array;
  let softSum: number;
  try {
    const [c, s] = tf.tidy(() => {
      const prod = tf.matMul(tf.tensor2d(av, [m, k]), tf.tensor2d(bv, [k, n]));
      return [prod, tf.sum(tf.softmax(prod))];
    });
    got = (await c.data()) as Float32Array;
    softSum = (await s.data())[0];
    c.dispose();
    s.dispose();
  } catch (e) {
    return `self-test failed: ${e instanceof Error ? e.message : String(e)}`;
  }
  let worst = 0;
  for (let i = 0; i < want.length; i++)
    worst = Math.max(worst, Math.abs(got[i] - want[i]) / Math.max(1, Math.abs(want[i])));
  if (!(worst <= 1e-3))
    return `self-test: matmul result differs from the host's by ${worst.toExponential(2)} (relative)`;
  if (!(Math.abs(softSum - wantRowSoftmaxSum) <= 1e-3 * m))
    return `self-test: softmax rows sum to ${softSum}, expected ${wantRowSoftmaxSum}`;
  return null;
}
