/**
 * Where the timeline marks' labels go along the top of a plot, so that no two overlap at any width: syncs on the
 * first row, checkpoints on the second; the latest checkpoint and sync first, then the marks left to right (on a time
 * axis a staged run's marks are not in step order), each label right of its line, or left of it where the plot ends,
 * or in its short form (`ckpt 4` for `grpo ckpt 4`, `v3` for `v3 (lag 1)`); a label with no room on its row is left
 * out, its line stays. Pure.
 */

export type MarkKind = 'sync' | 'checkpoint';

export interface LabelledMark {
  kind: MarkKind;
  /** The line's x, in pixels. */
  px: number;
  /** The label, then shorter forms to try where it does not fit. */
  labels: readonly string[];
}

export interface LabelBox {
  kind: MarkKind;
  text: string;
  /** The text's box: left, top, width, height in pixels (the text is drawn at x, y with textBaseline `top`). */
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface LabelArea {
  left: number;
  right: number;
  /** Each kind's row top. */
  rows: Record<MarkKind, number>;
  /** A row's height: rows this far apart never overlap. */
  rowHeight: number;
}

/** Space between a line and its label, and between two labels on a row. */
const PAD = 2;
const GAP = 4;

/** The short form of a mark's label: a checkpoint without its stage, a sync without its lag. */
export function shortLabels(label: string): string[] {
  const ckpt = /^.+ (ckpt \d+)$/.exec(label);
  if (ckpt) return [label, ckpt[1]];
  const sync = /^(v\d+) \(lag -?\d+\)$/.exec(label);
  if (sync) return [label, sync[1]];
  return [label];
}

export function layoutMarkLabels(
  marks: readonly LabelledMark[],
  measure: (text: string) => number,
  area: LabelArea,
): LabelBox[] {
  const placed: LabelBox[] = [];
  const free = (b: LabelBox) =>
    b.x >= area.left &&
    b.x + b.width <= area.right &&
    placed.every(
      (p) => p.y + p.height <= b.y || b.y + b.height <= p.y || p.x + p.width + GAP <= b.x || b.x + b.width + GAP <= p.x,
    );
  const byX = [...marks].sort((a, b) => a.px - b.px);
  // The latest checkpoint (the one a run resumes from) and the latest sync are labelled first, then the rest.
  const latest = (['checkpoint', 'sync'] as const).flatMap((k) => byX.filter((m) => m.kind === k).slice(-1));
  const order = [...latest, ...byX.filter((m) => !latest.includes(m))];
  for (const m of order) {
    const y = area.rows[m.kind];
    search: for (const text of m.labels) {
      const width = measure(text);
      const right = m.px + PAD;
      for (const x of right + width <= area.right ? [right] : [m.px - PAD - width]) {
        const box = { kind: m.kind, text, x, y, width, height: area.rowHeight };
        if (free(box)) {
          placed.push(box);
          break search;
        }
      }
    }
  }
  return placed;
}

/** Whether two boxes overlap (the tests check every pair). */
export function boxesOverlap(a: LabelBox, b: LabelBox): boolean {
  return a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
}
