/**
 * The messages between the extension and the dashboard webview, and their validators. Imported by both sides (no
 * `vscode`, no DOM): whatever arrives is checked here before it is used, and a message that is unknown or malformed
 * is dropped (`undefined`), never half-used.
 *
 * A value that is not finite travels as `null` (postMessage serialises as JSON, which has no NaN or Infinity).
 */
import { episodeOfRecord, type EpisodeRecord } from './episode-record';

/** For the webview's pinned cards: the Runs view's names of an evaluation's score. */
export { EVAL_SCORE_METRICS } from '../runs/eval-scores';

export type { EpisodeRecord, EpisodeRole } from './episode-record';

/** One scalar series of a run: a role (`explorer`, `trainer`, `sft/trainer`) and a tag, points in step order. */
export interface Series {
  /** In a compare panel: the key of the compared run the series belongs to (`run` is then its role). */
  source?: string;
  run: string;
  tag: string;
  steps: number[];
  /** Seconds since the run started. */
  times: number[];
  values: (number | null)[];
}

export interface MetricPoint {
  source?: string;
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
  /** A multi-turn record's conversation, mask and outcome numbers (client/dashboard/episode-record.ts). */
  episode?: EpisodeRecord;
}

/** A run's resolved config: as YAML text, and flattened to dotted keys (values as YAML-ish text) for the diff. */
export interface RunConfigMessage {
  key: string;
  /** Where it was read or resolved from, and anything to know about it (e.g. the file changed after the run). */
  source: string;
  note: string;
  yaml: string;
  flat: [string, string][];
  /** Why there is no config (no record of the config file, unreadable, invalid). */
  error?: string;
}

/** A checkpoint the trainer saved: a mark on the dashboard's timeline. */
export interface CheckpointMark {
  step: number;
  /** Its folder's name, e.g. `global_step_20`. */
  name: string;
  /** The stage that saved it, when the run has several (each stage counts its steps from 1). */
  stage?: string;
}

/** Rollouts of an evaluation: the eval taskset and the role whose metrics hold its numbers (`explorer`, `bench`). */
export interface EvalOfRollouts {
  taskset: string;
  role: string;
}

export type HostMessage =
  /** `compare`: the runs of a compare panel, in colour order (then `run` describes the panel, series have `source`). */
  | { type: 'init'; run: DashboardRun; series: Series[]; compare?: DashboardRun[] }
  | { type: 'append'; points: MetricPoint[] }
  /** `origin`: where the samples were read (e.g. the experience buffer's SQLite file), shown above them. */
  | { type: 'rollouts'; step: number; samples: RolloutSampleMessage[]; origin?: string; eval?: EvalOfRollouts }
  | { type: 'status'; status: string; detail: string }
  | { type: 'config'; runs: RunConfigMessage[] }
  /** The config keys that drive each tag (runtime/config/model/metric-drivers.ts), for the tags known so far. */
  | { type: 'drivers'; drivers: Record<string, string[]> }
  /** All the run's checkpoints so far (each message replaces the last). */
  | { type: 'checkpoints'; checkpoints: CheckpointMark[] };

/** One row of a card's CSV export (runtime/metrics/csv.ts writes it, as the `metrics` CLI does). */
export interface ExportRow {
  run: string;
  tag: string;
  step: number;
  /** Seconds since the epoch, null when the run's start is not known. */
  wallTime: number | null;
  value: number | null;
}

/**
 * A card exported by the webview: the extension asks where to save it and writes it (webviews cannot download). A CSV
 * travels as rows (the extension writes them with the CLI's writer), a PNG as a `data:image/png;base64,` URL.
 */
export type ExportMessage =
  | { type: 'export'; format: 'csv'; fileName: string; rows: ExportRow[] }
  | { type: 'export'; format: 'png'; fileName: string; data: string };

export type WebviewMessage = { type: 'ready' } | { type: 'revealKey'; key: string } | ExportMessage;

/** The largest exports accepted: a card's PNG is well under a megabyte; a card holds at most a few million points. */
export const MAX_EXPORT_CHARS = 64 * 1024 * 1024;
export const MAX_EXPORT_ROWS = 10_000_000;
const PNG_DATA_URL = 'data:image/png;base64,';

export interface PanelRunRef {
  key: string;
  jobDir: string;
}

/**
 * What the panel's webview state holds so that a reload can restore it (`WebviewPanelSerializer`): one run, or the
 * runs of a compare panel (`compare`, with `key`/`jobDir` those of the first).
 */
export interface PanelState extends PanelRunRef {
  compare?: PanelRunRef[];
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const isStr = (v: unknown): v is string => typeof v === 'string';
const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isValue = (v: unknown): v is number | null => v === null || isNum(v);
/** A dotted config path as the drivers table writes them. */
const CONFIG_KEY = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;
const isKey = (v: unknown): v is string => isStr(v) && v.length <= 200 && CONFIG_KEY.test(v);

function isRun(v: unknown): v is DashboardRun {
  return (
    isObj(v) &&
    isStr(v.key) &&
    isStr(v.title) &&
    isStr(v.jobDir) &&
    isStr(v.status) &&
    (v.startedAt === undefined || (isNum(v.startedAt) && v.startedAt >= 0))
  );
}

const isSource = (v: unknown) => v === undefined || isStr(v);

function isSeries(v: unknown): v is Series {
  if (!isObj(v) || !isStr(v.run) || !isStr(v.tag) || !isSource(v.source)) return false;
  const { steps, times, values } = v;
  if (!Array.isArray(steps) || !Array.isArray(times) || !Array.isArray(values)) return false;
  if (steps.length !== times.length || steps.length !== values.length) return false;
  return steps.every(isNum) && times.every(isNum) && values.every(isValue);
}

function isPoint(v: unknown): v is MetricPoint {
  return (
    isObj(v) && isStr(v.run) && isStr(v.tag) && isSource(v.source) && isNum(v.step) && isNum(v.time) && isValue(v.value)
  );
}

function isCheckpoint(v: unknown): v is CheckpointMark {
  return isObj(v) && isNum(v.step) && v.step >= 0 && isStr(v.name) && (v.stage === undefined || isStr(v.stage));
}

function isSample(v: unknown): v is RolloutSampleMessage {
  return isObj(v) && isStr(v.prompt) && isStr(v.response) && isValue(v.reward);
}

/** A checked sample: its episode only as far as its fields check out (episode-record.ts). */
function sampleOf(v: RolloutSampleMessage): RolloutSampleMessage {
  const s: RolloutSampleMessage = { prompt: v.prompt, response: v.response, reward: v.reward };
  const episode = isObj(v.episode) ? episodeOfRecord(v.episode) : undefined;
  return episode ? { ...s, episode } : s;
}

function isRunConfig(v: unknown): v is RunConfigMessage {
  if (
    !isObj(v) ||
    !isStr(v.key) ||
    !isStr(v.source) ||
    !isStr(v.note) ||
    !isStr(v.yaml) ||
    !(v.error === undefined || isStr(v.error))
  )
    return false;
  return Array.isArray(v.flat) && v.flat.every((e) => Array.isArray(e) && e.length === 2 && isStr(e[0]) && isStr(e[1]));
}

/** A host -> webview message, or `undefined` when `data` is not one. */
export function parseHostMessage(data: unknown): HostMessage | undefined {
  if (!isObj(data)) return undefined;
  switch (data.type) {
    case 'init': {
      if (!isRun(data.run) || !Array.isArray(data.series) || !data.series.every(isSeries)) return undefined;
      if (data.compare === undefined) return { type: 'init', run: data.run, series: data.series };
      return Array.isArray(data.compare) && data.compare.length > 0 && data.compare.every(isRun)
        ? { type: 'init', run: data.run, series: data.series, compare: data.compare }
        : undefined;
    }
    case 'config':
      return Array.isArray(data.runs) && data.runs.every(isRunConfig) ? { type: 'config', runs: data.runs } : undefined;
    case 'append':
      return Array.isArray(data.points) && data.points.every(isPoint)
        ? { type: 'append', points: data.points }
        : undefined;
    case 'rollouts':
      if (!isNum(data.step) || !Array.isArray(data.samples) || !data.samples.every(isSample) || !isSource(data.origin))
        return undefined;
      if (data.eval !== undefined && !(isObj(data.eval) && isStr(data.eval.taskset) && isStr(data.eval.role)))
        return undefined;
      return {
        type: 'rollouts',
        step: data.step,
        samples: data.samples.map(sampleOf),
        ...(isStr(data.origin) ? { origin: data.origin } : {}),
        ...(isObj(data.eval) ? { eval: { taskset: String(data.eval.taskset), role: String(data.eval.role) } } : {}),
      };
    case 'status':
      return isStr(data.status) && isStr(data.detail)
        ? { type: 'status', status: data.status, detail: data.detail }
        : undefined;
    case 'drivers':
      return isObj(data.drivers) &&
        Object.values(data.drivers).every((keys) => Array.isArray(keys) && keys.every(isKey))
        ? { type: 'drivers', drivers: data.drivers as Record<string, string[]> }
        : undefined;
    case 'checkpoints':
      return Array.isArray(data.checkpoints) && data.checkpoints.every(isCheckpoint)
        ? {
            type: 'checkpoints',
            checkpoints: data.checkpoints.map((c) => ({
              step: c.step,
              name: c.name,
              ...(c.stage === undefined ? {} : { stage: c.stage }),
            })),
          }
        : undefined;
    default:
      return undefined;
  }
}

/** A webview -> host message, or `undefined` when `data` is not one. */
export function parseWebviewMessage(data: unknown): WebviewMessage | undefined {
  if (!isObj(data)) return undefined;
  if (data.type === 'ready') return { type: 'ready' };
  if (data.type === 'revealKey' && isKey(data.key)) return { type: 'revealKey', key: data.key };
  if (data.type !== 'export') return undefined;
  const { format, fileName } = data;
  if ((format !== 'csv' && format !== 'png') || !isStr(fileName)) return undefined;
  if (!isFileName(fileName) || !fileName.toLowerCase().endsWith(`.${format}`)) return undefined;
  if (format === 'csv') {
    const rows = data.rows;
    return Array.isArray(rows) && rows.length <= MAX_EXPORT_ROWS && rows.every(isExportRow)
      ? { type: 'export', format, fileName, rows: rows as ExportRow[] }
      : undefined;
  }
  const body = data.data;
  if (!isStr(body) || body.length > MAX_EXPORT_CHARS || !body.startsWith(PNG_DATA_URL)) return undefined;
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(body.slice(PNG_DATA_URL.length))) return undefined;
  return { type: 'export', format, fileName, data: body };
}

function isExportRow(v: unknown): v is ExportRow {
  return (
    isObj(v) &&
    isStr(v.run) &&
    isStr(v.tag) &&
    isNum(v.step) &&
    (v.wallTime === null || isNum(v.wallTime)) &&
    isValue(v.value)
  );
}

/** A plain file name: no directory part, no control characters, not `.` or `..`. */
function isFileName(s: string): boolean {
  return s.length > 0 && s.length <= 200 && !/[\\/\u0000-\u001f:*?"<>|]/.test(s) && s !== '.' && s !== '..';
}

const isRef = (v: unknown): v is PanelRunRef =>
  isObj(v) && isStr(v.key) && isStr(v.jobDir) && v.key.length > 0 && v.jobDir.length > 0;

export function parsePanelState(data: unknown): PanelState | undefined {
  if (!isRef(data)) return undefined;
  const { compare } = data as unknown as Obj;
  if (compare === undefined) return { key: data.key, jobDir: data.jobDir };
  if (!Array.isArray(compare) || compare.length === 0 || !compare.every(isRef)) return undefined;
  return { key: data.key, jobDir: data.jobDir, compare: compare.map((r) => ({ key: r.key, jobDir: r.jobDir })) };
}

/** A number for the wire: non-finite values become `null`. */
export function wireValue(v: number): number | null {
  return Number.isFinite(v) ? v : null;
}
