/**
 * The NumPy generator Trinity's eval bootstrap draws from (trinity/explorer/scheduler.py `bootstrap_metric`), bit for
 * bit: the legacy global generator — `np.random.seed(int)` (MT19937, Knuth's init_genrand) and
 * `np.random.choice(n, size, replace=True)` (= `randint(0, n, size)`, int64, masked rejection on 32-bit draws). The
 * bootstrap's `np.mean`/`np.std` are in numpy-stats.ts.
 *
 * Sources (NumPy 2.x): numpy/random/_mt19937.pyx (`_legacy_seeding`), src/mt19937/mt19937.c, numpy/random/mtrand.pyx
 * (`choice`, `randint` with `_masked = True`), src/distributions/distributions.c (`random_bounded_uint64_fill` →
 * `buffered_bounded_masked_uint32`).
 */
import { maskedInterval } from './numpy-random';

const N = 624;
const M = 397;
const MATRIX_A = 0x9908b0df;
const UPPER = 0x80000000;
const LOWER = 0x7fffffff;

/** NumPy's legacy `RandomState` (MT19937), only as far as the bootstrap draws from it. */
export class LegacyRandomState {
  private readonly mt = new Uint32Array(N);
  private pos = N;

  /** As `np.random.seed(seed)` for an integer seed in [0, 2^32). */
  constructor(seed: number) {
    if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff)
      throw new RangeError('Seed must be between 0 and 2**32 - 1');
    const mt = this.mt;
    mt[0] = seed;
    for (let i = 1; i < N; i++) {
      const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
      mt[i] = (Math.imul(1812433253, prev) + i) >>> 0;
    }
  }

  private twist(): void {
    const mt = this.mt;
    let kk = 0;
    let y: number;
    for (; kk < N - M; kk++) {
      y = (mt[kk] & UPPER) | (mt[kk + 1] & LOWER);
      mt[kk] = mt[kk + M] ^ (y >>> 1) ^ (y & 1 ? MATRIX_A : 0);
    }
    for (; kk < N - 1; kk++) {
      y = (mt[kk] & UPPER) | (mt[kk + 1] & LOWER);
      mt[kk] = mt[kk + (M - N)] ^ (y >>> 1) ^ (y & 1 ? MATRIX_A : 0);
    }
    y = (mt[N - 1] & UPPER) | (mt[0] & LOWER);
    mt[N - 1] = mt[M - 1] ^ (y >>> 1) ^ (y & 1 ? MATRIX_A : 0);
    this.pos = 0;
  }

  nextUint32(): number {
    if (this.pos >= N) this.twist();
    let y = this.mt[this.pos++];
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  /** `randint(0, high)` (`choice(high, replace=True)` draws these): a value in [0, high), high ≤ 2^32. */
  randint(high: number): number {
    if (!Number.isInteger(high) || high <= 0 || high > 0x100000000)
      throw new RangeError(`randint: high must be in [1, 2^32], got ${high}`);
    const rng = high - 1;
    if (rng === 0xffffffff) return this.nextUint32();
    return maskedInterval(rng, () => this.nextUint32());
  }

  /** `choice(n, size, replace=True)`. */
  choiceWithReplacement(n: number, size: number): number[] {
    const out = new Array<number>(size);
    for (let i = 0; i < size; i++) out[i] = this.randint(n);
    return out;
  }
}
