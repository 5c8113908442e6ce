/**
 * Gradient checking against central finite differences, in float32, on whatever tfjs backend is active.
 *
 * A function f: inputs -> tensor y is reduced to the scalar L = Σ r ⊙ y with a fixed, seeded random cotangent r
 * (so every output element and the whole Jacobian take part, not just a sum that may cancel). The analytic side is
 * tfjs autodiff (`tf.grads` for plain inputs, `tf.variableGrads` for model weights); the numeric side perturbs one
 * input coordinate at a time by ±h and computes
 *
 *     numeric_i = Σ_j r_j · (y_j(x + h e_i) − y_j(x − h e_i)) / (x_i⁺ − x_i⁻)
 *
 * where y is read back as float32 but the difference and the projection onto r are done in float64 on the host
 * (the subtraction of two float32 *scalars* L(x±h) would lose most digits to cancellation), and x_i⁺ − x_i⁻ is the
 * step actually taken after rounding x_i ± h to float32.
 *
 * Error budget for float32 with h = 1e-2 on O(1) inputs: truncation h²·|f'''|/6 ≈ 2e-5 per unit third derivative,
 * rounding ≈ ε₃₂·|y|·√(#outputs)/h ≈ 6e-8·10/2e-2 ≈ 3e-5. A coordinate passes when
 *
 *     |analytic − numeric| ≤ atol + rtol · |numeric|
 *
 * with the defaults atol = 2e-3, rtol = 2e-2 ({@link F32_TOLERANCE}): about 50× the expected float32 noise, and far
 * below what a wrong gradient (a dropped term, a missing transpose, a wrong sign) produces on O(1) gradients. To keep
 * a check from passing vacuously (all gradients ≈ 0), it also requires the sampled numeric gradient to reach
 * `minScale` (default 20·atol) somewhere. For deep compositions (whole models), whose truncation error at h = 1e-2
 * can reach 1e-4–1e-3 while a smaller h drowns in float32 rounding, `richardson: true` combines the differences at h
 * and 2h to cancel the h² term.
 *
 * Every read of the device is an awaited `data()`, never `dataSync()`, so the same checks run on webgpu (which
 * cannot read synchronously in Node) as on wasm and cpu.
 */
import assert from 'node:assert/strict';
import * as tf from '@tensorflow/tfjs-core';
import { Rng } from '../../runtime/engine/random';

export interface Tolerance {
  atol: number;
  rtol: number;
}

/** Default float32 tolerances (see the header comment for the error budget they cover). */
export const F32_TOLERANCE: Tolerance = { atol: 2e-3, rtol: 2e-2 };

/** Default finite-difference step for O(1) inputs in float32. */
export const F32_STEP = 1e-2;

export interface GradCheckOptions extends Partial<Tolerance> {
  /** Finite-difference step (absolute). Default {@link F32_STEP}. */
  h?: number;
  /** Coordinates checked per input at most; bigger inputs are sampled (seeded). Default 24. */
  maxCoords?: number;
  /** Seed for the cotangent and the coordinate sample. Default 1. */
  seed?: number;
  /** The sampled |numeric| must reach this somewhere, so the check is not vacuous. Default 20·atol. */
  minScale?: number;
  /**
   * Combine the central differences at h and 2h as (4·D(h) − D(2h))/3 (Richardson extrapolation, truncation
   * O(h⁴) instead of O(h²)) at twice the evaluations. For deep compositions (whole models) whose third
   * derivatives are large. Default false.
   */
  richardson?: boolean;
}

export interface CoordResult {
  /** Which input (or variable) this coordinate belongs to. */
  input: string;
  /** Flat index into that input. */
  index: number;
  analytic: number;
  numeric: number;
  /** |analytic − numeric|. */
  err: number;
  /** atol + rtol·|numeric|. */
  bound: number;
}

export interface GradCheckReport {
  name: string;
  coords: CoordResult[];
  /** The coordinate with the largest err/bound. */
  worst: CoordResult;
  /** max err/bound over all coordinates (≤ 1 passes). */
  maxRatio: number;
  /** max |numeric| over the sampled coordinates. */
  maxAbsNumeric: number;
  /** max |analytic − numeric| / max |numeric| over the sampled coordinates. */
  relErr: number;
  ok: boolean;
  /** Why it failed, in words (empty when ok). */
  problems: string[];
}

/** A seeded standard-normal tensor times `scale` (plus `shift`). */
export function randn(shape: number[], rng: Rng, scale = 1, shift = 0): tf.Tensor {
  const n = shape.reduce((a, b) => a * b, 1);
  const v = new Float32Array(n);
  for (let i = 0; i < n; i++) v[i] = shift + scale * rng.normal();
  return tf.tensor(v, shape, 'float32');
}

/** `k` distinct indices of [0, n) (all of them when n ≤ k), sorted; always includes the first and the last. */
export function sampleIndices(n: number, k: number, rng: Rng): number[] {
  if (n <= k) return Array.from({ length: n }, (_, i) => i);
  const picked = new Set<number>([0, n - 1]);
  while (picked.size < k) picked.add(Math.floor(rng.uniform() * n));
  return [...picked].sort((a, b) => a - b);
}

interface Target {
  name: string;
  size: number;
  /** Current values (float32). */
  values: Float32Array;
  /** Makes the target hold `values` (a perturbed copy, or the original). */
  set(values: Float32Array): void;
}

/**
 * The numeric side shared by the two entry points: for each sampled coordinate of each target, two evaluations of
 * `evalOutput` (with the coordinate at x ± h), projected onto `r` in float64.
 */
async function numericGradients(
  targets: Target[],
  evalOutput: () => Promise<Float32Array>,
  r: Float32Array,
  analytic: Float32Array[],
  opts: GradCheckOptions,
  name: string,
): Promise<GradCheckReport> {
  const h = opts.h ?? F32_STEP;
  const atol = opts.atol ?? F32_TOLERANCE.atol;
  const rtol = opts.rtol ?? F32_TOLERANCE.rtol;
  const minScale = opts.minScale ?? 20 * atol;
  const richardson = opts.richardson ?? false;
  const rng = new Rng((opts.seed ?? 1) * 7919 + 17);
  const coords: CoordResult[] = [];
  for (const [ti, t] of targets.entries()) {
    const idx = sampleIndices(t.size, opts.maxCoords ?? 24, rng);
    const work = Float32Array.from(t.values);
    // D(s) = Σ_j r_j (y_j(x + s e_i) − y_j(x − s e_i)) / (actual step), in float64.
    const central = async (i: number, x: number, s: number): Promise<number> => {
      const xp = Math.fround(x + s);
      const xm = Math.fround(x - s);
      work[i] = xp;
      t.set(work);
      const yp = await evalOutput();
      work[i] = xm;
      t.set(work);
      const ym = await evalOutput();
      work[i] = x;
      let acc = 0;
      for (let j = 0; j < r.length; j++) acc += r[j] * (yp[j] - ym[j]);
      return acc / (xp - xm);
    };
    for (const i of idx) {
      const x = t.values[i];
      // Richardson: D(h) = g + c·h² + O(h⁴), so (4·D(h) − D(2h))/3 = g + O(h⁴).
      const numeric = richardson
        ? (4 * (await central(i, x, h)) - (await central(i, x, 2 * h))) / 3
        : await central(i, x, h);
      const a = analytic[ti][i];
      const err = Math.abs(a - numeric);
      coords.push({ input: t.name, index: i, analytic: a, numeric, err, bound: atol + rtol * Math.abs(numeric) });
    }
    t.set(t.values);
  }
  let worst = coords[0];
  let maxRatio = 0;
  let maxAbsNumeric = 0;
  let maxErr = 0;
  const problems: string[] = [];
  for (const c of coords) {
    const ratio = Number.isFinite(c.err) ? c.err / c.bound : Infinity;
    if (ratio > maxRatio || worst === undefined) {
      maxRatio = ratio;
      worst = c;
    }
    maxAbsNumeric = Math.max(maxAbsNumeric, Math.abs(c.numeric));
    maxErr = Math.max(maxErr, c.err);
    if (!(ratio <= 1)) {
      problems.push(
        `${c.input}[${c.index}]: analytic ${fmt(c.analytic)} vs numeric ${fmt(c.numeric)} (|Δ| ${fmt(c.err)} > ${fmt(c.bound)})`,
      );
    }
  }
  if (!(maxAbsNumeric >= minScale)) {
    problems.push(`vacuous: the largest sampled numeric gradient is ${fmt(maxAbsNumeric)} < ${fmt(minScale)}`);
  }
  return {
    name,
    coords,
    worst,
    maxRatio,
    maxAbsNumeric,
    relErr: maxAbsNumeric > 0 ? maxErr / maxAbsNumeric : Infinity,
    ok: problems.length === 0,
    problems,
  };
}

function fmt(x: number): string {
  return Number.isFinite(x) ? x.toExponential(3) : String(x);
}

function cotangent(shape: number[], seed: number): Float32Array {
  const rng = new Rng(seed * 104729 + 3);
  const n = shape.reduce((a, b) => a * b, 1);
  const r = new Float32Array(n);
  for (let i = 0; i < n; i++) r[i] = rng.normal();
  return r;
}

/** Reads tensors back (awaited, so webgpu can) and disposes them. */
async function readAndDispose(ts: tf.Tensor[]): Promise<Float32Array[]> {
  try {
    return (await Promise.all(ts.map((t) => t.data()))) as Float32Array[];
  } finally {
    tf.dispose(ts);
  }
}

/** f's output read back, with its intermediates disposed. */
async function evaluate(f: () => tf.Tensor): Promise<Float32Array> {
  return (await readAndDispose([tf.tidy(f)]))[0];
}

/**
 * Checks d(Σ r ⊙ f(inputs))/d inputs[k] for every k in `wrt` (default: all inputs) against central differences.
 * Inputs are float32 tensors; integer arguments (ids, targets) belong in f's closure. Nothing is disposed that the
 * caller passed in.
 */
export async function gradCheck(
  name: string,
  f: (...xs: tf.Tensor[]) => tf.Tensor,
  inputs: tf.Tensor[],
  opts: GradCheckOptions & { wrt?: number[]; inputNames?: string[] } = {},
): Promise<GradCheckReport> {
  const wrt = opts.wrt ?? inputs.map((_, i) => i);
  const seed = opts.seed ?? 1;
  const outShape = tf.tidy(() => f(...inputs).shape);
  const r = cotangent(outShape, seed);
  const analytic = await readAndDispose(
    tf.tidy(() => {
      const rt = tf.tensor(r, outShape, 'float32');
      const g = tf.grads((...xs: tf.Tensor[]) => {
        const all = inputs.slice();
        wrt.forEach((k, j) => (all[k] = xs[j]));
        return tf.sum(tf.mul(f(...all), rt));
      });
      return g(wrt.map((k) => inputs[k]));
    }),
  );
  const current = inputs.slice();
  const targets: Target[] = [];
  for (const k of wrt) {
    targets.push({
      name: opts.inputNames?.[k] ?? `x${k}`,
      size: inputs[k].size,
      values: (await inputs[k].data()) as Float32Array,
      set(values: Float32Array) {
        if (current[k] !== inputs[k]) current[k].dispose();
        current[k] = values === this.values ? inputs[k] : tf.tensor(values, inputs[k].shape, 'float32');
      },
    });
  }
  return numericGradients(targets, () => evaluate(() => f(...current)), r, analytic, opts, name);
}

/**
 * Checks d(Σ r ⊙ f())/d v for model weights: the analytic side by `tf.variableGrads`, the numeric side by
 * `variable.assign` of a copy with one entry moved by ±h (restored afterwards).
 */
export async function gradCheckVariables(
  name: string,
  f: () => tf.Tensor,
  vars: { name: string; variable: tf.Variable }[],
  opts: GradCheckOptions = {},
): Promise<GradCheckReport> {
  const seed = opts.seed ?? 1;
  const outShape = tf.tidy(() => f().shape);
  const r = cotangent(outShape, seed);
  const analytic = await readAndDispose(
    tf.tidy(() => {
      const rt = tf.tensor(r, outShape, 'float32');
      const { value, grads } = tf.variableGrads(
        () => tf.sum(tf.mul(f(), rt)) as tf.Scalar,
        vars.map((v) => v.variable),
      );
      value.dispose();
      return vars.map((v) => grads[v.variable.name]);
    }),
  );
  const targets: Target[] = [];
  for (const { name: vname, variable } of vars) {
    targets.push({
      name: vname,
      size: variable.size,
      values: (await variable.data()) as Float32Array,
      set(values: Float32Array) {
        tf.tidy(() => variable.assign(tf.tensor(values, variable.shape, 'float32')));
      },
    });
  }
  return numericGradients(targets, () => evaluate(f), r, analytic, opts, name);
}

/** One line for test logs: how close the worst coordinate came to its bound. */
export function describeReport(rep: GradCheckReport): string {
  const w = rep.worst;
  return (
    `${rep.name}: ${rep.coords.length} coords, worst ${w.input}[${w.index}] analytic ${fmt(w.analytic)} numeric ${fmt(w.numeric)} ` +
    `(err/bound ${rep.maxRatio.toFixed(3)}), max|Δ|/max|g| ${fmt(rep.relErr)}, max|g| ${fmt(rep.maxAbsNumeric)}`
  );
}

/** Fails with every offending coordinate when the report is not ok. */
export function assertGradCheck(rep: GradCheckReport): void {
  assert.ok(
    rep.ok,
    `${rep.name}: gradient check failed\n  ${rep.problems.slice(0, 12).join('\n  ')}${rep.problems.length > 12 ? `\n  … ${rep.problems.length - 12} more` : ''}`,
  );
}
