/**
 * Learns a character BPE's merges from sample texts, for a small model's own tokenizer (buildBpeTokenizer): split
 * each text with GPT-2's pattern (or `splitPattern`, the one the tokenizer is then built with), count the pieces,
 * then merge the most frequent adjacent pair (ties: the first pair in code-unit order) again and again, up to
 * `maxMerges` or until no pair occurs `minCount` times.
 */
import { GPT2_SPLIT_PATTERN } from './build';

export interface LearnedBpe {
  /** Every character of the texts and of `extraChars`, sorted. */
  alphabet: string[];
  /** In rank order. */
  merges: [string, string][];
}

export function trainBpe(
  texts: Iterable<string>,
  o: { maxMerges: number; minCount?: number; extraChars?: string; splitPattern?: string },
): LearnedBpe {
  const split = new RegExp(o.splitPattern ?? GPT2_SPLIT_PATTERN, 'gu');
  const counts = new Map<string, number>();
  const chars = new Set(Array.from(o.extraChars ?? ''));
  for (const text of texts)
    for (const [piece] of text.matchAll(split)) {
      counts.set(piece, (counts.get(piece) ?? 0) + 1);
      for (const ch of piece) chars.add(ch);
    }
  const words = [...counts].map(([piece, n]) => ({ parts: Array.from(piece), n }));
  const merges: [string, string][] = [];
  const minCount = o.minCount ?? 2;
  while (merges.length < o.maxMerges) {
    const pairs = new Map<string, { a: string; b: string; n: number }>();
    for (const w of words)
      for (let i = 0; i + 1 < w.parts.length; i++) {
        const key = `${w.parts[i]}\u0000${w.parts[i + 1]}`;
        const p = pairs.get(key);
        if (p) p.n += w.n;
        else pairs.set(key, { a: w.parts[i], b: w.parts[i + 1], n: w.n });
      }
    let best: { key: string; a: string; b: string; n: number } | null = null;
    for (const [key, p] of pairs) if (!best || p.n > best.n || (p.n === best.n && key < best.key)) best = { key, ...p };
    if (!best || best.n < minCount) break;
    merges.push([best.a, best.b]);
    for (const w of words) {
      const out: string[] = [];
      for (let i = 0; i < w.parts.length; i++) {
        if (i + 1 < w.parts.length && w.parts[i] === best.a && w.parts[i + 1] === best.b) {
          out.push(best.a + best.b);
          i++;
        } else out.push(w.parts[i]);
      }
      w.parts = out;
    }
  }
  return { alphabet: [...chars].sort(), merges };
}
