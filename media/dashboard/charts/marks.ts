/**
 * Explorer and trainer on one timeline: the marks drawn across every card that shows their stage. Weight syncs are
 * where the explorer's `rollout/model_version` (serve mode: `rollout/model_<i>/model_version`) changes — the
 * version is the trainer step whose weights the explorer uses from then on, so the gap between a sync's explorer
 * step and its version is the off-policy lag. Checkpoints are the trainer's saved steps (the runtime's `checkpoint`
 * events, or the job's `global_step_<n>` folders).
 *
 * A config with `stages` runs them one after another, each counting its steps (and versions) from 1 and logging
 * under its own name (`sft_warmup/trainer`, `grpo/explorer`): a mark belongs to its stage, a checkpoint is timed by
 * its own stage's trainer and a sync by its own stage's explorer, so on a time axis each lands on its stage's curve.
 * Pure (no DOM, no Chart.js).
 */
import type { CheckpointMark } from '../../../client/dashboard/messages';
import { xValues, type XAxis } from './axes';

export interface TimelineMark {
  kind: 'sync' | 'checkpoint';
  /** The step of the run that made it: the explorer's for a sync, the trainer's for a checkpoint. */
  step: number;
  /** Seconds since the run started, when known. */
  time?: number;
  /** The stage that made it, in a run with several. */
  stage?: string;
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

/** The stage of a series' run name (`grpo/explorer` -> `grpo`), or '' for a run without stages (`explorer`). */
export function stageOfRun(run: string): string {
  const slash = run.lastIndexOf('/');
  return slash < 0 ? '' : run.slice(0, slash);
}

/**
 * One mark per change of model version (the first logged version is the starting weights, not a sync), labelled
 * `v<version>` and the lag `explorer step − version` when the version is a trainer step.
 */
export function syncMarks(series: readonly MarkSeries[]): TimelineMark[] {
  const out: TimelineMark[] = [];
  const seen = new Set<string>();
  for (const s of series) {
    const stage = stageOfRun(s.run);
    let last: number | null = null;
    for (let i = 0; i < s.values.length; i++) {
      const v = s.values[i];
      if (v === null) continue;
      if (last !== null && v !== last) {
        const key = `${stage}:${s.steps[i]}:${v}`;
        // Several models (serve mode) syncing at once: one mark. Two stages syncing at the same step: one each.
        if (!seen.has(key)) {
          seen.add(key);
          out.push({
            kind: 'sync',
            step: s.steps[i],
            time: s.times[i],
            ...(stage ? { stage } : {}),
            label: `v${v} (lag ${s.steps[i] - v})`,
          });
        }
      }
      last = v;
    }
  }
  return out.sort((a, b) => a.step - b.step);
}

/** The trainer's step -> time per stage ('' for a run without stages), from the series of runs `[<stage>/]trainer`. */
export function trainerTimes(series: readonly MarkSeries[]): Map<string, Map<number, number>> {
  const out = new Map<string, Map<number, number>>();
  for (const s of series) {
    if (s.run !== 'trainer' && !s.run.endsWith('/trainer')) continue;
    const stage = stageOfRun(s.run);
    let times = out.get(stage);
    if (!times) out.set(stage, (times = new Map()));
    for (let i = 0; i < s.steps.length; i++) if (!times.has(s.steps[i])) times.set(s.steps[i], s.times[i]);
  }
  return out;
}

/**
 * Checkpoints, each timed by its own stage's trainer. One without a stage where the trainer logged under one stage
 * name only (a job folder read without its record) takes that stage's times.
 */
export function checkpointMarks(
  checkpoints: readonly CheckpointMark[],
  times: ReadonlyMap<string, ReadonlyMap<number, number>>,
): TimelineMark[] {
  const only = times.size === 1 ? [...times.values()][0] : undefined;
  return checkpoints
    .map((c) => ({
      kind: 'checkpoint' as const,
      step: c.step,
      time: (times.get(c.stage ?? '') ?? (c.stage === undefined ? only : undefined))?.get(c.step),
      ...(c.stage === undefined ? {} : { stage: c.stage }),
      label: c.stage === undefined ? `ckpt ${c.step}` : `${c.stage} ckpt ${c.step}`,
    }))
    .sort((a, b) => a.step - b.step);
}

/**
 * The marks a card draws: on a card whose series are of some stages only (a GRPO metric the SFT warm-up never logs),
 * another stage's marks would sit at its own step numbers on this stage's curve (`sft ckpt 4` at GRPO step 4), so they
 * are left out; marks without a stage, and every mark on a card without staged series, are kept.
 */
export function marksOfCard(marks: readonly TimelineMark[], series: readonly { run: string }[]): TimelineMark[] {
  const stages = new Set(series.map((s) => stageOfRun(s.run)).filter((s) => s !== ''));
  if (stages.size === 0) return [...marks];
  return marks.filter((m) => m.stage === undefined || stages.has(m.stage));
}

/** Where a mark goes on `axis`, or undefined when its time is unknown on a time axis. */
export function markX(m: TimelineMark, axis: XAxis, startedAt: number | undefined): number | undefined {
  if (axis === 'step') return m.step;
  if (m.time === undefined) return undefined;
  return xValues(axis, [m.step], [m.time], startedAt)[0];
}
