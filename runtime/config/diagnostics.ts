/** What the loader and validator report, and the stable codes they report under. */

/** Character offsets into the text, end exclusive (a diagnostic's place; every YAML node's range). */
export type Range = readonly [start: number, end: number];

export type Severity = 'error' | 'warning' | 'information' | 'hint';

/** Keys and list indices from the config root. */
export type Path = (string | number)[];

/** Machine-readable facts a quick fix can act on; which members are set depends on the code. */
export interface DiagnosticData {
  /** The config path the diagnostic is about. */
  path?: Path;
  /** Best replacement for a misspelled key or value. */
  suggestion?: string;
  /** All allowed names, when the value must be one of them. */
  candidates?: string[];
  /** Where a renamed or moved key now lives (dotted path from the root). */
  movedTo?: string;
  /** The value Trinity will use instead of what is written (or fills in). */
  value?: unknown;
  /** A key to add, and its value (a partial `*_args` missing required keys, a required section). */
  add?: { path: Path; value: unknown };
  /** The key at `path` has no effect: removing it (and parents it leaves empty) is the fix. */
  remove?: boolean;
  /** Named fixes that set one or more keys together (Trinity's GPU memory suggestions). */
  fixes?: KeyFix[];
}

/** A quick fix that sets each key to its value (adding it, with any missing parents, when absent). */
export interface KeyFix {
  title: string;
  set: { path: Path; value: string | number | boolean }[];
}

export interface ConfigDiagnostic {
  code: DiagnosticCode;
  severity: Severity;
  message: string;
  range: Range;
  data?: DiagnosticData;
}

interface CodeInfo {
  title: string;
  severity: Severity;
}

/**
 * Every code the project reports. Numbers are stable: never reuse or renumber one.
 * 0xx YAML and structure, 1xx interpolation, 2xx Trinity's launch checks, 3xx what Trinity finds only at run time,
 * 4xx run health (what a run's metrics show: runs/run-health.ts).
 */
export const CODES = {
  TRN001: { title: 'YAML syntax error', severity: 'error' },
  TRN002: { title: 'Duplicate key', severity: 'error' },
  TRN003: { title: 'YAML aliases expand too far', severity: 'error' },
  TRN004: { title: 'Top level is not a mapping', severity: 'error' },
  TRN005: { title: 'Unsupported YAML key', severity: 'error' },
  TRN009: { title: 'Internal error in a check', severity: 'warning' },
  TRN010: { title: 'Unknown key', severity: 'error' },
  TRN011: { title: 'Key not in this Trinity release', severity: 'error' },
  TRN012: { title: 'Deprecated key', severity: 'warning' },
  TRN013: { title: 'Key is set by Trinity', severity: 'warning' },
  TRN020: { title: 'Wrong value type', severity: 'error' },
  TRN021: { title: 'Null not allowed', severity: 'error' },
  TRN022: { title: 'Invalid enum value', severity: 'error' },
  TRN023: { title: 'Required key missing', severity: 'error' },
  TRN024: { title: 'Value outside what the library accepts', severity: 'error' },
  TRN030: { title: 'Unknown Trinity release', severity: 'warning' },
  TRN100: { title: 'Interpolation syntax error', severity: 'error' },
  TRN101: { title: 'Interpolation refers to a missing key', severity: 'error' },
  TRN102: { title: 'Environment variable not set', severity: 'error' },
  TRN103: { title: 'Interpolation cycle', severity: 'error' },
  TRN104: { title: 'Unknown resolver', severity: 'error' },
  TRN105: { title: 'Interpolation into trainer_config needs the key written', severity: 'error' },
  TRN106: { title: 'Interpolated value has the wrong type', severity: 'error' },
  TRN107: { title: 'Resolver failed', severity: 'error' },
  TRN200: { title: 'Invalid mode', severity: 'error' },
  TRN201: { title: 'Invalid algorithm type', severity: 'error' },
  TRN202: { title: 'Invalid algorithm function', severity: 'error' },
  TRN203: { title: 'Algorithm function filled in', severity: 'information' },
  TRN204: { title: 'DPO setting changed', severity: 'warning' },
  TRN205: { title: 'Mode not supported by algorithm', severity: 'error' },
  TRN206: { title: 'Required buffer path missing', severity: 'error' },
  TRN207: { title: 'loss_agg_mode overrides policy_loss_fn_args', severity: 'information' },
  TRN208: { title: 'Deprecated setting migrated', severity: 'warning' },
  TRN209: { title: 'Job directory already exists', severity: 'warning' },
  TRN210: { title: 'Token lengths exceed max_model_len', severity: 'error' },
  TRN211: { title: 'Token lengths filled in', severity: 'warning' },
  TRN212: { title: 'max_model_len cannot be determined', severity: 'error' },
  TRN213: { title: 'min_response_tokens adjusted', severity: 'warning' },
  TRN214: { title: 'Value is overwritten', severity: 'warning' },
  TRN220: { title: 'Not enough GPUs', severity: 'error' },
  TRN221: { title: 'Batch size not divisible by trainer GPUs', severity: 'error' },
  TRN222: { title: 'GPU layout invalid', severity: 'error' },
  TRN223: { title: 'Cluster value filled in', severity: 'information' },
  TRN224: { title: 'Mode switched', severity: 'warning' },
  TRN230: { title: 'Synchronization method changed', severity: 'warning' },
  TRN231: { title: 'Invalid sync interval', severity: 'error' },
  TRN232: { title: 'eval_interval adjusted', severity: 'warning' },
  TRN240: { title: 'Invalid monitor type', severity: 'error' },
  TRN241: { title: 'Monitor a local run does not reach', severity: 'information' },
  TRN250: { title: 'Taskset path missing', severity: 'error' },
  TRN252: { title: 'Eval taskset without path', severity: 'warning' },
  TRN253: { title: 'Experience buffer changed', severity: 'warning' },
  TRN254: { title: 'train_batch_size required', severity: 'error' },
  TRN255: { title: 'Buffer value filled in', severity: 'information' },
  TRN256: { title: 'Invalid buffer setting', severity: 'error' },
  TRN257: { title: 'Invalid task pipeline setting', severity: 'error' },
  TRN260: { title: 'Invalid explorer setting', severity: 'error' },
  TRN261: { title: 'Explorer value adjusted', severity: 'warning' },
  TRN262: { title: 'Invalid LoRA setting', severity: 'error' },
  TRN263: { title: 'Service exposed to the network', severity: 'warning' },
  TRN270: { title: 'Invalid trainer setting', severity: 'error' },
  TRN271: { title: 'Trainer value adjusted', severity: 'warning' },
  TRN272: { title: 'Trainer config path invalid', severity: 'error' },
  TRN273: { title: "Trainer memory above Trinity's limit", severity: 'warning' },
  TRN274: { title: 'Trainer memory exceeds the GPU', severity: 'error' },
  TRN280: { title: 'Invalid stage', severity: 'error' },
  TRN290: { title: 'Invalid model setting', severity: 'error' },
  TRN300: { title: 'Unknown registry name', severity: 'warning' },
  TRN301: { title: 'Partial *_args crash the constructor', severity: 'error' },
  TRN302: { title: 'Unknown *_args key', severity: 'error' },
  TRN303: { title: 'Group advantage with repeat_times 1', severity: 'warning' },
  TRN304: { title: 'Local path does not exist', severity: 'error' },
  TRN305: { title: 'Dataset lacks a configured key', severity: 'error' },
  TRN306: { title: 'Dataset could not be read', severity: 'warning' },
  TRN307: { title: 'Unknown workflow or reward function', severity: 'error' },
  TRN308: { title: 'Invalid function argument', severity: 'error' },
  TRN309: { title: 'Auxiliary buffer missing', severity: 'error' },
  TRN310: { title: 'Advantage computed on the wrong side', severity: 'error' },
  TRN311: { title: 'Offline data read from a queue', severity: 'error' },
  TRN312: { title: 'Runs on Trinity-RFT only', severity: 'information' },
  TRN313: { title: 'Workflow requirement unmet', severity: 'error' },
  TRN314: { title: 'vLLM engine cannot start: no room for the KV cache', severity: 'error' },
  TRN315: { title: 'vLLM KV cache holds fewer sequences than the explorer sends', severity: 'warning' },
  TRN316: { title: 'Workflow argument not read', severity: 'warning' },
  TRN317: { title: 'Task rows lack what the workflow reads', severity: 'warning' },
  TRN318: { title: 'Context longer than the model', severity: 'error' },
  TRN319: { title: 'Scale a local run does not use', severity: 'information' },
  TRN320: { title: 'Unsupported input_save_path', severity: 'error' },
  TRN321: { title: 'First prompt longer than the context allows', severity: 'warning' },
  TRN322: { title: 'Fewer turns fit the context than the episode allows', severity: 'warning' },
  TRN323: { title: "Trainer pass exceeds the wasm backend's heap", severity: 'error' },
  TRN324: { title: "Trainer pass close to the wasm backend's heap", severity: 'warning' },
  TRN325: { title: "Explorer generation exceeds the wasm backend's heap", severity: 'error' },
  TRN326: { title: "Explorer generation close to the wasm backend's heap", severity: 'warning' },
  TRN400: { title: 'Responses truncated at max_response_tokens', severity: 'warning' },
  TRN401: { title: 'No learning signal: identical rewards in every group', severity: 'warning' },
  TRN402: { title: 'Entropy collapse', severity: 'warning' },
  TRN403: { title: 'KL blow-up', severity: 'warning' },
  TRN404: { title: 'Gradient norm blow-up', severity: 'warning' },
  TRN405: { title: 'Run stalled', severity: 'warning' },
  TRN406: { title: 'Trainer takes no steps', severity: 'warning' },
  TRN407: { title: 'Agent episodes cut by the token budget', severity: 'warning' },
  TRN408: { title: 'Every agent episode ends the same way', severity: 'warning' },
  TRN409: { title: 'Agent episodes end on an invalid action', severity: 'warning' },
} as const satisfies Record<string, CodeInfo>;

export type DiagnosticCode = keyof typeof CODES;

/** Where each code is documented. */
export function codeDocUrl(code: DiagnosticCode): string {
  return `https://github.com/trinity-workbench/trinity-workbench/blob/main/docs/diagnostics.md#${code.toLowerCase()}`;
}
