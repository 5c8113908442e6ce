/**
 * Orphaned steps. A run restarted from its checkpoint at step N logs N+1, N+2, … again; what the abandoned timeline
 * logged after N is no part of the run any more, and no reader shows it beside the new values. Readers drop it the
 * way TensorBoard's event accumulator does (tensorboard/backend/event_processing/plugin_event_accumulator.py at
 * tensorflow/tensorboard@02b9ccbb, `_MaybePurgeOrphanedData`, `_Purge`):
 *
 * - In a run (a folder of event files, read in name order) whose files declare `file_version` 2 or more
 *   (`brain.Event:2`), a `SessionLog.START` event at step S drops every tag's points at S or later. TensorBoard
 *   takes a run's first START as the session's start and purges nothing at it; purging there too drops nothing
 *   when the run's earlier files also began with a START (ours do), and drops the orphans when they did not.
 * - Without a version, a summary event whose step is below the run's most recent summary step drops its own tags'
 *   points at that step or later.
 *
 * One rule beyond TensorBoard's, for Trinity's own files: its TensorboardMonitor (trinity/utils/monitor.py at
 * agentscope-ai/Trinity-RFT@e6b2dc3) opens a plain `torch.utils.tensorboard.SummaryWriter`, which writes file_version
 * 2 and never a START (no `purge_step`), so TensorBoard keeps both timelines of a Trinity job restarted on a cluster.
 * Here, in a later file of the run without a START (a new writer: a restarted process), a tag logged at or below the
 * highest step an earlier file logged it at drops that tag's points from that step: the new process went back.
 *
 * The local runtime's metrics.jsonl carries the same fact as a line `{"role", "step", "restart": true, …}`
 * (runtime/rft/monitor/step-log.ts): the role's points at that step or later are dropped.
 */
import type { MetricsPurge, MetricsRead, ScalarRow } from './types';

/** Whether a purge drops a row. */
export function isPurged(row: Pick<ScalarRow, 'run' | 'tag' | 'step'>, p: MetricsPurge): boolean {
  return row.run === p.run && row.step >= p.fromStep && (p.tags === undefined || p.tags.includes(row.tag));
}

/** The rows of one read with the purges met while reading: a purge drops this read's earlier rows at once. */
export class ReadBatch {
  rows: ScalarRow[] = [];
  problems: MetricsRead['problems'] = [];
  purges: MetricsPurge[] = [];

  /** What the read returns, as a plain object. */
  result(): MetricsRead {
    return { rows: this.rows, problems: this.problems, purges: this.purges };
  }

  add(row: ScalarRow): void {
    this.rows.push(row);
  }

  purge(p: MetricsPurge): void {
    this.rows = this.rows.filter((r) => !isPurged(r, p));
    this.purges.push(p);
  }
}

/** One run's state across its event files: the file version, the most recent step, each tag's latest step. */
export class RunRestarts {
  private fileVersion = 0;
  private mostRecentStep = -Infinity;
  private readonly tagLast = new Map<string, { step: number; file: string }>();
  private readonly startedFiles = new Set<string>();

  constructor(readonly run: string) {}

  version(v: number): void {
    this.fileVersion = v;
  }

  /** A `SessionLog.START` at `step` in `file`. */
  start(file: string, step: number, batch: ReadBatch): void {
    if (this.fileVersion < 2) return;
    this.startedFiles.add(file);
    batch.purge({ run: this.run, fromStep: step });
    for (const [tag, last] of this.tagLast) if (last.step >= step) this.tagLast.set(tag, { step: step - 1, file });
  }

  /** A summary event at `step` in `file` holding `tags` (all of its values, scalar or not). */
  summary(file: string, step: number, tags: string[], batch: ReadBatch): void {
    if (this.fileVersion < 2) {
      if (step < this.mostRecentStep) batch.purge({ run: this.run, fromStep: step, tags });
    } else if (!this.startedFiles.has(file)) {
      const back = tags.filter((t) => {
        const last = this.tagLast.get(t);
        return last !== undefined && last.file !== file && step <= last.step;
      });
      if (back.length) batch.purge({ run: this.run, fromStep: step, tags: back });
    }
    this.mostRecentStep = step;
    for (const t of tags) {
      const last = this.tagLast.get(t);
      this.tagLast.set(t, { step: last?.file === file ? Math.max(last.step, step) : step, file });
    }
  }
}

/** Drops what `purges` orphan from rows read earlier (what a consumer holding rows does with each read). */
export function withoutPurged<R extends Pick<ScalarRow, 'run' | 'tag' | 'step'>>(
  rows: R[],
  purges: readonly MetricsPurge[],
): R[] {
  return purges.length ? rows.filter((r) => !purges.some((p) => isPurged(r, p))) : rows;
}
