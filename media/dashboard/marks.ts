/**
 * Explorer and trainer on one timeline: the marks drawn across every card. Weight syncs are where the explorer's
 * `rollout/model_version` (serve mode: `rollout/model_<i>/model_version`) changes — the version is the trainer
 * step whose weights the explorer uses from then on, so the gap between a sync's explorer step and its version is
 * the off-policy lag. Checkpoints are the trainer's saved steps (the runtime's `checkpoint` events, or the job's
 * `global_step_<n>` folders). Pure (no DOM, no Chart.js).
 */
import type { CheckpointMark } from '../../client/dashboard/messages';
import { xValues, type XAxis } from './axes';

export interface TimelineMark {
  kind: 'sync' | 'checkpoint';
  /** The step of the run that made it: the explorer's for a sync, the trainer's for a checkpoint. */
  step: number;
  /** Seconds since the run started, when known. */
  time?: number;
  label: string;
}

/** A series as the webview holds it. */
export interface MarkSeries {
  run: string;
  steps: readonly number[];
  times: readonly number[];
  values: readonly (number | null)[];
}

export const MODEL_VERSION_TAG = /^rollout\/(model_\d+\/)?model_version$/;

/**
 * One mark per change of model version (the first logged version is the starting weights, not a sync), labelled
 * `v<version>` and the lag `explorer step − version` when the version is a trainer step.
 */
export function syncMarks(series: readonly MarkSeries[]): TimelineMark[] {
  const out: TimelineMark[] = [];
  const seen = new Set<string>();
  for (const s of series) {
    let last: number | null = null;
    for (let i = 0; i < s.values.length; i++) {
      const v = s.values[i];
      if (v === null) continue;
      if (last !== null && v !== last) {
        const key = `${s.steps[i]}:${v}`;
        // Several models (serve mode) syncing at once: one mark.
        if (!seen.has(key)) {
          seen.add(key);
          out.push({ kind: 'sync', step: s.steps[i], time: s.times[i], label: `v${v} (lag ${s.steps[i] - v})` });
        }
      }
      last = v;
    }
  }
  return out.sort((a, b) => a.step - b.step);
}

/** The trainer's step -> time, from the trainer's series (the run named `trainer`, or `<stage>/trainer`). */
export function trainerTimes(series: readonly MarkSeries[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const s of series) {
    if (s.run !== 'trainer' && !s.run.endsWith('/trainer')) continue;
    for (let i = 0; i < s.steps.length; i++) if (!out.has(s.steps[i])) out.set(s.steps[i], s.times[i]);
  }
  return out;
}

export function checkpointMarks(
  checkpoints: readonly CheckpointMark[],
  times: ReadonlyMap<number, number>,
): TimelineMark[] {
  return checkpoints
    .map((c) => ({ kind: 'checkpoint' as const, step: c.step, time: times.get(c.step), label: `ckpt ${c.step}` }))
    .sort((a, b) => a.step - b.step);
}

/** Where a mark goes on `axis`, or undefined when its time is unknown on a time axis. */
export function markX(m: TimelineMark, axis: XAxis, startedAt: number | undefined): number | undefined {
  if (axis === 'step') return m.step;
  if (m.time === undefined) return undefined;
  return xValues(axis, [m.step], [m.time], startedAt)[0];
}
