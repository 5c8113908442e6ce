/** `_check_buffer` / `BufferConfigValidator`: tasksets, eval tasksets, experience and auxiliary buffers, pipelines. */
import { algorithmTypeAt } from '../../model/algorithms';
import { registryNamesAt } from '../../model/registries';
import { didYouMean } from '../../suggest';
import type { CheckContext } from '../check-context';
import { configPath, type TasksetPath } from '../../config-path';
import { taskPipelineApplies, taskPipelineDefaultOutput, taskPipelineOutputPath } from '../tasksets';

const EI = 'buffer.explorer_input';
const TI = 'buffer.trainer_input';

export function checkBuffer(ctx: CheckContext): void {
  if (ctx.since('v0.3.2')) {
    checkTrainBatchSize(ctx);
    fillCacheDir(ctx);
    checkExplorerInput(ctx);
    checkTrainerInput(ctx);
    checkDataProcessor(ctx);
  } else {
    checkTasksetV03(ctx);
    checkEvalTasksetsV03(ctx);
    checkExperienceBufferV03(ctx);
    fillCacheDir(ctx);
    if (ctx.release === 'v0.3.0') checkSftWarmupV030(ctx);
    checkDataProcessor(ctx);
    checkTrainBatchSize(ctx);
  }
}

function checkTrainBatchSize(ctx: CheckContext): void {
  if (ctx.get('buffer.train_batch_size')) return;
  const mode = ctx.get('mode');
  const type = ctx.get('algorithm.algorithm_type');
  if (mode === 'train' || type === 'sft' || type === 'dpo') {
    ctx.report(
      'TRN254',
      "`buffer.train_batch_size` is required when `mode` is 'train' or `algorithm.algorithm_type` is 'sft' or 'dpo': set the number of samples per training step.",
      ctx.written('buffer') ? 'buffer' : 'algorithm.algorithm_type',
      { add: { path: ['buffer', 'train_batch_size'], value: ctx.get('buffer.batch_size') || 32 } },
    );
    return;
  }
  const b = ctx.get('buffer.batch_size');
  const n = ctx.get('algorithm.repeat_times');
  if (typeof b !== 'number' || typeof n !== 'number') return;
  ctx.set('buffer.train_batch_size', b * n, {
    code: 'TRN255',
    message: `\`buffer.train_batch_size\` = \`batch_size\` × \`repeat_times\` = ${b} × ${n} = ${b * n} experiences per trainer step.`,
    at: ctx.written('buffer.batch_size') ? 'buffer.batch_size' : 'buffer',
  });
}

function fillCacheDir(ctx: CheckContext): void {
  ctx.fill(
    'buffer.cache_dir',
    `${ctx.get('checkpoint_job_dir')}/buffer`,
    'buffers persist under `<checkpoint_job_dir>/buffer`',
  );
}

/** v0.3.0 / v0.3.1: one taskset (always present), checked in every mode but train. */
function checkTasksetV03(ctx: CheckContext): void {
  const ts = `${EI}.taskset` as const;
  const mode = ctx.get('mode');
  if (mode !== 'train' && !ctx.get(`${ts}.path`)) {
    ctx.report(
      'TRN250',
      '`buffer.explorer_input.taskset.path` is required, please set it to the path of the taskset.',
      ctx.written(ts) ? ts : 'buffer',
      {
        add: { path: ['buffer', 'explorer_input', 'taskset', 'path'], value: '' },
      },
    );
  }
  if (!ctx.get(`${ts}.name`)) ctx.fill(`${ts}.name`, 'taskset', 'the default taskset name');
  syncRepeatTimes(ctx, ts);
  if (mode === 'train') {
    if (!ctx.get(`${TI}.experience_buffer`)) {
      ctx.report(
        'TRN206',
        '`buffer.trainer_input.experience_buffer` is required when `mode` is `train`.',
        ctx.written(TI) ? TI : 'mode',
      );
    }
  } else {
    ctx.fill(`${ts}.is_eval`, false, 'the training taskset');
    ctx.overwrite(`${ts}.total_epochs`, ctx.get('buffer.total_epochs'), 'buffer.total_epochs');
    ctx.overwrite(`${ts}.total_steps`, ctx.get('buffer.total_steps'), 'buffer.total_steps');
  }
  inheritTasksetDefaults(ctx, ts, false);
}

function checkEvalTasksetsV03(ctx: CheckContext): void {
  const evals = (ctx.get(`${EI}.eval_tasksets`) as Record<string, unknown>[] | undefined) ?? [];
  evals.forEach((e, i) => {
    const p = `${EI}.eval_tasksets.${i}` as const;
    if (!e.path) {
      ctx.report(
        'TRN252',
        `Eval taskset ${e.name ? `\`${e.name}\`` : i} has no \`path\`: Trinity skips it.`,
        p,
        undefined,
        'warning',
      );
      return;
    }
    ctx.fill(`${p}.is_eval`, true, 'an eval taskset');
    if (!e.name) ctx.fill(`${p}.name`, `eval_taskset_${i}`, 'the default eval taskset name');
    if (e.repeat_times === null || e.repeat_times === undefined)
      ctx.fill(`${p}.repeat_times`, 1, 'eval tasksets run once per task by default');
    inheritTasksetDefaults(ctx, p, true);
  });
}

function checkExperienceBufferV03(ctx: CheckContext): void {
  autoExperienceBuffer(ctx);
  const eb = `${TI}.experience_buffer` as const;
  ctx.overwrite(`${eb}.schema_type`, schemaOf(ctx), 'algorithm.algorithm_type');
  if (ctx.get('mode') === 'train') {
    ctx.overwrite(`${eb}.total_epochs`, ctx.get('buffer.total_epochs'), 'buffer.total_epochs');
    ctx.overwrite(`${eb}.total_steps`, ctx.get('buffer.total_steps'), 'buffer.total_steps');
  }
}

function checkSftWarmupV030(ctx: CheckContext): void {
  const steps = Number(ctx.get(`${TI}.sft_warmup_steps`) ?? 0);
  if (steps > 0 && !ctx.get(`${TI}.sft_warmup_dataset`)) {
    ctx.report(
      'TRN206',
      '`buffer.trainer_input.sft_warmup_dataset` is required when `buffer.trainer_input.sft_warmup_steps` > 0.',
      `${TI}.sft_warmup_steps`,
    );
  }
}

/** v0.3.2+: `taskset` / `tasksets`, eval tasksets and selectors (`_check_explorer_input`). */
function checkExplorerInput(ctx: CheckContext): void {
  const mode = ctx.get('mode');
  if (mode === 'train' || (ctx.since('v0.4.0') && mode === 'serve')) return;
  const single = ctx.get(`${EI}.taskset`);
  let list = (ctx.get(`${EI}.tasksets`) as Record<string, unknown>[] | undefined) ?? [];
  // Report against what the user wrote: `taskset` or `tasksets[i]`.
  const usingSingle = !!single && list.length === 0;
  const srcOf = (i: number): TasksetPath => (usingSingle ? `${EI}.taskset` : `${EI}.tasksets.${i}`);
  if (single && list.length > 0) {
    ctx.report(
      'TRN256',
      'Do not support setting `taskset` and `tasksets` simultaneously! Move the single taskset into `tasksets`.',
      `${EI}.taskset`,
    );
    return;
  }
  if (single) list = [single as unknown as Record<string, unknown>];
  if (list.length === 0) {
    if (!(ctx.since('v0.4.0') && mode === 'bench')) {
      ctx.report(
        'TRN250',
        'At least one taskset should be provided in explorer_input: set `buffer.explorer_input.taskset` (with a `path`).',
        ctx.written(EI) ? EI : 'buffer',
        {
          add: { path: ['buffer', 'explorer_input', 'taskset', 'path'], value: '' },
        },
      );
    }
  }
  const evalsWritten = (ctx.get(`${EI}.eval_tasksets`) as unknown[] | undefined) ?? [];
  if (ctx.since('main') && ctx.get('synchronizer.sync_style') === 'fully_async' && evalsWritten.length > 0) {
    ctx.report(
      'TRN256',
      'Eval tasksets are not supported in fully asynchronous synchronization style: remove `eval_tasksets` or pick another `synchronizer.sync_style`.',
      `${EI}.eval_tasksets`,
    );
    return;
  }
  list.forEach((ts, i) => {
    const p = srcOf(i);
    if (!ts.path) {
      const msg = ctx.since('v0.5.0')
        ? `Train taskset ${ts.name ? `\`${ts.name}\`` : i}'s path is not configured.`
        : '`buffer.explorer_input.taskset.path` is required, please set it to the path of the taskset.';
      ctx.report('TRN250', msg, p, { add: { path: [...p.split('.'), 'path'], value: '' } });
    }
    if (!ts.name) ctx.fill(`${p}.name`, `taskset_${i}`, 'the default taskset name');
    syncRepeatTimes(ctx, p);
    ctx.fill(`${p}.total_epochs`, ctx.get('buffer.total_epochs'), 'from `buffer.total_epochs`');
    ctx.fill(`${p}.total_steps`, ctx.get('buffer.total_steps'), 'from `buffer.total_steps`');
    ctx.fill(`${p}.batch_size`, ctx.get('buffer.batch_size'), 'from `buffer.batch_size`');
    inheritTasksetDefaults(ctx, p, false);
    if (ctx.since('v0.5.0')) ctx.fill(`${p}.is_eval`, false, 'a training taskset');
    checkSelector(ctx, p);
  });
  const evals = (ctx.get(`${EI}.eval_tasksets`) as Record<string, unknown>[] | undefined) ?? [];
  evals.forEach((e, i) => {
    const p = `${EI}.eval_tasksets.${i}` as const;
    if (!e.path) {
      const msg = ctx.since('v0.5.0')
        ? `Eval taskset ${e.name ? `\`${e.name}\`` : i}'s path is not configured.`
        : `Eval dataset ${e.name ? `\`${e.name}\`` : i}'s path is not configured.`;
      ctx.report('TRN252', msg, p, undefined, 'error');
      return;
    }
    ctx.fill(`${p}.is_eval`, true, 'an eval taskset');
    if (!e.name) ctx.fill(`${p}.name`, `eval_taskset_${i}`, 'the default eval taskset name');
    ctx.fill(`${p}.batch_size`, ctx.get('buffer.batch_size'), 'from `buffer.batch_size`');
    inheritTasksetDefaults(ctx, p, true);
  });
}

function syncRepeatTimes(ctx: CheckContext, p: TasksetPath): void {
  ctx.overwrite(`${p}.repeat_times`, ctx.get('algorithm.repeat_times'), 'algorithm.repeat_times');
}

/** Values a taskset takes from `explorer_input.*` and `model.*` when it does not set them. */
function inheritTasksetDefaults(ctx: CheckContext, p: TasksetPath, isEval: boolean): void {
  const fill = (key: InheritedKey, value: unknown, why: string) => {
    // Checked at run time: which keys a taskset holds depends on the release, which the callers test.
    const path = configPath(`${p}.${key}`);
    if ((ctx.get(path) === null || ctx.get(path) === undefined) && value !== null && value !== undefined)
      ctx.fill(path, value, why);
  };
  if (ctx.since('v0.3.2') && isEval) {
    fill(
      'default_workflow_type',
      ctx.get(`${EI}.default_eval_workflow_type`) ?? ctx.get(`${EI}.default_workflow_type`),
      'from `explorer_input.default_eval_workflow_type` / `default_workflow_type`',
    );
  } else {
    fill(
      'default_workflow_type',
      ctx.get(`${EI}.default_workflow_type`),
      'from `explorer_input.default_workflow_type`',
    );
    if (!ctx.since('v0.3.2'))
      fill(
        'default_eval_workflow_type',
        ctx.get(`${EI}.default_eval_workflow_type`),
        'from `explorer_input.default_eval_workflow_type`',
      );
  }
  fill(
    'default_reward_fn_type',
    ctx.get(`${EI}.default_reward_fn_type`),
    'from `explorer_input.default_reward_fn_type`',
  );
  fill('ray_namespace', ctx.get('ray_namespace'), "the run's Ray namespace");
  if (!ctx.since('v0.3.2')) {
    fill('format.system_prompt', ctx.get(`${EI}.system_prompt`), 'from `explorer_input.system_prompt`');
    fill('format.reply_prefix', ctx.get(`${EI}.reply_prefix`), 'from `explorer_input.reply_prefix`');
  } else {
    for (const k of ['temperature', 'top_p', 'top_k', 'logprobs'] as const)
      fill(`rollout_args.${k}`, ctx.get(`model.${k}`), `from \`model.${k}\``);
  }
  if (ctx.since('v0.3.1'))
    fill('rollout_args.max_tokens', ctx.get('model.max_response_tokens'), 'from `model.max_response_tokens`');
  if (ctx.since('v0.4.0') && (!isEval || ctx.since('v0.5.0')))
    fill('format.chat_template', ctx.get('model.custom_chat_template'), 'from `model.custom_chat_template`');
}

/** The taskset keys `inheritTasksetDefaults` may fill. */
type InheritedKey =
  | 'default_workflow_type'
  | 'default_eval_workflow_type'
  | 'default_reward_fn_type'
  | 'ray_namespace'
  | 'format.system_prompt'
  | 'format.reply_prefix'
  | 'format.chat_template'
  | `rollout_args.${'temperature' | 'top_p' | 'top_k' | 'logprobs' | 'max_tokens'}`;

function checkSelector(ctx: CheckContext, p: TasksetPath): void {
  if (!ctx.since('v0.4.0')) return;
  const key = ctx.since('v0.5.2') ? ('data_selector' as const) : ('task_selector' as const);
  if (ctx.since('v0.5.2') && ctx.get(`${p}.task_selector`))
    ctx.fill(`${p}.data_selector`, ctx.get(`${p}.task_selector`), '`task_selector` is deprecated');
  const type = ctx.get(`${p}.${key}.selector_type`);
  if (type === null || type === undefined) {
    ctx.report('TRN256', `Selector \`${type}\` in ${ctx.get(`${p}.name`)} is not supported.`, `${p}.${key}`);
    return;
  }
  if (ctx.isRegistered('selector', String(type))) return;
  const names = registryNamesAt('selector', ctx.release);
  ctx.report(
    'TRN256',
    `Invalid selector_type \`${type}\`; Trinity ${ctx.release} has ${names.join(', ')}.${didYouMean(String(type), names)}`,
    `${p}.${key}.selector_type`,
    { candidates: names },
  );
}

function schemaOf(ctx: CheckContext): string {
  return algorithmTypeAt(String(ctx.get('algorithm.algorithm_type')), ctx.release)?.schema ?? 'experience';
}

function autoExperienceBuffer(ctx: CheckContext): void {
  const eb = `${TI}.experience_buffer` as const;
  if (!ctx.get(eb)) {
    ctx.set(
      eb,
      { name: 'experience_buffer', storage_type: 'queue' },
      {
        code: 'TRN255',
        message:
          'No `buffer.trainer_input.experience_buffer`: Trinity creates a `queue` buffer named `experience_buffer`.',
        at: ctx.written(TI) ? TI : 'buffer',
      },
    );
  }
  const storage = String(ctx.get(`${eb}.storage_type`));
  const isFile = ctx.since('v0.4.0') ? storage === 'file' : storage.toLowerCase() === 'file';
  const modes = ctx.since('v0.5.0') ? ['both', 'colocate'] : ['both'];
  if (isFile && modes.includes(ctx.get('mode') ?? '')) {
    ctx.set(`${eb}.storage_type`, 'queue', {
      code: 'TRN253',
      message: '`file` storage cannot be the experience buffer in `both` mode; Trinity uses `queue` instead.',
      at: `${eb}.storage_type`,
    });
  }
}

/** v0.3.2+ `_check_trainer_input`. */
function checkTrainerInput(ctx: CheckContext): void {
  if (ctx.since('v0.4.0') && ctx.get('mode') === 'bench') return;
  autoExperienceBuffer(ctx);
  const eb = `${TI}.experience_buffer` as const;
  if (!ctx.get(`${eb}.name`)) ctx.fill(`${eb}.name`, 'experience_buffer', 'the default buffer name');
  if (!ctx.get(`${eb}.path`)) {
    const name = ctx.get(`${eb}.name`);
    const cache = ctx.get('buffer.cache_dir');
    const path = ctx.get(`${eb}.storage_type`) === 'sql' ? `sqlite:///${cache}/${name}.db` : `${cache}/${name}.jsonl`;
    ctx.fill(`${eb}.path`, path, 'experiences persist under the buffer cache directory');
  }
  if (ctx.get('mode') === 'train') {
    ctx.overwrite(`${eb}.total_epochs`, ctx.get('buffer.total_epochs'), 'buffer.total_epochs');
    ctx.overwrite(`${eb}.total_steps`, ctx.get('buffer.total_steps'), 'buffer.total_steps');
  }
  ctx.overwrite(`${eb}.schema_type`, schemaOf(ctx), 'algorithm.algorithm_type');
  ctx.fill(`${eb}.batch_size`, ctx.get('buffer.train_batch_size'), 'from `buffer.train_batch_size`');
  ctx.fill(`${eb}.tokenizer_path`, ctx.get('model.model_path'), 'from `model.model_path`');
  const aux = (ctx.get(`${TI}.auxiliary_buffers`) as Record<string, Record<string, unknown>> | undefined) ?? {};
  for (const [name, buf] of Object.entries(aux)) {
    const p = `${TI}.auxiliary_buffers.${name}` as const;
    ctx.fill(`${p}.batch_size`, ctx.get('buffer.train_batch_size'), 'from `buffer.train_batch_size`');
    if (!buf?.path) {
      ctx.report(
        'TRN256',
        `\`buffer.trainer_input.auxiliary_buffers[${name}].path\` is required, please set it to the path of the auxiliary buffer.`,
        p,
        {
          add: { path: [...p.split('.'), 'path'], value: '' },
        },
      );
    }
  }
  if (ctx.since('v0.5.2')) {
    const type = ctx.get(`${eb}.data_selector.selector_type`);
    if (type !== null && type !== undefined && !ctx.isRegistered('selector', String(type))) {
      ctx.report(
        'TRN256',
        `Selector \`${type}\` in \`experience_buffer\` is not supported.`,
        `${eb}.data_selector.selector_type`,
      );
    }
  }
}

function checkDataProcessor(ctx: CheckContext): void {
  const mode = ctx.get('mode');
  const expModes = ctx.since('v0.5.0') ? ['explore', 'both', 'serve', 'colocate'] : ['explore', 'both', 'serve'];
  const ep = ctx.get('data_processor.experience_pipeline');
  if (ep && (!ctx.since('v0.4.0') || expModes.includes(mode ?? ''))) {
    if (ep.save_input && (ep.input_save_path === null || ep.input_save_path === undefined)) {
      const cache = ctx.get('buffer.cache_dir');
      const path = ctx.since('v0.4.0') ? `sqlite:///${cache}/explorer_output.db` : `${cache}/explorer_output.jsonl`;
      ctx.fill(
        'data_processor.experience_pipeline.input_save_path',
        path,
        'explorer outputs are saved before the pipeline runs',
      );
    }
    checkOperators(ctx);
  }
  const tp = ctx.get('data_processor.task_pipeline');
  if (!tp || !taskPipelineApplies(ctx)) return;
  const derived = taskPipelineDefaultOutput(ctx, schemaOf(ctx));
  if ((tp.output === null || tp.output === undefined) && !derived) {
    const msg =
      ctx.since('v0.3.2') && ctx.get('mode') !== 'train'
        ? 'At least one taskset should be provided in explorer_input! (`data_processor.task_pipeline.output` is unset, so the pipeline writes into the first taskset.)'
        : ctx.since('v0.3.2')
          ? '`data_processor.task_pipeline.output` is missing. Please set it to the desired output storage config.'
          : '`data_processor.task_pipeline.output` is required when both `buffer.explorer_input.taskset.path` and `buffer.trainer_input.experience_buffer.path` are None.';
    ctx.report('TRN257', msg, 'data_processor.task_pipeline');
    return;
  }
  const out = taskPipelineOutputPath(ctx, schemaOf(ctx));
  if (out && ctx.host.exists?.(out)) {
    const at = derived ? (`${derived}.path` as const) : 'data_processor.task_pipeline.output.path';
    const where = derived
      ? ` (\`data_processor.task_pipeline.output\` is unset, so the pipeline writes into \`${derived}\`)`
      : '';
    ctx.report(
      'TRN257',
      `Task pipeline output path \`${out}\` already exists${where}; Trinity refuses to overwrite it. Choose another path.`,
      at,
    );
  }
}

function checkOperators(ctx: CheckContext): void {
  const ops = (ctx.get('data_processor.experience_pipeline.operators') as { name?: string }[] | undefined) ?? [];
  ops.forEach((op, i) => {
    const name = String(op?.name ?? '');
    if (ctx.isRegistered('experience_operator', name)) return;
    const names = registryNamesAt('experience_operator', ctx.release);
    ctx.report(
      'TRN300',
      `\`${name}\` is not a registered experience operator in Trinity ${ctx.release}.${didYouMean(name, names)}`,
      `data_processor.experience_pipeline.operators.${i}.name`,
      { candidates: names },
      'error',
    );
  });
}
