/**
 * What the dashboard is sent, built from a live run's events or from a job directory's metric rows. Pure (no
 * `vscode`): the panel calls these and posts the result.
 */
import type { MetricsEvent, RolloutsEvent, RuntimeEvent } from '../../runtime/protocol';
import type { ScalarRow } from '../../runtime/metrics/types';
import { evalRolloutLinesOnDisk, rolloutLinesOnDisk } from '../../runtime/metrics/rollouts-jsonl';
import { episodeOfRecord } from './episode-record';
import { wireValue, type EvalOfRollouts, type MetricPoint, type RolloutSampleMessage, type Series } from './messages';

/**
 * The stage a live run's points and checkpoints belong to, named as the disk reader names a staged job's folders
 * (`sft_warmup/trainer`): only when the run has several stages.
 */
export function stageOf(stage: { name: string; count: number } | undefined): string | undefined {
  return stage && stage.count > 1 ? stage.name : undefined;
}

/**
 * The points of one `metrics` event: one per value, named by the role that logged it, under its stage's name when
 * the run has several (each stage counts its steps from 1, so each has its own series).
 */
export function pointsOfEvent(e: MetricsEvent, stage?: string): MetricPoint[] {
  return Object.entries(e.values).map(([tag, v]) => ({
    run: stage === undefined ? e.role : `${stage}/${e.role}`,
    tag,
    step: e.step,
    time: e.time,
    value: wireValue(v),
  }));
}

/** Points grouped into series by run and tag, each in the order the points came (step order for one writer). */
export function toSeries(points: Iterable<MetricPoint>): Series[] {
  const byKey = new Map<string, Series>();
  for (const p of points) {
    const k = `${p.run}\u0000${p.tag}`;
    let s = byKey.get(k);
    if (!s) byKey.set(k, (s = { run: p.run, tag: p.tag, steps: [], times: [], values: [] }));
    s.steps.push(p.step);
    s.times.push(p.time);
    s.values.push(p.value);
  }
  return [...byKey.values()];
}

export function seriesOfEvents(events: readonly RuntimeEvent[]): Series[] {
  let stage: string | undefined;
  const points: MetricPoint[] = [];
  for (const e of events) {
    if (e.type === 'stage') stage = stageOf(e);
    else if (e.type === 'metrics') points.push(...pointsOfEvent(e, stage));
  }
  return toSeries(points);
}

/**
 * Rows read from disk (MetricsReader) as series. Relative time is measured from the earliest wall time of all the
 * rows, so that explorer and trainer share one timeline; a row without a wall time is put at 0.
 */
export function seriesOfRows(rows: readonly ScalarRow[]): Series[] {
  let t0 = Infinity;
  for (const r of rows) if (r.wallTime !== null && r.wallTime < t0) t0 = r.wallTime;
  const series = toSeries(
    rows.map((r) => ({
      run: r.run,
      tag: r.tag,
      step: r.step,
      time: r.wallTime === null ? 0 : r.wallTime - t0,
      value: wireValue(r.value),
    })),
  );
  return series.map(sortedByStep);
}

/** A series in step order (the charts need x sorted); ties keep the order they were written in. */
export function sortedByStep(s: Series): Series {
  if (s.steps.every((v, i) => i === 0 || s.steps[i - 1] <= v)) return s;
  const order = s.steps.map((_, i) => i).sort((a, b) => s.steps[a] - s.steps[b] || a - b);
  return {
    run: s.run,
    tag: s.tag,
    steps: order.map((i) => s.steps[i]),
    times: order.map((i) => s.times[i]),
    values: order.map((i) => s.values[i]),
  };
}

export interface Rollouts {
  step: number;
  samples: RolloutSampleMessage[];
  /** An evaluation's records (monitor/eval-rollouts.jsonl); absent: an explorer step's. */
  eval?: EvalOfRollouts;
}

export function rolloutsOf(
  step: number,
  samples: readonly { prompt: string; response: string; reward: number }[],
  evalOf?: EvalOfRollouts,
): Rollouts {
  return {
    step,
    ...(evalOf ? { eval: { taskset: evalOf.taskset, role: evalOf.role } } : {}),
    samples: samples.map((s) => {
      const episode = episodeOfRecord(s as unknown as Record<string, unknown>);
      return {
        prompt: String(s.prompt),
        response: String(s.response),
        reward: wireValue(s.reward),
        ...(episode ? { episode } : {}),
      };
    }),
  };
}

/** A `rollouts` event as the dashboard shows it. */
export function rolloutsOfEvent(e: RolloutsEvent): Rollouts {
  return rolloutsOf(e.step, e.samples, e.eval);
}

/** The latest explorer step's `rollouts` event of a run, if any. */
export function latestRolloutsOfEvents(events: readonly RuntimeEvent[]): Rollouts | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (e.type === 'rollouts' && !e.eval) return rolloutsOfEvent(e);
  }
  return undefined;
}

/** Every evaluation's records a run reported (`rollouts` events with `eval`), in order. */
export function evalRolloutsOfEvents(events: readonly RuntimeEvent[]): Rollouts[] {
  return events.flatMap((e) => (e.type === 'rollouts' && e.eval ? [rolloutsOfEvent(e)] : []));
}

/** The last complete line of `<jobDir>/monitor/rollouts.jsonl` (what our runtime writes), if it parses. */
export function latestRolloutsOnDisk(jobDir: string): Rollouts | undefined {
  return rolloutStepsOnDisk(jobDir, 1).at(-1);
}

type SampleRecord = { prompt: string; response: string; reward: number };

/** The last `maxSteps` steps of `<jobDir>/monitor/rollouts.jsonl` (runtime/metrics/rollouts-jsonl.ts), in file order. */
export function rolloutStepsOnDisk(jobDir: string, maxSteps: number): Rollouts[] {
  return rolloutLinesOnDisk(jobDir, maxSteps).map((l) => rolloutsOf(l.step, l.samples as unknown as SampleRecord[]));
}

/** The last `maxLines` evaluations' records of `<jobDir>/monitor/eval-rollouts.jsonl`, in file order. */
export function evalRolloutStepsOnDisk(jobDir: string, maxLines: number): Rollouts[] {
  return evalRolloutLinesOnDisk(jobDir, maxLines).map((l) =>
    rolloutsOf(l.step, l.samples as unknown as SampleRecord[], { taskset: l.eval, role: l.role }),
  );
}
