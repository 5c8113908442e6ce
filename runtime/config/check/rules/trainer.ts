/**
 * The trainer section and veRL's `synchronize_config`: the strict merge of `trainer.trainer_config` into veRL's
 * dataclasses, the trainer's world size and the batch sizes that must divide by it, and per-GPU token budgets.
 */
import { CODES } from '../../diagnostics';
import { mergeConfig } from '../../load/structured-merge';
import { fieldAt } from '../../model';
import { FSDP_OPTIMIZERS, FSDP_SCHEDULERS } from '../../model/domains';
import { TrainerConfig } from '../../model/sections';
import { ynodeAt } from '../../load/yaml-tree';
import type { CheckContext } from '../check-context';
import type { ConfigPath } from '../../config-path';
import { candidatePaths, describeBases } from '../runtime';
import { knownCluster, trainerWorldSizeV03 } from './cluster';
import { checkVerl08Overrides } from './verl-overrides';
import { closest } from '../../suggest';

export function checkTrainer(ctx: CheckContext): void {
  if (!trainerRuns(ctx)) return;
  if (ctx.since('v0.5.2') && ctx.get('model.external_model.enable') === true) return;
  const type = ctx.get('trainer.trainer_type');
  if (type === 'tinker' && ctx.since('v0.4.0')) {
    ctx.fill('trainer.trainer_config', null, 'the Tinker trainer takes no veRL config');
    return;
  }
  if (type !== 'verl') {
    ctx.report(
      'TRN270',
      `Invalid trainer type \`${type}\`: Trinity ${ctx.release} supports ${ctx.since('v0.4.0') ? '`verl` and `tinker`' : '`verl`'}.`,
      'trainer.trainer_type',
    );
    return;
  }
  if (ctx.since('v0.5.2') && Number(ctx.get('trainer.ulysses_sequence_parallel_size')) < 1) {
    ctx.set('trainer.ulysses_sequence_parallel_size', 1, {
      code: 'TRN271',
      message: `Ulysses sequence parallel size is set to 1 because ${ctx.get('trainer.ulysses_sequence_parallel_size')} is invalid.`,
    });
  }
  if (ctx.since('main')) ctx.fill('trainer.trust_remote_code', ctx.get('model.trust_remote_code'), 'from `model`');
  if (!checkTrainerConfigSource(ctx)) return;
  if (
    ctx.since('v0.3.2') &&
    (ctx.get('trainer.max_token_len_per_gpu') === null || ctx.get('trainer.max_token_len_per_gpu') === undefined)
  ) {
    const m = ctx.get('model.max_model_len');
    // main (f3c8dec): Megatron splits a sequence by its context parallel size instead of Ulysses'.
    const megatron = ctx.since('main') && !String(ctx.get('trainer.trainer_strategy')).startsWith('fsdp');
    const sp =
      (megatron
        ? ctx.get('trainer.megatron.context_parallel_size')
        : ctx.get('trainer.ulysses_sequence_parallel_size')) || 1;
    if (typeof m === 'number')
      ctx.fill(
        'trainer.max_token_len_per_gpu',
        Math.ceil((2 * m) / sp),
        megatron ? '2 × `max_model_len` / context parallelism' : '2 × `max_model_len` / sequence parallelism',
      );
  }
  if (ctx.since('v0.4.0')) {
    const save = ctx.get('trainer.save_hf_checkpoint');
    if (!['last', 'always', 'never'].includes(save ?? '')) {
      ctx.report(
        'TRN270',
        `Invalid trainer.save_hf_checkpoint: \`${save}\`, must be one of 'last', 'always', or 'never'.`,
        'trainer.save_hf_checkpoint',
        {
          candidates: ['last', 'always', 'never'],
        },
      );
    }
  }
  checkFsdpSchedule(ctx);
  checkFsdpOptimizer(ctx);
  synchronizeConfig(ctx);
}

/**
 * Whether a key of `trainer.trainer_config` reaches veRL 0.8's config on main (trinity/trainer/verl/config.py
 * `_normalize_trainer_config`, f3c8dec): only model/actor/ref/rollout/critic sections are merged, at the top or under
 * `actor_rollout_ref`; an unknown key inside them fails when veRL builds its dataclasses, as the older merge fails.
 */
function reachesVerl08(path: readonly (string | number)[] | undefined): boolean {
  const i = path?.indexOf('trainer_config') ?? -1;
  if (!path || i < 0) return true;
  const [first, second] = path.slice(i + 1);
  const kept = ['model', 'actor', 'ref', 'rollout', 'critic'];
  if (first === 'actor_rollout_ref') return typeof second === 'string' && kept.slice(0, 4).includes(second);
  return first === 'critic';
}

/** The trainer's parallel strategy: `trainer_strategy` from v0.4.0, the actor's veRL `strategy` before (FSDP unless set). */
export function trainerStrategy(ctx: CheckContext): string {
  if (ctx.since('v0.4.0')) return String(ctx.get('trainer.trainer_strategy') ?? 'fsdp');
  const tc = ctx.get('trainer.trainer_config') as Record<string, any> | undefined;
  return String(tc?.actor_rollout_ref?.actor?.strategy ?? 'fsdp');
}

/**
 * veRL's FSDP workers take only the constant and cosine LR schedules (NotImplementedError; from veRL v0.7.0 an
 * assert in `FSDPOptimizerConfig`); Megatron's own scheduler takes more, so the field's domain is the wider set.
 */
function checkFsdpSchedule(ctx: CheckContext): void {
  if (!trainerStrategy(ctx).startsWith('fsdp')) return;
  const written = ctx.since('v0.5.0') && ctx.written('algorithm.optimizer.lr_scheduler_type');
  const key = written ? 'algorithm.optimizer.lr_scheduler_type' : 'algorithm.optimizer.warmup_style';
  const style = ctx.get(key);
  if (typeof style !== 'string' || (FSDP_SCHEDULERS as readonly string[]).includes(style)) return;
  if (!ctx.written(key)) return;
  ctx.report(
    'TRN270',
    `\`${key.split('.').pop()}\` is \`${style}\`, which only Megatron runs: with the ${trainerStrategy(ctx)} strategy veRL takes \`constant\` or \`cosine\` (its FSDP workers raise NotImplementedError for anything else).`,
    key,
    { candidates: [...FSDP_SCHEDULERS] },
  );
}

/**
 * main: an FSDP trainer builds its optimizer by name from `torch.optim` (Trinity's name map: trinity/trainer/verl/config.py
 * `_map_optimizer_name_fsdp`, 3231abd, and trinity/common/verl_config.py `synchronize_config`, 4ed740f; veRL
 * `build_optimizer`, verl/workers/config/optimizer.py), which raises AttributeError for any other name.
 */
function checkFsdpOptimizer(ctx: CheckContext): void {
  if (!ctx.since('main') || !trainerStrategy(ctx).startsWith('fsdp')) return;
  const key = 'algorithm.optimizer.optimizer_type';
  const name = ctx.get(key);
  if (!ctx.written(key) || typeof name !== 'string' || (FSDP_OPTIMIZERS as readonly string[]).includes(name)) return;
  const best = closest(name, [...FSDP_OPTIMIZERS]);
  ctx.report(
    'TRN270',
    `\`optimizer_type\` is \`${name}\`: with the ${trainerStrategy(ctx)} strategy Trinity maps \`adam\`/\`adamw\` to torch's \`AdamW\` and \`sgd\` to \`SGD\`, and veRL looks any other name up in \`torch.optim\` (case-sensitive), which has no \`${name}\` (AttributeError when the trainer starts).${best ? ` Did you mean \`${best}\`?` : ''}`,
    key,
    { candidates: [...FSDP_OPTIMIZERS], ...(best ? { suggestion: best } : {}) },
  );
}

function trainerRuns(ctx: CheckContext): boolean {
  const mode = ctx.get('mode');
  if (ctx.release === 'v0.3.0') return ['train', 'both'].includes(mode ?? '');
  if (!ctx.since('v0.4.0')) return ['train', 'both', 'bench'].includes(mode ?? '');
  // main (5b1d8a7, f3c8dec): bench no longer checks the trainer, and neither does megatron outside training modes.
  if (ctx.since('main')) return ['train', 'both', 'colocate'].includes(mode ?? '');
  const modes = ctx.since('v0.5.0') ? ['train', 'both', 'bench', 'colocate'] : ['train', 'both', 'bench'];
  return modes.includes(mode ?? '') || ctx.get('trainer.trainer_strategy') === 'megatron';
}

/** `trainer_config` (strictly merged into veRL's schema) or `trainer_config_path`. Returns false on a fatal problem. */
function checkTrainerConfigSource(ctx: CheckContext): boolean {
  const inline = ctx.get('trainer.trainer_config');
  const hasInline = inline && typeof inline === 'object' && Object.keys(inline).length > 0;
  const pathValue = ctx.get('trainer.trainer_config_path');
  if (hasInline) {
    const src = ctx.sourcePath(['trainer', 'trainer_config']);
    const y = ynodeAt(ctx.loaded.source.root, src);
    const strict = fieldAt(TrainerConfig, 'trainer_config', ctx.release)?.checkedAs;
    if (y && y.kind === 'map' && ctx.since('main')) checkVerl08Overrides(ctx, y, src, trainerStrategy(ctx));
    if (y && y.kind === 'map' && strict) {
      const merged = mergeConfig(y, strict, ctx.release, src);
      for (const d of merged.diagnostics) {
        const dropped = ctx.since('main') && !reachesVerl08(d.data?.path);
        ctx.diagnostics.push({
          ...d,
          ...(dropped && d.severity === 'error' ? { severity: 'warning' as const } : {}),
          message: dropped
            ? `${d.message} (veRL trainer config: with veRL < 0.8 Trinity merges \`trainer.trainer_config\` into veRL's schema at launch and rejects this; with veRL 0.8 or later, which main installs by default, it keeps only \`model\`, \`actor\`, \`ref\`, \`rollout\` and \`critic\`, at the top or under \`actor_rollout_ref\`, and drops the rest.)`
            : `${d.message} (veRL trainer config: Trinity merges \`trainer.trainer_config\` into veRL's schema at launch and rejects this.)`,
        });
      }
    }
    return true;
  }
  if (!ctx.since('v0.3.2')) {
    const exists = ctx.host.exists;
    if (!pathValue) {
      ctx.report(
        'TRN272',
        `Trinity ${ctx.release} needs the veRL settings: write \`trainer.trainer_config\` or point \`trainer.trainer_config_path\` at a veRL YAML file.`,
        ctx.written('trainer') ? 'trainer' : 'mode',
        {
          add: { path: ['trainer', 'trainer_config'], value: {} },
        },
      );
      return false;
    }
    if (exists && !candidatePaths(ctx, pathValue).some(exists)) {
      ctx.report(
        'TRN304',
        `Invalid trainer config path: \`${pathValue}\` does not exist${describeBases(ctx)}.`,
        'trainer.trainer_config_path',
      );
      return false;
    }
    return true;
  }
  if (pathValue) {
    ctx.report(
      'TRN272',
      "`trainer_config_path` is deprecated; please use `trainer_config` instead (move the file's veRL settings inline under `trainer.trainer_config`).",
      'trainer.trainer_config_path',
    );
    return false;
  }
  ctx.fill('trainer.trainer_config', {}, "veRL's default trainer config");
  return true;
}

/** A veRL value as the trainer will see it: written in `trainer_config`, else veRL's default. */
export function verl(ctx: CheckContext, path: string, fallback: unknown): any {
  const v = ctx.get(`trainer.trainer_config.${path}`);
  return v === null || v === undefined ? fallback : v;
}

function synchronizeConfig(ctx: CheckContext): void {
  const tbs = ctx.get('buffer.train_batch_size');
  if (!ctx.since('v0.5.0')) {
    const world = trainerWorldSizeV03(ctx);
    if (world !== undefined && typeof tbs === 'number' && tbs > 0 && tbs % world !== 0) {
      reportBatch(
        ctx,
        `batch_size (${tbs}) must be divisible by (${world}): the trainer has ${world} GPUs.`,
        tbs,
        world,
      );
    }
  } else {
    checkParallel(ctx, Number(tbs));
  }
  checkTokenBudgets(ctx);
  if (ctx.get('algorithm.algorithm_type') === 'dpo') {
    ctx.report(
      'TRN271',
      'DPO micro batch size is doubled for computing loss (chosen and rejected go through together).',
      'algorithm.algorithm_type',
      undefined,
      'information',
    );
  }
}

function reportBatch(ctx: CheckContext, message: string, tbs: number, world: number): void {
  const writtenTbs = ctx.written('buffer.train_batch_size');
  if (writtenTbs) {
    const up = Math.ceil(tbs / world) * world;
    ctx.report('TRN221', `${message} Use a multiple of ${world}, e.g. ${up}.`, 'buffer.train_batch_size', {
      path: ['buffer', 'train_batch_size'],
      value: up,
    });
    return;
  }
  // train_batch_size = batch_size x repeat_times: batch_size must be a multiple of world / gcd(repeat_times, world).
  const n = ctx.get('algorithm.repeat_times') || 1;
  const step = world / gcd(n, world);
  const b = ctx.get('buffer.batch_size') || 1;
  const up = Math.ceil(b / step) * step;
  ctx.report(
    'TRN221',
    `${message} \`train_batch_size\` is \`batch_size\` × \`repeat_times\`; a \`batch_size\` of ${up} gives ${up * n}.`,
    ctx.written('buffer.batch_size') ? 'buffer.batch_size' : 'buffer',
    { path: ['buffer', 'batch_size'], value: up },
  );
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

/** v0.5.0+: batch divisibility (v0.5.0 in the buffer step; v0.5.2+ per component with sequence parallelism). */
function checkParallel(ctx: CheckContext, tbs: number): void {
  const mode = ctx.get('mode');
  if (mode === 'bench' && String(ctx.get('trainer.trainer_strategy') ?? 'fsdp').startsWith('fsdp')) {
    ctx.report(
      'TRN270',
      `Trinity ${ctx.release} fails a fresh \`bench\` run with the veRL FSDP trainer (ZeroDivisionError: bench mode allots the trainer no GPUs; fixed upstream after this release). Validate the config in \`both\` mode first, or use a newer Trinity.`,
      'mode',
      undefined,
      'warning',
    );
    return;
  }
  if (!knownCluster(ctx)) return;
  const world = ctx.get('cluster.trainer_gpu_num');
  if (typeof world !== 'number' || world <= 0 || typeof tbs !== 'number' || tbs <= 0) return;
  if (ctx.release === 'v0.5.0') {
    if (['train', 'both'].includes(mode ?? '') && tbs % world !== 0)
      reportBatch(
        ctx,
        `batch_size (${tbs}) must be divisible by (${world}): the trainer has ${world} GPUs.`,
        tbs,
        world,
      );
    return;
  }
  const trainerSp = ctx.get('trainer.ulysses_sequence_parallel_size') || 1;
  for (const comp of ['actor', 'ref', 'critic'] as const) {
    const base = comp === 'critic' ? 'critic' : `actor_rollout_ref.${comp}`;
    const strategy = String(verl(ctx, `${base}.strategy`, ctx.get('trainer.trainer_strategy') ?? 'fsdp'));
    if (!strategy.startsWith('fsdp')) continue;
    const sp = Math.max(1, verl(ctx, `${base}.ulysses_sequence_parallel_size`, trainerSp));
    if (world % sp !== 0) {
      ctx.report(
        'TRN222',
        `The number of trainer GPUs (${world}) must be divisible by \`${comp}.ulysses_sequence_parallel_size\` (${sp}). Change \`trainer.ulysses_sequence_parallel_size\` or \`${comp}.ulysses_sequence_parallel_size\` in the veRL config.`,
        ctx.written('trainer.ulysses_sequence_parallel_size') ? 'trainer.ulysses_sequence_parallel_size' : 'cluster',
      );
      return;
    }
    if (tbs % (world / sp) !== 0) {
      reportBatch(
        ctx,
        `The batch size (${tbs}) must be divisible by the number of GPUs (${world}) divided by the sequence parallelism size (${sp}).`,
        tbs,
        world / sp,
      );
      return;
    }
    const fsdp = verl(ctx, `${comp === 'critic' ? 'critic.model' : base}.fsdp_config.fsdp_size`, -1);
    if (fsdp > 0 && fsdp < world && world % fsdp !== 0) {
      ctx.report(
        'TRN222',
        `The number of GPUs (${world}) must be divisible by \`${comp}.fsdp_config.fsdp_size\` (${fsdp}).`,
        `trainer.trainer_config.${comp === 'critic' ? 'critic.model' : base}.fsdp_config.fsdp_size`,
      );
    }
  }
}

/** The per-GPU token budget must hold one full sequence (the floor rose to 2x in v0.3.2 and fell back in v0.5.2). */
function checkTokenBudgets(ctx: CheckContext): void {
  if (ctx.release === 'v0.3.0') return;
  const m = ctx.get('model.max_model_len');
  if (typeof m !== 'number') return;
  const components = [
    { name: 'actor', attr: 'ppo_max_token_len_per_gpu', base: 'actor_rollout_ref.actor' },
    { name: 'ref', attr: 'log_prob_max_token_len_per_gpu', base: 'actor_rollout_ref.ref' },
  ] as const;
  for (const c of components) {
    const budget = tokenBudget(ctx, c.base, c.attr);
    if (!budget || budget.value >= budget.effective) continue;
    const path = `${c.base}.${c.attr}`;
    const at: ConfigPath = budget.written
      ? `trainer.trainer_config.${path}`
      : ctx.written('trainer.max_token_len_per_gpu')
        ? 'trainer.max_token_len_per_gpu'
        : 'model.max_model_len';
    // On main veRL 0.8 ignores a trainer_config override of this key (verl-overrides.ts): only older veRL adjusts it.
    const older = budget.written && ctx.since('main') ? 'With veRL < 0.8, ' : '';
    ctx.report(
      'TRN271',
      `${older}${c.name}.${c.attr} (${budget.value}) is automatically set to ${budget.effective} to match model.max_model_len (${m}${budget.factor === 2 ? ', ×2' : ''}). If you face OOM issues, set \`model.max_model_len\` to a smaller value.`,
      at,
      { value: budget.effective },
      CODES.TRN271.severity,
    );
  }
}

/**
 * A veRL component's per-GPU token budget as the trainer gets it (Trinity's `synchronize_config` and
 * `_adjust_token_len_if_needed`, trinity/common/verl_config.py): written in `trainer_config`, else
 * `trainer.max_token_len_per_gpu` (`value`); the least Trinity lets it be (`minimum`), one `max_model_len` (two in
 * v0.3.2-v0.5.0) split over the component's sequence parallelism; and what it becomes (`effective`). Undefined when
 * the budget or `max_model_len` is unknown.
 */
export function tokenBudget(
  ctx: CheckContext,
  base: 'actor_rollout_ref.actor' | 'actor_rollout_ref.ref' | 'critic',
  attr: 'ppo_max_token_len_per_gpu' | 'log_prob_max_token_len_per_gpu',
): { value: number; minimum: number; effective: number; factor: number; sp: number; written: boolean } | undefined {
  const m = ctx.get('model.max_model_len');
  const path = `${base}.${attr}`;
  const written = ctx.written(`trainer.trainer_config.${path}`);
  const value = written ? ctx.get(`trainer.trainer_config.${path}`) : ctx.get('trainer.max_token_len_per_gpu');
  if (typeof m !== 'number' || typeof value !== 'number') return undefined;
  const factor = ctx.since('v0.3.2') && !ctx.since('v0.5.2') ? 2 : 1;
  const trainerSp = ctx.get('trainer.ulysses_sequence_parallel_size') || 1;
  const sp = Math.max(1, verl(ctx, `${base}.ulysses_sequence_parallel_size`, trainerSp));
  const minimum = Math.ceil((factor * m) / sp);
  return { value, minimum, effective: Math.max(value, minimum), factor, sp, written };
}
