/**
 * The messages between the extension and the dashboard webview, and their validators. Imported by both sides (no
 * `vscode`, no DOM): whatever arrives is checked here before it is used, and a message that is unknown or malformed
 * is dropped (`undefined`), never half-used.
 *
 * A value that is not finite travels as `null` (postMessage serialises as JSON, which has no NaN or Infinity).
 */

/** One scalar series of a run: a role (`explorer`, `trainer`, `sft/trainer`) and a tag, points in step order. */
export interface Series {
  run: string;
  tag: string;
  steps: number[];
  /** Seconds since the run started. */
  times: number[];
  values: (number | null)[];
}

export interface MetricPoint {
  run: string;
  tag: string;
  step: number;
  time: number;
  value: number | null;
}

export interface DashboardRun {
  key: string;
  title: string;
  jobDir: string;
  status: string;
  /**
   * When the run started, in seconds since the epoch: series times are relative to it, so that the wall-time axis
   * is the real clock. Absent when unknown.
   */
  startedAt?: number;
}

export interface RolloutSampleMessage {
  prompt: string;
  response: string;
  reward: number | null;
}

export type HostMessage =
  | { type: 'init'; run: DashboardRun; series: Series[] }
  | { type: 'append'; points: MetricPoint[] }
  | { type: 'rollouts'; step: number; samples: RolloutSampleMessage[] }
  | { type: 'status'; status: string; detail: string };

export type WebviewMessage = { type: 'ready' };

/** What the panel's webview state holds so that a reload can restore it (`WebviewPanelSerializer`). */
export interface PanelState {
  key: string;
  jobDir: string;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const isStr = (v: unknown): v is string => typeof v === 'string';
const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isValue = (v: unknown): v is number | null => v === null || isNum(v);

function isRun(v: unknown): v is DashboardRun {
  return isObj(v) && isStr(v.key) && isStr(v.title) && isStr(v.jobDir) && isStr(v.status) && (v.startedAt === undefined || (isNum(v.startedAt) && v.startedAt >= 0));
}

function isSeries(v: unknown): v is Series {
  if (!isObj(v) || !isStr(v.run) || !isStr(v.tag)) return false;
  const { steps, times, values } = v;
  if (!Array.isArray(steps) || !Array.isArray(times) || !Array.isArray(values)) return false;
  if (steps.length !== times.length || steps.length !== values.length) return false;
  return steps.every(isNum) && times.every(isNum) && values.every(isValue);
}

function isPoint(v: unknown): v is MetricPoint {
  return isObj(v) && isStr(v.run) && isStr(v.tag) && isNum(v.step) && isNum(v.time) && isValue(v.value);
}

function isSample(v: unknown): v is RolloutSampleMessage {
  return isObj(v) && isStr(v.prompt) && isStr(v.response) && isValue(v.reward);
}

/** A host -> webview message, or `undefined` when `data` is not one. */
export function parseHostMessage(data: unknown): HostMessage | undefined {
  if (!isObj(data)) return undefined;
  switch (data.type) {
    case 'init':
      return isRun(data.run) && Array.isArray(data.series) && data.series.every(isSeries) ? { type: 'init', run: data.run, series: data.series } : undefined;
    case 'append':
      return Array.isArray(data.points) && data.points.every(isPoint) ? { type: 'append', points: data.points } : undefined;
    case 'rollouts':
      return isNum(data.step) && Array.isArray(data.samples) && data.samples.every(isSample) ? { type: 'rollouts', step: data.step, samples: data.samples } : undefined;
    case 'status':
      return isStr(data.status) && isStr(data.detail) ? { type: 'status', status: data.status, detail: data.detail } : undefined;
    default:
      return undefined;
  }
}

/** A webview -> host message, or `undefined` when `data` is not one. */
export function parseWebviewMessage(data: unknown): WebviewMessage | undefined {
  return isObj(data) && data.type === 'ready' ? { type: 'ready' } : undefined;
}

export function parsePanelState(data: unknown): PanelState | undefined {
  return isObj(data) && isStr(data.key) && isStr(data.jobDir) && data.key.length > 0 && data.jobDir.length > 0 ? { key: data.key, jobDir: data.jobDir } : undefined;
}

/** A number for the wire: non-finite values become `null`. */
export function wireValue(v: number): number | null {
  return Number.isFinite(v) ? v : null;
}
