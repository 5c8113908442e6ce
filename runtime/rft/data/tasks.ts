/**
 * Tasksets → Tasks, as Trinity's TaskFileReader + TaskFormatter build them (trinity/buffer/reader/file_reader.py,
 * trinity/buffer/schema/formatter.py `TaskFormatter`, trinity/common/workflows/workflow.py `Task`), with the
 * set_if_none fallbacks of trinity/common/config_validator.py `_check_explorer_input`.
 *
 * Each row becomes one Task holding the raw row, its dataset index, the taskset's format / rollout_args /
 * workflow_args / reward_fn_args / repeat_times / is_eval, and the resolved workflow and reward function names:
 * the row's `format.workflow_key` / `format.reward_fn_key` value when it names a registered one, else the taskset
 * default (Trinity: `WORKFLOWS.get(row_value) or default`). A row with no workflow at all is an error, as Trinity's
 * "`default_workflow_type` or `workflow_key` is required" assertion.
 *
 * Stricter than Trinity (which builds the Task and lets the workflow fail at run time): rows must hold the keys their
 * workflow reads (the `format` columns of runtime/config/model/task-columns.ts, image/video keys when set), checked
 * at load with an error naming file, line and key. `onInvalidRow: 'skip'` skips and counts such rows instead
 * (Trinity has no skip option: its `load_dataset` fails on a malformed line).
 */
import { sectionDefaults } from '../../config/model/defaults';
import { registryEntryAt, registryNamesAt } from '../../config/model/registries';
import { taskColumnsRead } from '../../config/model/task-columns';
import { RELEASES } from '../../config/releases';
import * as Sections from '../../config/model/sections';
import type { DataSelectorConfig, FormatConfig, GenerationConfig } from '../../config/types.generated';
import { DataError } from '../../config/datasets/data-error';
import { describeSource, loadDatasetRows, type RowSource, type SkippedRow } from './load-dataset';
import { BatchReader, MultiReaderScheduler } from './reader';

export type { RowSource, SkippedRow } from './load-dataset';

/** A taskset as written in a config (TasksetConfig of any release, or an older StorageConfig); unset = default. */
export interface TasksetInput {
  name?: string | null;
  storage_type?: string | null;
  path?: string | null;
  split?: string | null;
  subset_name?: string | null;
  format?: Partial<FormatConfig> | null;
  default_workflow_type?: string | null;
  /** StorageConfig (≤ v0.3.1) only: the workflow of eval tasksets. */
  default_eval_workflow_type?: string | null;
  default_reward_fn_type?: string | null;
  rollout_args?: Partial<GenerationConfig> | null;
  workflow_args?: Record<string, unknown> | null;
  reward_fn_args?: Record<string, unknown> | null;
  data_selector?: Partial<DataSelectorConfig> | null;
  /** Deprecated alias of data_selector; wins when set, as in Trinity. */
  task_selector?: Partial<DataSelectorConfig> | null;
  repeat_times?: number | null;
  index?: number | null;
  is_eval?: boolean | null;
  total_epochs?: number | null;
  total_steps?: number | null;
  batch_size?: number | null;
}

export interface Task {
  /** The taskset's name (`taskset_<i>` / `eval_taskset_<i>` when unnamed, as Trinity names them). */
  tasksetName: string;
  /** Index of the row in the loaded taskset (Trinity's `task.index["index"]`); rows skipped for missing keys keep their place. */
  index: number;
  /** Which taskset of several a scheduled task came from (Trinity's `task.index["taskset_id"]`). */
  tasksetId?: number;
  /** The row as loaded (Trinity's `raw_task`): every column, null where the row lacks it. */
  raw: Record<string, unknown>;
  source: RowSource;
  /** Resolved workflow name. */
  workflow: string;
  /** Resolved reward function name; null leaves the choice to the workflow (e.g. math_workflow → math_reward). */
  rewardFn: string | null;
  format: FormatConfig;
  rolloutArgs: GenerationConfig;
  workflowArgs: Record<string, unknown>;
  rewardFnArgs: Record<string, unknown>;
  repeatTimes: number;
  isEval: boolean;
  /** Trinity's `task.task_desc`: `raw[format.prompt_key]`, null when absent. */
  taskDesc: unknown;
  /** Trinity's `task.truth`: `raw[format.response_key]`, null when absent. */
  truth: unknown;
}

/** The taskset with Trinity's defaults and fallbacks applied: what the Tasks and the batch reader use. */
export interface ResolvedTaskset {
  name: string;
  path: string;
  split: string;
  subsetName: string | null;
  isEval: boolean;
  format: FormatConfig;
  rolloutArgs: GenerationConfig;
  workflowArgs: Record<string, unknown>;
  rewardFnArgs: Record<string, unknown>;
  repeatTimes: number;
  defaultWorkflowType: string | null;
  defaultRewardFnType: string | null;
  dataSelector: DataSelectorConfig;
  index: number;
  totalEpochs: number;
  totalSteps: number | null;
  batchSize: number | null;
}

export interface ReadTasksOptions {
  /** Directory a relative `path` resolves against (the config file's directory). */
  baseDir: string;
  /** `error` (default): the first bad row throws a DataError naming file, line and key. `skip`: bad rows go to `skipped`. */
  onInvalidRow?: 'error' | 'skip';
  /** Keys every row must hold (non-null). Default: see `defaultRequiredKeys`. */
  requiredKeys?: readonly string[];
  /** Position among the tasksets (or eval tasksets), for the default name. Default 0. */
  position?: number;
  /** `buffer.explorer_input` fallbacks, applied where the taskset leaves them unset (Trinity's set_if_none). */
  explorerInput?: {
    default_workflow_type?: string | null;
    default_eval_workflow_type?: string | null;
    default_reward_fn_type?: string | null;
  };
  /** `model` fallbacks for rollout_args and format.chat_template (set_if_none), as Trinity's validator fills them. */
  model?: {
    temperature?: number | null;
    top_p?: number | null;
    top_k?: number | null;
    logprobs?: number | null;
    max_response_tokens?: number | null;
    custom_chat_template?: string | null;
  };
  /** `algorithm.repeat_times`: forced onto training tasksets (eval tasksets keep their own), as Trinity does. */
  algorithmRepeatTimes?: number;
  /** `buffer.batch_size`, `total_epochs`, `total_steps`, copied onto the taskset as Trinity's validator does. */
  buffer?: { batch_size?: number | null; total_epochs?: number | null; total_steps?: number | null };
  /** Workflow names a row's `workflow_key` may name (beyond Trinity's registry at main). Dotted module paths always pass. */
  workflows?: readonly string[];
  rewardFns?: readonly string[];
}

export interface ReadTasksResult {
  tasks: Task[];
  skipped: SkippedRow[];
  taskset: ResolvedTaskset;
  files: string[];
  columns: string[];
  warnings: string[];
}

/**
 * The keys a row needs for its workflow: the `format` columns a built-in workflow reads, from the config model's one
 * table (the checker asks the data for the same ones), plus image/video keys when set for the multi-modal ones. A
 * plugin's workflow (a name no Trinity release registers) gets none: it checks its own rows.
 */
export function defaultRequiredKeys(workflow: string, format: FormatConfig): string[] {
  if (!RELEASES.some((r) => registryEntryAt('workflow', workflow, r))) return [];
  const reads = taskColumnsRead(workflow);
  const keys = [...(reads.prompt ? [format.prompt_key] : []), ...(reads.response ? [format.response_key] : [])];
  if (workflow.includes('mm_workflow')) {
    if (format.image_key) keys.push(format.image_key);
    if (format.video_key) keys.push(format.video_key);
  }
  return keys;
}

function defaults<T>(section: unknown): T {
  return structuredClone(sectionDefaults(section as Parameters<typeof sectionDefaults>[0], 'main')) as T;
}

/** Overlays the set (non-undefined) values of `given` on `base`. */
function overlay<T extends object>(base: T, given: Partial<T> | null | undefined): T {
  const out = { ...base };
  if (given) for (const [k, v] of Object.entries(given)) if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  return out;
}

/** FormatConfig with main's defaults for unset keys. */
export function resolveFormat(given?: Partial<FormatConfig> | null): FormatConfig {
  const f = overlay(defaults<FormatConfig>(Sections.FormatConfig), given);
  f.prompt_type = String(f.prompt_type ?? 'messages').toLowerCase() as FormatConfig['prompt_type'];
  return f;
}

export function resolveTaskset(
  taskset: TasksetInput,
  opts: Omit<ReadTasksOptions, 'baseDir'> = {},
): { taskset: ResolvedTaskset; warnings: string[] } {
  const warnings: string[] = [];
  const isEval = taskset.is_eval === true;
  const name = taskset.name || `${isEval ? 'eval_' : ''}taskset_${opts.position ?? 0}`;
  const path = typeof taskset.path === 'string' ? taskset.path.trim() : '';
  if (path === '') throw new DataError(`${isEval ? 'Eval' : 'Train'} taskset [${name}]'s path is not configured.`);

  const format = resolveFormat(taskset.format);
  const model = opts.model ?? {};
  if (format.chat_template == null && model.custom_chat_template != null)
    format.chat_template = model.custom_chat_template;
  const rolloutArgs = overlay(defaults<GenerationConfig>(Sections.GenerationConfig), taskset.rollout_args);
  for (const k of ['temperature', 'top_p', 'top_k', 'logprobs'] as const) {
    if (rolloutArgs[k] == null && model[k] != null) (rolloutArgs as unknown as Record<string, unknown>)[k] = model[k];
  }
  if (rolloutArgs.max_tokens == null && model.max_response_tokens != null)
    rolloutArgs.max_tokens = model.max_response_tokens;

  let dataSelector = overlay(defaults<DataSelectorConfig>(Sections.DataSelectorConfig), taskset.data_selector);
  if (taskset.task_selector) {
    dataSelector = overlay(defaults<DataSelectorConfig>(Sections.DataSelectorConfig), taskset.task_selector);
    warnings.push('[DEPRECATED] Please use `data_selector` instead of `task_selector`.');
  }

  const ei = opts.explorerInput ?? {};
  let defaultWorkflowType = taskset.default_workflow_type ?? null;
  if (isEval)
    defaultWorkflowType =
      taskset.default_eval_workflow_type ?? defaultWorkflowType ?? ei.default_eval_workflow_type ?? null;
  defaultWorkflowType ??= ei.default_workflow_type ?? null;
  const defaultRewardFnType = taskset.default_reward_fn_type ?? ei.default_reward_fn_type ?? null;

  let repeatTimes = taskset.repeat_times ?? 1;
  if (!isEval && opts.algorithmRepeatTimes !== undefined) repeatTimes = opts.algorithmRepeatTimes;
  const buffer = opts.buffer ?? {};
  return {
    taskset: {
      name,
      path,
      split: taskset.split || 'train',
      subsetName: taskset.subset_name ?? null,
      isEval,
      format,
      rolloutArgs,
      workflowArgs: { ...(taskset.workflow_args ?? {}) },
      rewardFnArgs: { ...(taskset.reward_fn_args ?? {}) },
      repeatTimes,
      defaultWorkflowType,
      defaultRewardFnType,
      dataSelector,
      index: taskset.index ?? 0,
      totalEpochs: isEval ? 1 : (buffer.total_epochs ?? taskset.total_epochs ?? 1),
      totalSteps: isEval ? null : (buffer.total_steps ?? taskset.total_steps ?? null),
      batchSize: buffer.batch_size ?? taskset.batch_size ?? null,
    },
    warnings,
  };
}

/** Which format field(s) name a key, for messages: `format.prompt_key`. */
function keyRole(format: FormatConfig, key: string): string {
  const roles = (Object.keys(format) as (keyof FormatConfig)[])
    .filter((k) => k.endsWith('_key') && format[k] === key)
    .map((k) => `format.${k}`);
  return roles.length > 0 ? ` (${roles.join(', ')})` : '';
}

function isMissing(row: Record<string, unknown>, key: string): boolean {
  return !(key in row) || row[key] === null || row[key] === undefined;
}

/** Reads a taskset's rows and builds its Tasks. */
export async function readTasks(taskset: TasksetInput, opts: ReadTasksOptions): Promise<ReadTasksResult> {
  const { taskset: ts, warnings } = resolveTaskset(taskset, opts);
  const onInvalid = opts.onInvalidRow ?? 'error';
  const loaded = await loadDatasetRows(
    {
      path: ts.path,
      split: ts.split,
      subset_name: ts.subsetName,
      storage_type: taskset.storage_type,
      name: ts.name,
      kind: 'taskset',
    },
    { baseDir: opts.baseDir, onInvalidRow: onInvalid },
  );
  warnings.push(...loaded.warnings);
  const skipped: SkippedRow[] = [...loaded.skipped];
  const format = ts.format;
  const names = new RowNames(ts, opts, warnings);

  // A key that no row has at all is a config mistake, not a bad row: it fails in either mode.
  const columns = new Set(loaded.columns);
  const checkColumn = (key: string) => {
    if (!columns.has(key) && loaded.rows.length > 0) {
      throw new DataError(
        `taskset '${ts.name}': ${loaded.files.join(', ')} has no column '${key}'${keyRole(format, key)}; columns: ${loaded.columns.join(', ')}`,
        loaded.files[0],
        undefined,
        key,
      );
    }
  };

  const tasks: Task[] = [];
  for (const [position, { row, source }] of loaded.rows.entries()) {
    const bad = (reason: string, key?: string) => {
      const message = `${describeSource(source)}: ${reason}`;
      if (onInvalid === 'error') throw new DataError(message, source.file, source.line, key);
      skipped.push({ source, key, reason: message });
    };
    const workflow = names.workflowOf(row);
    if (!workflow) {
      bad(
        `no workflow: '${format.workflow_key}' (format.workflow_key) is empty or unknown and the taskset has no default_workflow_type`,
        format.workflow_key,
      );
      continue;
    }
    const rewardFn = names.rewardOf(row);
    const required = opts.requiredKeys ?? defaultRequiredKeys(workflow, format);
    const missing = required.find((k) => isMissing(row, k));
    if (missing !== undefined) {
      checkColumn(missing);
      bad(
        `row has no '${missing}'${keyRole(format, missing)} (null or absent), which workflow ${workflow} needs`,
        missing,
      );
      continue;
    }
    tasks.push(buildTask(ts, position, row, source, workflow, rewardFn));
  }
  warnings.push(...names.unknownRowWarnings());
  return { tasks, skipped, taskset: ts, files: loaded.files, columns: loaded.columns, warnings };
}

/**
 * Which workflow and reward function each row runs: the row's `workflow_key` / `reward_fn_key` value when it names
 * a registered one, else the taskset's default (Trinity: `WORKFLOWS.get(row_value) or default`). Counts the rows
 * whose names fell back, for one warning each.
 */
class RowNames {
  private readonly workflows: Set<string>;
  private readonly rewards: Set<string>;
  private readonly defaultWorkflow: string | null;
  private readonly defaultReward: string | null;
  private unknownWorkflows = 0;
  private unknownRewards = 0;

  constructor(
    private readonly ts: ResolvedTaskset,
    opts: ReadTasksOptions,
    warnings: string[],
  ) {
    this.workflows = new Set([...registryNamesAt('workflow', 'main'), ...(opts.workflows ?? [])]);
    this.rewards = new Set([...registryNamesAt('reward_fn', 'main'), ...(opts.rewardFns ?? [])]);
    this.defaultWorkflow = isKnown(this.workflows, ts.defaultWorkflowType) ? ts.defaultWorkflowType : null;
    this.defaultReward = isKnown(this.rewards, ts.defaultRewardFnType) ? ts.defaultRewardFnType : null;
    if (ts.defaultRewardFnType && !this.defaultReward) {
      warnings.push(
        `taskset '${ts.name}': default_reward_fn_type '${ts.defaultRewardFnType}' is not a registered reward function; Trinity's registry lookup gives None`,
      );
    }
    if (!this.defaultWorkflow && !ts.format.workflow_key) {
      throw new DataError(
        ts.defaultWorkflowType
          ? `taskset '${ts.name}': default_workflow_type '${ts.defaultWorkflowType}' is not a registered workflow, and format.workflow_key is not set ("\`default_workflow_type\` or \`workflow_key\` is required")`
          : `taskset '${ts.name}': \`default_workflow_type\` or \`workflow_key\` is required`,
      );
    }
  }

  workflowOf(row: Record<string, unknown>): string | null {
    const named = this.rowName(row, this.ts.format.workflow_key, this.workflows);
    if (named === undefined) this.unknownWorkflows++;
    return named || this.defaultWorkflow;
  }

  rewardOf(row: Record<string, unknown>): string | null {
    const named = this.rowName(row, this.ts.format.reward_fn_key, this.rewards);
    if (named === undefined) this.unknownRewards++;
    return named || this.defaultReward;
  }

  unknownRowWarnings(): string[] {
    const out: string[] = [];
    const { name, format } = this.ts;
    if (this.unknownWorkflows > 0) {
      out.push(
        `taskset '${name}': ${this.unknownWorkflows} row(s) name an unregistered workflow in '${format.workflow_key}'; Trinity falls back to default_workflow_type for them`,
      );
    }
    if (this.unknownRewards > 0) {
      out.push(
        `taskset '${name}': ${this.unknownRewards} row(s) name an unregistered reward function in '${format.reward_fn_key}'; Trinity falls back to default_reward_fn_type for them`,
      );
    }
    return out;
  }

  /** The registered name the row gives; null when it gives none, undefined when it gives an unknown one. */
  private rowName(
    row: Record<string, unknown>,
    key: string | null | undefined,
    known: Set<string>,
  ): string | null | undefined {
    const value = key ? row[key] : null;
    if (value === null || value === undefined || value === '') return null;
    return isKnown(known, value) ? value : undefined;
  }
}

function isKnown(set: Set<string>, n: unknown): n is string {
  return typeof n === 'string' && n !== '' && (set.has(n) || n.includes('.'));
}

function buildTask(
  ts: ResolvedTaskset,
  index: number,
  row: Record<string, unknown>,
  source: RowSource,
  workflow: string,
  rewardFn: string | null,
): Task {
  const { format } = ts;
  return {
    tasksetName: ts.name,
    index,
    raw: row,
    source,
    workflow,
    rewardFn,
    format,
    rolloutArgs: ts.rolloutArgs,
    workflowArgs: ts.workflowArgs,
    rewardFnArgs: ts.rewardFnArgs,
    repeatTimes: ts.repeatTimes,
    isEval: ts.isEval,
    taskDesc: format.prompt_key in row ? row[format.prompt_key] : null,
    truth: format.response_key in row ? row[format.response_key] : null,
  };
}

export interface TaskReaderOptions {
  /** `buffer.batch_size`; default the taskset's batch_size. */
  batchSize?: number;
  totalEpochs?: number;
  totalSteps?: number | null;
  /** Resume offset; default the taskset's `index`. */
  offset?: number;
}

/**
 * One taskset's batches as Trinity reads them: training tasksets serve `total_epochs` (or `total_steps` batches) and
 * drop the last incomplete batch; eval tasksets are read once, keeping it. A sequential training taskset is read in
 * order from its `index` (SimpleTasksetScheduler); other selectors pick the rows.
 */
export function taskBatchReader(result: ReadTasksResult, opts: TaskReaderOptions = {}): BatchReader<Task> {
  const ts = result.taskset;
  const batchSize = opts.batchSize ?? ts.batchSize;
  if (!batchSize) throw new DataError(`taskset '${ts.name}': no batch size (buffer.batch_size)`);
  const sequential = (ts.dataSelector.selector_type ?? 'sequential') === 'sequential';
  return new BatchReader(result.tasks, {
    name: ts.name,
    batchSize,
    totalEpochs: ts.isEval ? 1 : (opts.totalEpochs ?? ts.totalEpochs),
    totalSteps: ts.isEval ? null : opts.totalSteps !== undefined ? opts.totalSteps : ts.totalSteps,
    dropLast: !ts.isEval,
    offset: opts.offset ?? ts.index,
    selector: ts.isEval || !sequential ? ts.dataSelector : null,
    column: (key) => result.tasks.map((t) => t.raw[key]),
  });
}

/**
 * The explorer's task schedule over its training tasksets (Trinity's get_taskset_scheduler): one sequential taskset
 * is read in order; otherwise every step draws `batchSize` tasks across the tasksets by a per-epoch shuffle, and each
 * task carries its `tasksetId`. `next()` returns null when the schedule is done.
 */
export function taskScheduler(
  tasksets: readonly ReadTasksResult[],
  opts: {
    batchSize: number;
    totalEpochs?: number;
    totalSteps?: number | null;
    /** Resume: explorer steps done (Trinity's `latest_iteration`). */
    step?: number;
    /** Resume: each taskset's checkpointed `{ current_index }` (Trinity's `taskset_states`); one sequential taskset uses it as its offset. */
    states?: readonly { current_index: number }[];
  },
): { next(): Task[] | null } {
  if (tasksets.length === 0) throw new DataError('At least one taskset should be provided in explorer_input!');
  if (tasksets.length === 1 && (tasksets[0].taskset.dataSelector.selector_type ?? 'sequential') === 'sequential') {
    const reader = taskBatchReader(tasksets[0], { ...opts, offset: opts.states?.[0]?.current_index });
    return { next: () => reader.next()?.items ?? null };
  }
  const readers = tasksets.map((r, i) => {
    if (r.taskset.isEval)
      throw new DataError(`taskset '${r.taskset.name}' is an eval taskset; the scheduler reads training tasksets`);
    return new BatchReader(r.tasks, {
      name: r.taskset.name,
      batchSize: opts.batchSize,
      totalEpochs: opts.totalEpochs ?? r.taskset.totalEpochs,
      totalSteps: opts.totalSteps !== undefined ? opts.totalSteps : r.taskset.totalSteps,
      dropLast: true,
      selector: r.taskset.dataSelector,
      selectorOffset: opts.states?.[i]?.current_index,
      column: (key) => r.tasks.map((t) => t.raw[key]),
    });
  });
  const scheduler = new MultiReaderScheduler(readers, opts);
  return {
    next() {
      const b = scheduler.next();
      return b ? b.items.map((t, i) => ({ ...t, tasksetId: b.readerIds[i] })) : null;
    },
  };
}
