/**
 * What Trinity only finds at run time, often an hour into a job: workflow and reward names that are looked up
 * lazily per task, `*_args` mappings that crash a constructor, group-relative advantages with one sample per
 * group, and local dataset paths that do not exist. Runs on the config after the launch checks filled it in.
 */
import { isAbsolute, resolve } from 'node:path';
import { ALGORITHM_PIECES, algorithmTypeAt, EXPLORER_SIDE_ADVANTAGES, fnSpecAt } from '../model/algorithms';
import { rolesOf } from '../model/choices';
import { registryNamesAt } from '../model/registries';
import { didYouMean } from '../suggest';
import type { CheckContext } from './check-context';
import { storagePaths, taskPipelineOutputPath, tasksetPaths, workflowTypePath } from './tasksets';
import { configPath, type ConfigPath, type TasksetPath } from '../config-path';
import { checkWorkflowNeeds } from './workflow-needs';
import { checkModelContext } from './model-context';
import { checkEngineMemory } from './engine-memory';
import { checkTrainerHeap } from './trainer-heap';
import { checkExplorerHeap } from './explorer-heap';

/** Advantage functions that normalise within a task's group of `repeat_times` rollouts. */
const GROUP_ADVANTAGES =
  /^(grpo|grpo_verl|step_wise_grpo|opmd|opmd_verl|asymre|asymre_verl|rloo|rec|on_policy_distill|jsd)$/;

export function runRuntimeChecks(ctx: CheckContext): void {
  checkOfflineSource(ctx);
  checkWorkflowsAndRewards(ctx);
  checkWorkflowNeeds(ctx);
  checkFnArgs(ctx);
  checkArgValues(ctx);
  checkAdvantageSide(ctx);
  checkMixBuffer(ctx);
  checkGroupSize(ctx);
  checkLocalPaths(ctx);
  checkInputSavePath(ctx);
  checkModelContext(ctx);
  checkEngineMemory(ctx);
  checkTrainerHeap(ctx);
  checkExplorerHeap(ctx);
}

/** SFT and DPO in train mode read a dataset; a queue is only ever filled by an explorer, which train mode lacks. */
function checkOfflineSource(ctx: CheckContext): void {
  const type = ctx.get('algorithm.algorithm_type');
  if (ctx.get('mode') !== 'train' || (type !== 'sft' && type !== 'dpo')) return;
  const eb = 'buffer.trainer_input.experience_buffer';
  if (String(ctx.get(`${eb}.storage_type`)).toLowerCase() !== 'queue') return;
  const written = ctx.written(`${eb}.storage_type`);
  ctx.report(
    'TRN311',
    `\`${eb}\` is a \`queue\`${written ? '' : ` (the default since v0.4.0)`}, which only an explorer fills; in \`train\` mode the ${type.toUpperCase()} trainer would wait \`max_read_timeout\` for data and stop. Set \`storage_type: file\` (or \`sql\`) to read the dataset at \`path\`.`,
    written ? `${eb}.storage_type` : eb,
    { path: ['buffer', 'trainer_input', 'experience_buffer', 'storage_type'], value: 'file' },
  );
}

function checkWorkflowsAndRewards(ctx: CheckContext): void {
  if (!rolesOf(ctx.get('mode') ?? 'both').explorer) return;
  for (const base of tasksetPaths(ctx)) {
    checkWorkflowNamed(ctx, base);
    checkRegistryName(ctx, workflowTypePath(ctx, base), 'workflow');
    checkRegistryName(ctx, `${base}.default_reward_fn_type`, 'reward_fn');
  }
}

/**
 * A taskset with no workflow for its rows: Trinity's task formatter asserts "`default_workflow_type` or
 * `workflow_key` is required" on the first task (trinity/buffer/schema/formatter.py `TaskFormatter`, 10796ed).
 */
function checkWorkflowNamed(ctx: CheckContext, base: TasksetPath): void {
  if (ctx.get('mode') === 'serve') return; // serve answers requests; it reads no taskset
  const named = (v: unknown): boolean => typeof v === 'string' && v !== '';
  const fallbacks = base.includes('eval_tasksets')
    ? ['buffer.explorer_input.default_eval_workflow_type', 'buffer.explorer_input.default_workflow_type']
    : ['buffer.explorer_input.default_workflow_type'];
  const candidates = [workflowTypePath(ctx, base), `${base}.format.workflow_key`, ...fallbacks];
  if (candidates.some((p) => named(ctx.get(configPath(p))))) return;
  ctx.report(
    'TRN307',
    `\`${base}\` names no workflow (no \`default_workflow_type\` here or in \`buffer.explorer_input\`, no \`format.workflow_key\`): ` +
      'Trinity fails on the first task ("`default_workflow_type` or `workflow_key` is required"). Set `default_workflow_type`.',
    base,
    { candidates: registryNamesAt('workflow', ctx.release) },
  );
}

function checkRegistryName(ctx: CheckContext, path: ConfigPath, registry: 'workflow' | 'reward_fn'): void {
  const name = ctx.get(path);
  if (typeof name !== 'string' || name === '') return;
  if (ctx.isRegistered(registry, name)) return;
  const what = registry === 'workflow' ? 'workflow' : 'reward function';
  const names = registryNamesAt(registry, ctx.release);
  const at = writtenOrigin(ctx, path);
  ctx.report(
    'TRN307',
    `\`${name}\` is not a registered ${what} in Trinity ${ctx.release}; the job would fail when it formats the first task.${didYouMean(name, names)} ` +
      `(One defined in a plugin folder is found once the folder is named: add it to \`trinityWorkbench.pluginDirs\` ` +
      '(the quick fix offers the folders beside this file that register it), or pass `--plugin-dir DIR` to ' +
      '`trinity-workbench check` and `run`.)',
    at,
    { candidates: names },
  );
}

/** Where a value copied from `explorer_input.*` into a taskset was actually written. */
function writtenOrigin(ctx: CheckContext, path: ConfigPath): ConfigPath {
  if (ctx.written(path)) return path;
  const key = path.slice(path.lastIndexOf('.') + 1);
  const fallback = configPath(`buffer.explorer_input.${key}`);
  return ctx.written(fallback) ? fallback : path;
}

function checkFnArgs(ctx: CheckContext): void {
  const algo = ctx.get('algorithm') as Record<string, unknown> | undefined;
  if (!algo) return;
  for (const { key, registry } of ALGORITHM_PIECES) {
    const name = algo[key];
    const argsKey = `${key}_args` as const;
    if (typeof name !== 'string' || !ctx.written(`algorithm.${argsKey}`)) continue;
    const args = algo[argsKey];
    if (args === null || typeof args !== 'object') continue;
    const spec = fnSpecAt(registry, name, ctx.release);
    if (!spec) continue;
    const given = Object.keys(args as object);
    const missing = spec.params.filter((p) => p.required && !given.includes(p.name));
    // Losses with a (clip_range, clip_range_low, clip_range_high) triple need each side from one of two keys.
    if (
      ['clip_range', 'clip_range_low', 'clip_range_high'].every((k) => spec.params.some((p) => p.name === k)) &&
      !given.includes('clip_range')
    ) {
      for (const side of ['clip_range_low', 'clip_range_high']) {
        if (!given.includes(side))
          missing.push({ name: side, required: true, default: spec.defaultArgs[side] ?? spec.defaultArgs.clip_range });
      }
    }
    if (missing.length > 0) {
      const add = Object.fromEntries(missing.map((p) => [p.name, spec.defaultArgs[p.name] ?? p.default ?? null]));
      ctx.report(
        'TRN301',
        `\`algorithm.${argsKey}\` replaces the defaults of \`${name}\` wholesale, and lacks ${missing.map((p) => `\`${p.name}\``).join(', ')}: ` +
          `the ${key.replace(/_/g, ' ')} constructor fails when the trainer starts. Add ${missing.length === 1 ? 'it' : 'them'} (defaults: ${JSON.stringify(add)}).`,
        `algorithm.${argsKey}`,
        { add: { path: ['algorithm', argsKey], value: add } },
      );
    }
    if (!spec.acceptsExtraKwargs) {
      const known = spec.params.map((p) => p.name);
      for (const k of given) {
        if (known.includes(k)) continue;
        ctx.report(
          'TRN302',
          `\`${k}\` is not an argument of \`${name}\`; the constructor raises a TypeError when the trainer starts.${didYouMean(k, known)}` +
            (known.length ? ` Arguments: ${known.join(', ')}.` : ` \`${name}\` takes no arguments.`),
          `algorithm.${argsKey}.${k}`,
          { candidates: known },
        );
      }
    }
  }
}

/** Argument values that constructors reject (adaptive KL, DAPO's overlong penalty, sft_phi's cutoff). */
function checkArgValues(ctx: CheckContext): void {
  for (const key of ['kl_loss_fn', 'kl_penalty_fn'] as const) {
    const args = ctx.get(`algorithm.${key}_args`);
    if (ctx.get(`algorithm.${key}`) === 'none' || !args?.adaptive) continue;
    const missing = ['target_kl', 'horizon'].filter((k) => args[k] === null || args[k] === undefined);
    if (missing.length) {
      ctx.report(
        'TRN308',
        `Target KL and horizon must be provided for adaptive KL: add ${missing.map((k) => `\`${k}\``).join(' and ')} to \`algorithm.${key}_args\`.`,
        `algorithm.${key}_args.adaptive`,
      );
    }
  }
  if (ctx.get('algorithm.policy_loss_fn') === 'sft_phi') {
    const cutoff = ctx.get('algorithm.policy_loss_fn_args.cutoff_prob');
    if (typeof cutoff === 'number' && !(cutoff >= 0 && cutoff <= 1)) {
      ctx.report(
        'TRN308',
        `\`cutoff_prob\` of \`sft_phi\` must be between 0 and 1 (got ${cutoff}).`,
        'algorithm.policy_loss_fn_args.cutoff_prob',
      );
    }
  }
  for (const base of tasksetPaths(ctx)) {
    if (ctx.get(`${base}.default_reward_fn_type`) !== 'math_dapo_reward') continue;
    const args: Record<string, unknown> = ctx.get(`${base}.reward_fn_args`) ?? {};
    if (!args.enable_overlong_penalty) continue;
    const need = ['max_response_length', 'cache_length', 'penalty_factor'].filter(
      (k) => args[k] === null || args[k] === undefined,
    );
    if (need.length) {
      ctx.report(
        'TRN308',
        `\`math_dapo_reward\` with \`enable_overlong_penalty\` needs ${need.map((k) => `\`${k}\``).join(', ')} in \`reward_fn_args\`; the reward fails on the first response otherwise.`,
        `${base}.reward_fn_args.enable_overlong_penalty`,
      );
    } else if (!((args.max_response_length as number) > (args.cache_length as number))) {
      ctx.report(
        'TRN308',
        `\`max_response_length\` (${args.max_response_length}) must be greater than \`cache_length\` (${args.cache_length}) for DAPO's overlong penalty.`,
        `${base}.reward_fn_args.cache_length`,
      );
    }
  }
}

/** Algorithms that take advantages from the explorer need an explorer-side advantage function (experience pipeline). */
function checkAdvantageSide(ctx: CheckContext): void {
  if (!['both', 'explore', 'serve', 'colocate'].includes(ctx.get('mode') ?? '')) return;
  const spec = algorithmTypeAt(String(ctx.get('algorithm.algorithm_type')), ctx.release);
  const adv = ctx.get('algorithm.advantage_fn');
  if (
    !spec ||
    spec.computeAdvantageInTrainer ||
    typeof adv !== 'string' ||
    adv.includes('.') ||
    EXPLORER_SIDE_ADVANTAGES.has(adv)
  )
    return;
  if (!ctx.isRegistered('advantage_fn', adv) || ctx.host.plugins?.advantage_fn?.includes(adv)) return;
  ctx.report(
    'TRN310',
    `AdvantageFn \`${adv}\` can only be computed in the trainer, but \`${spec.name}\` computes advantages on the explorer side: the experience pipeline fails an assertion on the first batch. ` +
      `Set \`algorithm.advantage_fn\` to one of ${[...EXPLORER_SIDE_ADVANTAGES].map((n) => `\`${n}\``).join(', ')}.`,
    ctx.written('algorithm.advantage_fn') ? 'algorithm.advantage_fn' : 'algorithm.algorithm_type',
    { candidates: [...EXPLORER_SIDE_ADVANTAGES] },
  );
}

/** The `mix` sample strategy reads expert data from an auxiliary buffer named by `sft_dataset_name`. */
function checkMixBuffer(ctx: CheckContext): void {
  if (ctx.get('algorithm.sample_strategy') !== 'mix' || !['both', 'train', 'colocate'].includes(ctx.get('mode') ?? ''))
    return;
  if (ctx.release === 'v0.3.0') {
    // v0.3.0's mix strategy reads the expert data from `sft_warmup_dataset` instead.
    if (!ctx.get('buffer.trainer_input.sft_warmup_dataset')) {
      ctx.report(
        'TRN309',
        '`buffer.trainer_input.sft_warmup_dataset` is required in MIX algorithm: it holds the expert (SFT) data the `mix` sample strategy reads.',
        'algorithm.algorithm_type',
      );
    }
    return;
  }
  const name = ctx.get('algorithm.sample_strategy_args.sft_dataset_name') ?? 'sft_dataset';
  const aux = ctx.get('buffer.trainer_input.auxiliary_buffers') ?? {};
  if (aux && typeof aux === 'object' && String(name) in aux) return;
  ctx.report(
    'TRN309',
    `\`${name}\` is not found in \`buffer.trainer_input.auxiliary_buffers\`: the \`mix\` sample strategy reads its expert (SFT) data there, and the trainer stops at start-up. Add \`buffer.trainer_input.auxiliary_buffers.${name}\` with the SFT dataset's \`path\`.`,
    ctx.written('buffer.trainer_input.auxiliary_buffers')
      ? 'buffer.trainer_input.auxiliary_buffers'
      : 'algorithm.algorithm_type',
  );
}

function checkGroupSize(ctx: CheckContext): void {
  const adv = ctx.get('algorithm.advantage_fn');
  const repeat = ctx.get('algorithm.repeat_times');
  const mode = ctx.get('mode');
  if (typeof adv !== 'string' || !GROUP_ADVANTAGES.test(adv) || repeat !== 1) return;
  if (!['both', 'explore', 'colocate'].includes(mode ?? '')) return;
  const at = ctx.written('algorithm.repeat_times') ? 'algorithm.repeat_times' : 'algorithm.algorithm_type';
  ctx.report(
    'TRN303',
    `\`${adv}\` advantages are computed within each task's group of \`repeat_times\` rollouts, but \`algorithm.repeat_times\` is 1 ` +
      `(Trinity never applies the algorithm's own default): every advantage is zero and nothing is learned. Set \`repeat_times\` to 4–16.`,
    at,
    { path: ['algorithm', 'repeat_times'], value: 8 },
  );
}

function checkLocalPaths(ctx: CheckContext): void {
  const exists = ctx.host.exists;
  if (!exists) return;
  // The task pipeline creates its output at launch (the taskset or SFT/DPO buffer it writes into when unset).
  const pipelineOutput = taskPipelineOutputPath(
    ctx,
    String(ctx.get('buffer.trainer_input.experience_buffer.schema_type') ?? 'experience'),
  );
  for (const base of storagePaths(ctx)) {
    const path = ctx.get(`${base}.path`);
    const storage = String(ctx.get(`${base}.storage_type`) ?? 'file').toLowerCase();
    if (typeof path !== 'string' || path === '' || storage !== 'file') continue;
    if (!looksLocal(path) || path === pipelineOutput) continue;
    if (candidatePaths(ctx, path).some((p) => exists(p))) continue;
    // A file-backed experience buffer that Trinity writes to need not exist yet.
    if (base.includes('experience_buffer') && ctx.get('mode') !== 'train') continue;
    ctx.report(
      'TRN304',
      `\`${base}.path\`: \`${path}\` does not exist${describeBases(ctx)}.`,
      `${base}.path`,
      undefined,
    );
  }
}

export const INPUT_SAVE_PATH = 'data_processor.experience_pipeline.input_save_path';

/**
 * Why Trinity's experience pipeline cannot open `path` as its input store, or undefined when it can: a JSON lines
 * file (`is_json_file`) or a database URL (`is_database_url`), else ExperiencePipeline._init_input_storage raises
 * when the explorer starts (trinity/buffer/pipelines/experience_pipeline.py, f3c8dec). The runtime's words too.
 */
export function unsupportedInputSavePath(path: string): string | undefined {
  if (path.endsWith('.json') || path.endsWith('.jsonl')) return undefined;
  if (['sqlite:///', 'postgresql://', 'mysql://'].some((p) => path.startsWith(p))) return undefined;
  return (
    `\`${INPUT_SAVE_PATH}\` (${path}): Unsupported save_input format. Only JSON file path or SQLite URL is supported: ` +
    'the experience pipeline keeps its input in a JSON lines file (a path ending in `.json` or `.jsonl`) or a database ' +
    '(`sqlite:///<file>`), and fails when the explorer starts. Use such a path, or set `save_input: false`.'
  );
}

/** `save_input` with an `input_save_path` the pipeline cannot open (modes whose explorer runs the pipeline). */
function checkInputSavePath(ctx: CheckContext): void {
  const mode = ctx.get('mode');
  if (mode === 'train' || mode === 'bench' || ctx.get('data_processor.experience_pipeline.save_input') !== true) return;
  const path = ctx.get(INPUT_SAVE_PATH);
  const why = typeof path === 'string' ? unsupportedInputSavePath(path) : undefined;
  if (why) ctx.report('TRN320', why, INPUT_SAVE_PATH);
}

/** Paths a user clearly means as local: absolute, `./`, `../`, `~/`, or with a data-file extension. */
export function looksLocal(p: string): boolean {
  return isAbsolute(p) || /^(\.{1,2}|~)[\\/]/.test(p) || /\.(jsonl?|parquet|csv|arrow)$/i.test(p);
}

export function candidatePaths(ctx: CheckContext, p: string): string[] {
  if (p.startsWith('~/')) return [resolve(process.env.HOME ?? '~', p.slice(2))];
  if (isAbsolute(p)) return [p];
  const bases = ctx.host.baseDirs ?? [];
  return bases.map((b) => resolve(b, p));
}

/** " (looked relative to `a` and `b`)" for a path that was not found, naming where it was looked for. */
export function describeBases(ctx: CheckContext): string {
  const bases = ctx.host.baseDirs ?? [];
  return bases.length ? ` (looked relative to ${bases.map((b) => `\`${b}\``).join(' and ')})` : '';
}
