/**
 * `np.sum`, `np.mean` and `np.std` of 1-D float64 arrays, bit for bit: NumPy sums pairwise (blocks of 128 unrolled
 * by 8), so a plain left-to-right sum can differ from Trinity's numbers in the last bits.
 *
 * Sources (NumPy 2.x): numpy/_core/src/umath/loops_utils.h.src (`pairwise_sum`), numpy/_core/_methods.py (`_mean`,
 * `_var`).
 */

const PW_BLOCKSIZE = 128;

/** NumPy's float64 `pairwise_sum` over `a[lo, lo + n)`. */
function pairwiseSum(a: ArrayLike<number>, lo: number, n: number): number {
  if (n < 8) {
    let res = 0;
    for (let i = 0; i < n; i++) res += a[lo + i];
    return res;
  }
  if (n <= PW_BLOCKSIZE) {
    const r = [a[lo], a[lo + 1], a[lo + 2], a[lo + 3], a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]];
    let i = 8;
    for (; i < n - (n % 8); i += 8) for (let j = 0; j < 8; j++) r[j] += a[lo + i + j];
    let res = r[0] + r[1] + (r[2] + r[3]) + (r[4] + r[5] + (r[6] + r[7]));
    for (; i < n; i++) res += a[lo + i];
    return res;
  }
  let n2 = Math.floor(n / 2);
  n2 -= n2 % 8;
  return pairwiseSum(a, lo, n2) + pairwiseSum(a, lo + n2, n - n2);
}

/** `np.sum` of a 1-D float64 array (the reduction starts from 0.0, then adds the pairwise sum). */
export function npSum(a: ArrayLike<number>): number {
  return 0 + pairwiseSum(a, 0, a.length);
}

/** `np.mean` of a 1-D float64 array. */
export function npMean(a: ArrayLike<number>): number {
  return npSum(a) / a.length;
}

/** `np.std` (ddof 0) of a 1-D float64 array: squared deviations from the pairwise mean, summed pairwise. */
export function npStd(a: ArrayLike<number>): number {
  const m = npMean(a);
  const sq = Float64Array.from(a, (v) => (v - m) * (v - m));
  return Math.sqrt(npSum(sq) / a.length);
}
