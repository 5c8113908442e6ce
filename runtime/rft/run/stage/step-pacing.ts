/** The numbers of every mode's progress lines (the pause for events between steps is stop-point.ts `yieldToEvents`). */
import type { Experience } from '../../experience';

export function meanReward(exps: readonly Experience[]): number {
  return exps.length ? exps.reduce((a, e) => a + (e.reward ?? 0), 0) / exps.length : NaN;
}

export function fmt(v: number | undefined): string {
  return v === undefined || Number.isNaN(v) ? '–' : v.toFixed(3);
}
