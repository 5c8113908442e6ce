/** What every mode's step loop shares: a pause for events between steps, and the numbers of its progress lines. */
import type { Experience } from '../../experience';

/** Lets signal handlers and I/O callbacks run between steps (the steps themselves are synchronous). */
export function yieldToEvents(): Promise<void> {
  return new Promise((r) => setImmediate(r));
}

export function meanReward(exps: readonly Experience[]): number {
  return exps.length ? exps.reduce((a, e) => a + (e.reward ?? 0), 0) / exps.length : NaN;
}

export function fmt(v: number | undefined): string {
  return v === undefined || Number.isNaN(v) ? '–' : v.toFixed(3);
}
