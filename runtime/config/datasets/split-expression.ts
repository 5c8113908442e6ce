/** Trinity's `split` expressions (`train`, `train[:100]`, `train[10%:]`, `train+test`), as `datasets` reads them. */
import { DataError } from './data-error';
import { pythonRound } from '../python-round';

/** The split names an expression reads, each once, slices dropped; `train` when none. Never throws (the peek's). */
export function splitNames(expr: string): string[] {
  const names = expr
    .split('+')
    .map((p) => p.replace(/\[[^\]]*\]\s*$/, '').trim())
    .filter((p) => p !== '');
  return names.length > 0 ? [...new Set(names)] : ['train'];
}

export interface SplitPart {
  split: string;
  from?: number;
  to?: number;
  unit: 'abs' | '%';
}

const SUB_SPEC = /^([\w-]+(?:\.[\w-]+)*)(?:\[(?:(-?\d+)(%)?)?:(?:(-?\d+)(%)?)?\])?$/;

/** `datasets`' split grammar: `name`, `name[from:to]` (rows or percent), joined with `+`. */
export function parseSplit(expr: string): SplitPart[] {
  const parts = expr.split('+').map((p) => p.trim());
  return parts.map((p) => {
    const m = SUB_SPEC.exec(p);
    if (!m)
      throw new DataError(`split '${expr}': '${p}' is not a split expression (name, name[from:to], name[from%:to%])`);
    const [, split, from, fromPct, to, toPct] = m;
    if (from !== undefined && to !== undefined && !!fromPct !== !!toPct) {
      throw new DataError(`split '${expr}': from and to of '${p}' must use the same unit (rows or %)`);
    }
    const unit = fromPct || toPct ? '%' : 'abs';
    const part: SplitPart = { split, unit };
    if (from !== undefined) part.from = Number(from);
    if (to !== undefined) part.to = Number(to);
    if (unit === '%') {
      for (const b of [part.from, part.to]) {
        if (b !== undefined && Math.abs(b) > 100)
          throw new DataError(`split '${expr}': percent boundaries must be within [-100, 100]`);
      }
    }
    return part;
  });
}

/** The rows [from, to) that `part` selects of a split of `n` rows. */
export function sliceBounds(part: SplitPart, n: number): [number, number] {
  let from: number;
  let to: number;
  if (part.unit === '%') {
    from = part.from === undefined ? 0 : pythonRound((part.from * n) / 100);
    to = part.to === undefined ? n : pythonRound((part.to * n) / 100);
  } else {
    from = part.from ?? 0;
    to = part.to ?? n;
  }
  if (from < 0) from = Math.max(n + from, 0);
  if (to < 0) to = Math.max(n + to, 0);
  return [Math.min(from, n), Math.min(to, n)];
}
