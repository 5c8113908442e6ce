/** "Did you mean" for misspelled keys and names: optimal string alignment distance, bounded by word length. */

export function editDistance(a: string, b: string): number {
  const n = a.length;
  const m = b.length;
  if (n === 0) return m;
  if (m === 0) return n;
  let prev2 = new Array<number>(m + 1).fill(0);
  let prev = Array.from({ length: m + 1 }, (_, j) => j);
  let cur = new Array<number>(m + 1).fill(0);
  for (let i = 1; i <= n; i++) {
    cur[0] = i;
    for (let j = 1; j <= m; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, prev2[j - 2] + 1);
      cur[j] = v;
    }
    [prev2, prev, cur] = [prev, cur, prev2];
  }
  return prev[m];
}

/** The closest candidate within a distance that grows with the word's length, or undefined. */
export function closest(word: string, candidates: Iterable<string>): string | undefined {
  const w = word.toLowerCase();
  const list = [...candidates];
  let best: string | undefined;
  let bestD = Infinity;
  for (const c of list) {
    const d = editDistance(w, c.toLowerCase());
    if (d < bestD) {
      bestD = d;
      best = c;
    }
  }
  const limit = w.length <= 3 ? 1 : w.length <= 7 ? 2 : 3;
  if (bestD <= limit) return best;
  // A fragment of a longer key (`batch` for `batch_size`) is still a useful guess.
  if (w.length >= 4) return list.find((c) => c.toLowerCase().startsWith(w) || c.toLowerCase().split('_').includes(w));
  return undefined;
}

export function didYouMean(word: string, candidates: Iterable<string>): string {
  const c = closest(word, candidates);
  return c === undefined ? '' : ` Did you mean \`${c}\`?`;
}
