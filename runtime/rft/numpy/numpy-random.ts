/**
 * The few NumPy random calls Trinity's data selectors make, bit for bit: `np.random.default_rng(seed)` (SeedSequence
 * → PCG64), `Generator.permutation(n)`, `Generator.shuffle(list)` and `Generator.choice(n, k, replace=False)`.
 * Trinity seeds these per epoch / per batch (trinity/buffer/selector/selector.py, trinity/buffer/task_scheduler.py),
 * so matching NumPy means a `shuffle` taskset visits its rows in the same order as Trinity does.
 *
 * Sources (NumPy 2.x): numpy/random/bit_generator.pyx (SeedSequence), numpy/random/_pcg64.pyx and
 * src/pcg64/pcg64.h (PCG64 XSL-RR 128/64, buffered 32-bit draws), src/distributions/distributions.c
 * (`random_interval`, `random_bounded_uint64` → Lemire), numpy/random/_generator.pyx (`shuffle`, `choice`).
 * `beta` (the difficulty-based selector's sampled pass rates) is in numpy-distributions.ts.
 */
import { beta } from './numpy-distributions';

const M32 = 0xffffffffn;
const M64 = (1n << 64n) - 1n;
const M128 = (1n << 128n) - 1n;
const PCG_MULT = (2549297995355413924n << 64n) + 4865540595714422341n;

// --- SeedSequence -------------------------------------------------------------------------------------------

const INIT_A = 0x43b0d7e5;
const MULT_A = 0x931e8875;
const INIT_B = 0x8b51f9dd;
const MULT_B = 0x58f38ded;
const MIX_MULT_L = 0xca01f9dd;
const MIX_MULT_R = 0x4973f715;
const POOL_SIZE = 4;

const mul32 = (a: number, b: number) => Math.imul(a, b) >>> 0;

/** A non-negative integer seed as NumPy's `_int_to_uint32_array`: little-endian 32-bit words, `[0]` for 0. */
function seedWords(seed: number | bigint): number[] {
  let n = BigInt(seed);
  if (n < 0n) throw new RangeError(`numpy seeds must be non-negative, got ${seed}`);
  if (n === 0n) return [0];
  const out: number[] = [];
  while (n > 0n) {
    out.push(Number(n & M32));
    n >>= 32n;
  }
  return out;
}

/** `SeedSequence(seed).generate_state(nWords, uint32)`. */
export function seedSequenceState(seed: number | bigint, nWords: number): number[] {
  const entropy = seedWords(seed);
  let hashConst = INIT_A;
  const hashmix = (value: number): number => {
    value = (value ^ hashConst) >>> 0;
    hashConst = mul32(hashConst, MULT_A);
    value = mul32(value, hashConst);
    return (value ^ (value >>> 16)) >>> 0;
  };
  const mix = (x: number, y: number): number => {
    let r = (mul32(MIX_MULT_L, x) - mul32(MIX_MULT_R, y)) >>> 0;
    r = (r ^ (r >>> 16)) >>> 0;
    return r;
  };
  const pool: number[] = [];
  for (let i = 0; i < POOL_SIZE; i++) pool.push(hashmix(i < entropy.length ? entropy[i] : 0));
  for (let src = 0; src < POOL_SIZE; src++) {
    for (let dst = 0; dst < POOL_SIZE; dst++) if (src !== dst) pool[dst] = mix(pool[dst], hashmix(pool[src]));
  }
  for (let src = POOL_SIZE; src < entropy.length; src++) {
    for (let dst = 0; dst < POOL_SIZE; dst++) pool[dst] = mix(pool[dst], hashmix(entropy[src]));
  }
  let hc = INIT_B;
  const out: number[] = [];
  for (let i = 0; i < nWords; i++) {
    let v = (pool[i % POOL_SIZE] ^ hc) >>> 0;
    hc = mul32(hc, MULT_B);
    v = mul32(v, hc);
    out.push((v ^ (v >>> 16)) >>> 0);
  }
  return out;
}

// --- PCG64 --------------------------------------------------------------------------------------------------

export class Pcg64 {
  private state: bigint;
  private readonly inc: bigint;
  private hasUint32 = false;
  private uinteger = 0;

  /** As `PCG64(SeedSequence(seed))`. */
  constructor(seed: number | bigint) {
    const w = seedSequenceState(seed, 8).map(BigInt);
    const u64 = (i: number) => w[2 * i] | (w[2 * i + 1] << 32n);
    const initstate = (u64(0) << 64n) | u64(1);
    const initseq = (u64(2) << 64n) | u64(3);
    this.inc = ((initseq << 1n) | 1n) & M128;
    this.state = 0n;
    this.step();
    this.state = (this.state + initstate) & M128;
    this.step();
  }

  private step(): void {
    this.state = (this.state * PCG_MULT + this.inc) & M128;
  }

  nextUint64(): bigint {
    this.step();
    const hi = this.state >> 64n;
    const lo = this.state & M64;
    const rot = Number(this.state >> 122n);
    const x = hi ^ lo;
    return rot === 0 ? x : ((x >> BigInt(rot)) | (x << BigInt(64 - rot))) & M64;
  }

  nextUint32(): number {
    if (this.hasUint32) {
      this.hasUint32 = false;
      return this.uinteger;
    }
    const next = this.nextUint64();
    this.hasUint32 = true;
    this.uinteger = Number(next >> 32n);
    return Number(next & M32);
  }

  /** `next_double`: the top 53 bits of a 64-bit draw, in [0, 1). */
  nextDouble(): number {
    return Number(this.nextUint64() >> 11n) / 9007199254740992;
  }
}

/**
 * NumPy's masked rejection sampling of a value in [0, max] (max < 2^32) from 32-bit draws: `random_interval`
 * (what `shuffle`/`permutation` use) and the legacy generator's bounded integers.
 */
export function maskedInterval(max: number, nextUint32: () => number): number {
  if (max === 0) return 0;
  if (max > 0xffffffff) throw new RangeError('random_interval: ranges over 2^32 are not ported');
  let mask = max;
  mask |= mask >>> 1;
  mask |= mask >>> 2;
  mask |= mask >>> 4;
  mask |= mask >>> 8;
  mask |= mask >>> 16;
  mask >>>= 0;
  let v: number;
  do v = (nextUint32() & mask) >>> 0;
  while (v > max);
  return v;
}

function randomInterval(bg: Pcg64, max: number): number {
  return maskedInterval(max, () => bg.nextUint32());
}

/** `random_bounded_uint64(0, rng, 0, use_masked=False)` for rng < 2^32: Lemire's multiply-and-reject. */
function boundedLemire(bg: Pcg64, rng: number): number {
  if (rng === 0) return 0;
  if (rng > 0xffffffff) throw new RangeError('bounded draws over 2^32 are not ported');
  if (rng === 0xffffffff) return bg.nextUint32();
  const excl = BigInt(rng + 1);
  let m = BigInt(bg.nextUint32()) * excl;
  let leftover = Number(m & M32);
  if (leftover < rng + 1) {
    const threshold = (0xffffffff - rng) % (rng + 1);
    while (leftover < threshold) {
      m = BigInt(bg.nextUint32()) * excl;
      leftover = Number(m & M32);
    }
  }
  return Number(m >> 32n);
}

// --- Generator ----------------------------------------------------------------------------------------------

/** `np.random.default_rng(seed)` with the methods Trinity's selectors call. */
export class NumpyGenerator {
  private readonly bg: Pcg64;
  constructor(seed: number | bigint) {
    this.bg = new Pcg64(seed);
  }

  /** `shuffle(x)` in place (ndarray fast path and list path draw the same numbers). */
  shuffle<T>(x: T[]): T[] {
    for (let i = x.length - 1; i >= 1; i--) {
      const j = randomInterval(this.bg, i);
      const t = x[i];
      x[i] = x[j];
      x[j] = t;
    }
    return x;
  }

  /** `permutation(n)`. */
  permutation(n: number): number[] {
    return this.shuffle(Array.from({ length: n }, (_, i) => i));
  }

  /** `choice(pop, size, replace=False)` (shuffle=True). */
  choiceWithoutReplacement(pop: number, size: number): number[] {
    if (size > pop) throw new RangeError("Cannot take a larger sample than population when 'replace=False'");
    if (pop > 10000 && size > Math.floor(pop / 50)) {
      const idx = Array.from({ length: pop }, (_, i) => i);
      this.shuffleInt(idx, pop, Math.max(pop - size, 1));
      return idx.slice(pop - size);
    }
    // Floyd's algorithm with an open-addressing set, then a shuffle of the result.
    const out: number[] = new Array(size);
    if (size === 0) return out;
    let mask = Math.floor(1.2 * size);
    mask |= mask >>> 1;
    mask |= mask >>> 2;
    mask |= mask >>> 4;
    mask |= mask >>> 8;
    mask |= mask >>> 16;
    const set = new Array<number>(mask + 1).fill(-1);
    for (let j = pop - size; j < pop; j++) {
      const val = boundedLemire(this.bg, j);
      let loc = val & mask;
      while (set[loc] !== -1 && set[loc] !== val) loc = (loc + 1) & mask;
      if (set[loc] === -1) {
        set[loc] = val;
        out[j - pop + size] = val;
      } else {
        loc = j & mask;
        while (set[loc] !== -1) loc = (loc + 1) & mask;
        set[loc] = j;
        out[j - pop + size] = j;
      }
    }
    this.shuffleInt(out, size, 1);
    return out;
  }

  /** `random()`: one double in [0, 1). */
  random(): number {
    return this.bg.nextDouble();
  }

  /**
   * `integers(low, high)` for one int64 (endpoint excluded): `_rand_int64` draws `random_bounded_uint64_fill`
   * with rng = high − 1 − low, Lemire's method on 32-bit draws for ranges below 2^32.
   */
  integers(low: number, high: number): number {
    if (!Number.isInteger(low) || !Number.isInteger(high)) throw new RangeError('integers: bounds must be integers');
    if (high <= low) throw new RangeError('high <= low');
    return low + boundedLemire(this.bg, high - 1 - low);
  }

  /**
   * `choice(a, count, replace=True, p=p)` as indices into `a`: the cumulative sum of `p` divided by its last entry,
   * one `random()` per draw, then `searchsorted(side='right')`. Refuses what NumPy refuses (negative entries, a sum
   * off 1 by more than √eps).
   */
  choiceWeighted(p: readonly number[], count: number): number[] {
    if (p.length === 0) throw new RangeError("'a' cannot be empty unless no samples are taken");
    if (p.some((x) => !(x >= 0))) throw new RangeError('probabilities are not non-negative');
    const cdf: number[] = [];
    let total = 0;
    for (const x of p) cdf.push((total += x));
    if (Math.abs(kahanSum(p) - 1) > Math.sqrt(Number.EPSILON)) throw new RangeError('probabilities do not sum to 1');
    const last = cdf[cdf.length - 1];
    for (let i = 0; i < cdf.length; i++) cdf[i] /= last;
    const out: number[] = [];
    for (let k = 0; k < count; k++) {
      const u = this.bg.nextDouble();
      let idx = 0;
      while (idx < cdf.length && cdf[idx] <= u) idx++;
      out.push(idx);
    }
    return out;
  }

  /** `beta(a, b)` for arrays: one draw per pair, in order (see numpy-distributions.ts for how close to NumPy). */
  beta(a: ArrayLike<number>, b: ArrayLike<number>): Float64Array {
    if (a.length !== b.length) throw new RangeError(`beta: shapes ${a.length} and ${b.length} differ`);
    const out = new Float64Array(a.length);
    for (let i = 0; i < a.length; i++) {
      if (!(a[i] > 0) || !(b[i] > 0)) throw new RangeError(`beta: a and b must be > 0, got ${a[i]}, ${b[i]}`);
      out[i] = beta(this.bg, a[i], b[i]);
    }
    return out;
  }

  /** `_shuffle_int(n, first, data)`: like shuffle, but with Lemire draws. */
  private shuffleInt(data: number[], n: number, first: number): void {
    for (let i = n - 1; i >= first; i--) {
      const j = boundedLemire(this.bg, i);
      const t = data[j];
      data[j] = data[i];
      data[i] = t;
    }
  }
}

/** NumPy's `kahan_sum` (the check `choice` makes on its probabilities). */
function kahanSum(xs: readonly number[]): number {
  if (xs.length === 0) return 0;
  let sum = xs[0];
  let c = 0;
  for (let i = 1; i < xs.length; i++) {
    const y = xs[i] - c;
    const t = sum + y;
    c = t - sum - y;
    sum = t;
  }
  return sum;
}

export function defaultRng(seed: number | bigint): NumpyGenerator {
  return new NumpyGenerator(seed);
}
