/**
 * NumPy's `Generator.beta` and the draws under it, on the PCG64 port (numpy/random/src/distributions/
 * distributions.c: `random_beta` — Jöhnk's algorithm when both shapes are ≤ 1, else two gammas; `random_standard_gamma`
 * — Marsaglia & Tsang for shape > 1, exponential at 1, Johnk-style rejection below; the 256-layer ziggurats
 * `random_standard_normal` and `random_standard_exponential_zig`). Trinity's difficulty-based selector samples pass
 * rates with it (`rng.beta(alphas, betas)`).
 *
 * Not bit-exact: NumPy ships its ziggurat tables precomputed at higher precision; here they are built in float64 from
 * the same radii by Marsaglia & Tsang's recurrence and differ in their last bits (≤ 1e-13 relative). A draw is then
 * within about 1e-13 of NumPy's, and consumes the same raw numbers unless it lands within a few hundred units of 2^53 of
 * a layer's acceptance bound (about one draw in 10^13). Jöhnk's branch (both shapes ≤ 1, e.g. a fresh estimator's
 * Beta(1, 1)) uses no table and is exact.
 */

/** The bit generator calls the distributions make (PCG64's `next_uint64` and `next_double`). */
export interface BitGenerator {
  nextUint64(): bigint;
  /** 53 random bits in [0, 1). */
  nextDouble(): number;
}

const NOR_R = 3.6541528853610088;
const NOR_INV_R = 0.27366123732975828;
/** Area of each layer: r·f(r) + the tail beyond r, f(x) = exp(−x²/2). */
const NOR_AREA = 0.004928673233974655;
const EXP_R = 7.6971174701310497;
const EXP_AREA = (EXP_R + 1) * Math.exp(-EXP_R);

interface Ziggurat {
  /** Acceptance bound per layer, in units of the raw integer. */
  k: Float64Array;
  /** Raw integer → x scale per layer. */
  w: Float64Array;
  /** f at each layer's edge. */
  f: Float64Array;
}

function ziggurat(
  f: (x: number) => number,
  fInv: (y: number) => number,
  r: number,
  area: number,
  scale: number,
): Ziggurat {
  const k = new Float64Array(256);
  const w = new Float64Array(256);
  const fs = new Float64Array(256);
  const fr = f(r);
  const q = area / fr;
  k[0] = Math.floor((r / q) * scale);
  k[1] = 0;
  w[0] = q / scale;
  w[255] = r / scale;
  fs[0] = 1;
  fs[255] = fr;
  let x1 = r;
  for (let i = 254; i > 0; i--) {
    const x = fInv(area / x1 + f(x1));
    k[i + 1] = Math.floor((x / x1) * scale);
    w[i] = x / scale;
    fs[i] = f(x);
    x1 = x;
  }
  return { k, w, f: fs };
}

let normalTable: Ziggurat | undefined;
let expTable: Ziggurat | undefined;
// The normal draw uses 52 bits of magnitude; the exponential 53.
const normal = () =>
  (normalTable ??= ziggurat(
    (x) => Math.exp(-0.5 * x * x),
    (y) => Math.sqrt(-2 * Math.log(y)),
    NOR_R,
    NOR_AREA,
    2 ** 52,
  ));
const exponential = () =>
  (expTable ??= ziggurat(
    (x) => Math.exp(-x),
    (y) => -Math.log(y),
    EXP_R,
    EXP_AREA,
    2 ** 53,
  ));

/** `random_standard_normal`. */
export function standardNormal(bg: BitGenerator): number {
  const t = normal();
  for (;;) {
    let r = bg.nextUint64();
    const idx = Number(r & 0xffn);
    r >>= 8n;
    const negative = (r & 1n) === 1n;
    const rabsBits = (r >> 1n) & 0x000fffffffffffffn;
    const rabs = Number(rabsBits);
    let x = rabs * t.w[idx];
    if (negative) x = -x;
    if (rabs < t.k[idx]) return x;
    if (idx === 0) {
      for (;;) {
        const xx = -NOR_INV_R * Math.log(1.0 - bg.nextDouble());
        const yy = -Math.log(1.0 - bg.nextDouble());
        if (yy + yy > xx * xx) return ((rabsBits >> 8n) & 1n) === 1n ? -(NOR_R + xx) : NOR_R + xx;
      }
    }
    if ((t.f[idx - 1] - t.f[idx]) * bg.nextDouble() + t.f[idx] < Math.exp(-0.5 * x * x)) return x;
  }
}

/** `random_standard_exponential_zig`. */
export function standardExponential(bg: BitGenerator): number {
  const t = exponential();
  for (;;) {
    const r = bg.nextUint64() >> 3n;
    const idx = Number(r & 0xffn);
    const ri = Number(r >> 8n);
    const x = ri * t.w[idx];
    if (ri < t.k[idx]) return x;
    if (idx === 0) return EXP_R - Math.log(1.0 - bg.nextDouble());
    if ((t.f[idx - 1] - t.f[idx]) * bg.nextDouble() + t.f[idx] < Math.exp(-x)) return x;
  }
}

/** `random_standard_gamma`. */
export function standardGamma(bg: BitGenerator, shape: number): number {
  if (shape === 1) return standardExponential(bg);
  if (shape === 0) return 0;
  if (shape < 1) {
    for (;;) {
      const u = bg.nextDouble();
      const v = standardExponential(bg);
      if (u <= 1.0 - shape) {
        const x = Math.pow(u, 1 / shape);
        if (x <= v) return x;
      } else {
        const y = -Math.log((1 - u) / shape);
        const x = Math.pow(1.0 - shape + shape * y, 1 / shape);
        if (x <= v + y) return x;
      }
    }
  }
  const b = shape - 1 / 3;
  const c = 1 / Math.sqrt(9 * b);
  for (;;) {
    let x: number;
    let v: number;
    do {
      x = standardNormal(bg);
      v = 1.0 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const u = bg.nextDouble();
    if (u < 1.0 - 0.0331 * (x * x) * (x * x)) return b * v;
    if (Math.log(u) < 0.5 * x * x + b * (1 - v + Math.log(v))) return b * v;
  }
}

/** `random_beta`. */
export function beta(bg: BitGenerator, a: number, b: number): number {
  if (a <= 1 && b <= 1) {
    for (;;) {
      const u = bg.nextDouble();
      const v = bg.nextDouble();
      const x = Math.pow(u, 1 / a);
      const y = Math.pow(v, 1 / b);
      const xpy = x + y;
      if (xpy <= 1 && u + v > 0) {
        if (x > 0 && y > 0) return x / xpy;
        // One of them underflowed: the ratio in log space.
        let logX = Math.log(u) / a;
        let logY = Math.log(v) / b;
        const logM = Math.max(logX, logY);
        logX -= logM;
        logY -= logM;
        return Math.exp(logX - Math.log(Math.exp(logX) + Math.exp(logY)));
      }
    }
  }
  const ga = standardGamma(bg, a);
  const gb = standardGamma(bg, b);
  return ga / (ga + gb);
}
