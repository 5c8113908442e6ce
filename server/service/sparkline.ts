/**
 * A Unicode block sparkline (▁▂▃▄▅▆▇█) of a series, for hover markdown: VS Code renders hovers' images from data:
 * URIs only for trusted content, while text always shows. Long series are reduced to `width` buckets (each its
 * mean); a non-finite value (or a bucket of them) is a space.
 */
const BLOCKS = '▁▂▃▄▅▆▇█';

export function sparkline(values: readonly number[], width = 32): string {
  const buckets: number[] = [];
  const n = values.length;
  const w = Math.min(width, n);
  for (let b = 0; b < w; b++) {
    const lo = Math.floor((b * n) / w);
    const hi = Math.floor(((b + 1) * n) / w);
    let sum = 0;
    let count = 0;
    for (let i = lo; i < hi; i++) {
      if (Number.isFinite(values[i])) {
        sum += values[i];
        count++;
      }
    }
    buckets.push(count ? sum / count : NaN);
  }
  const finite = buckets.filter(Number.isFinite);
  if (!finite.length) return ' '.repeat(w);
  const min = Math.min(...finite);
  const max = Math.max(...finite);
  return buckets
    .map((v) => {
      if (!Number.isFinite(v)) return ' ';
      if (max === min) return BLOCKS[3];
      return BLOCKS[Math.min(BLOCKS.length - 1, Math.floor(((v - min) / (max - min)) * BLOCKS.length))];
    })
    .join('');
}
