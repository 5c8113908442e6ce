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

/** A checkpoint the trainer saved: a mark on the dashboard's timeline. */
export interface CheckpointMark {
  step: number;
  /** Its folder's name, e.g. `global_step_20`. */
  name: string;
}

export type HostMessage =
  | { type: 'init'; run: DashboardRun; series: Series[] }
  | { type: 'append'; points: MetricPoint[] }
  | { type: 'rollouts'; step: number; samples: RolloutSampleMessage[] }
  | { type: 'status'; status: string; detail: string }
  /** All the run's checkpoints so far (each message replaces the last). */
  | { type: 'checkpoints'; checkpoints: CheckpointMark[] };

/** A card exported by the webview: the extension asks where to save it and writes it (webviews cannot download). */
export interface ExportMessage {
  type: 'export';
  format: 'csv' | 'png';
  /** The suggested file name: no directory part. */
  fileName: string;
  /** csv: the file's text; png: a `data:image/png;base64,` URL. */
  data: string;
}

export type WebviewMessage = { type: 'ready' } | ExportMessage;

/** The largest export accepted (a card's PNG is well under a megabyte; a CSV of 30 × 100 000 rows is ~150 MB). */
export const MAX_EXPORT_CHARS = 256 * 1024 * 1024;
const PNG_DATA_URL = 'data:image/png;base64,';

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

function isCheckpoint(v: unknown): v is CheckpointMark {
  return isObj(v) && isNum(v.step) && v.step >= 0 && isStr(v.name);
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
    case 'checkpoints':
      return Array.isArray(data.checkpoints) && data.checkpoints.every(isCheckpoint) ? { type: 'checkpoints', checkpoints: data.checkpoints.map((c) => ({ step: c.step, name: c.name })) } : undefined;
    default:
      return undefined;
  }
}

/** A webview -> host message, or `undefined` when `data` is not one. */
export function parseWebviewMessage(data: unknown): WebviewMessage | undefined {
  if (!isObj(data)) return undefined;
  if (data.type === 'ready') return { type: 'ready' };
  if (data.type !== 'export') return undefined;
  const { format, fileName, data: body } = data;
  if ((format !== 'csv' && format !== 'png') || !isStr(fileName) || !isStr(body) || body.length > MAX_EXPORT_CHARS) return undefined;
  if (!isFileName(fileName) || !fileName.toLowerCase().endsWith(`.${format}`)) return undefined;
  if (format === 'png' && !(body.startsWith(PNG_DATA_URL) && /^[A-Za-z0-9+/]*={0,2}$/.test(body.slice(PNG_DATA_URL.length)))) return undefined;
  return { type: 'export', format, fileName, data: body };
}

/** A plain file name: no directory part, no control characters, not `.` or `..`. */
function isFileName(s: string): boolean {
  return s.length > 0 && s.length <= 200 && !/[\\/\u0000-\u001f:*?"<>|]/.test(s) && s !== '.' && s !== '..';
}

export function parsePanelState(data: unknown): PanelState | undefined {
  return isObj(data) && isStr(data.key) && isStr(data.jobDir) && data.key.length > 0 && data.jobDir.length > 0 ? { key: data.key, jobDir: data.jobDir } : undefined;
}

/** A number for the wire: non-finite values become `null`. */
export function wireValue(v: number): number | null {
  return Number.isFinite(v) ? v : null;
}
