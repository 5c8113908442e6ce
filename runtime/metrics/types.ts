/** What the metrics readers return: one row per scalar, and problems that name where they are. */

export interface ScalarRow {
  /** The run: a role folder (`explorer`, `trainer`, …), prefixed by the stage folder for a staged job. */
  run: string;
  tag: string;
  step: number;
  /** Seconds since the epoch when the value was logged; null where the source does not record it. */
  wallTime: number | null;
  value: number;
}

export interface MetricsProblem {
  file: string;
  /** Byte offset of the damaged record (event files) or of the line's start (metrics.jsonl). */
  offset?: number;
  message: string;
}

/**
 * A restart met while reading (restarts.ts): rows of `run` at `fromStep` or later (only of `tags`, when given) that
 * earlier reads returned belong to an abandoned timeline. A reader holding rows drops them before adding this read's
 * rows, which are already without them.
 */
export interface MetricsPurge {
  run: string;
  fromStep: number;
  tags?: string[];
}

export interface MetricsRead {
  rows: ScalarRow[];
  problems: MetricsProblem[];
  purges: MetricsPurge[];
}
