/**
 * Trinity's `GPUMemoryValidator` (trinity/common/config_validator.py; the last validator from v0.5.0 fdfdc7b, same at
 * v0.5.2 eedef4b and main): in `train` and `both` mode, for an FSDP trainer, it estimates the actor's (and the
 * critic's) peak memory per GPU and, above 80 % of the GPU (90 % with
 * `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`) or without gradient checkpointing, prints a MEMORY OVERUSE
 * WARNING with its suggestions and raises "Unsafe GPU memory usage" — which it catches itself: on a terminal it asks
 * whether to go on (yes after 30 s), otherwise it goes on. `ignore_validator_suggestions: true` turns it off.
 *
 * Reported here: a warning where Trinity's check fires, an error where its estimate exceeds the whole GPU (the
 * trainer would run out of memory), each with Trinity's suggestions as quick fixes. On main with veRL 0.8 (its
 * default install) Trinity's check cannot read the veRL settings and logs "Failed to check model config" instead;
 * the estimate applies the same formulas to the settings veRL 0.8 gets (offloading from `trainer.*`).
 */
import { algorithmTypeAt } from '../../model/algorithms';
import type { ConfigPath } from '../../config-path';
import type { KeyFix, Path } from '../../diagnostics';
import type { GpuSpec } from '../../gpu-memory/gpu-cards';
import { baseModelParams, type ModelShape } from '../../gpu-memory/model-shape';
import { gib, moduleSummary, type Skipped, type TrainerMemory } from '../../gpu-memory/report';
import {
  largestFittingTokens,
  memoryLimit,
  moduleEstimate,
  paramsMemory,
  trinitySuggestions,
  type FsdpModule,
  type LogitsKind,
  type ModuleEstimate,
} from '../../gpu-memory/trainer-memory';
import type { CheckContext } from '../check-context';
import { memoryReport } from '../memory-report';
import { modelShapeFor } from '../model-shape-source';
import { tokenBudget, trainerStrategy, verl } from './trainer';

export function checkGpuMemory(ctx: CheckContext): void {
  const report = memoryReport(ctx);
  const trainer = estimateTrainer(ctx, report.gpu);
  report.trainer = trainer.memory;
  if (trainer.memory.status !== 'estimated' || !trainer.memory.checked) return;
  for (const m of trainer.memory.modules) reportModule(ctx, m, trainer.memory, report.gpu, trainer.shapes[m.module]!);
}

const skipped = (reason: string): Skipped => ({ status: 'skipped', reason });

type ModuleName = ModuleEstimate['module'];

function estimateTrainer(
  ctx: CheckContext,
  gpu: GpuSpec,
): { memory: TrainerMemory | Skipped; shapes: Partial<Record<ModuleName, { shape: ModelShape; logits: LogitsKind }>> } {
  const none = (reason: string) => ({ memory: skipped(reason), shapes: {} });
  if (!ctx.since('v0.5.0'))
    return none(`Trinity ${ctx.release} has no GPU memory check (its GPUMemoryValidator came with v0.5.0)`);
  if (
    ctx.get('model.tinker.enable') === true ||
    (ctx.since('v0.5.2') && ctx.get('model.external_model.enable') === true)
  )
    return none('the trainer does not run on these GPUs (Tinker or an external model)');
  const mode = String(ctx.get('mode'));
  if (mode !== 'train' && mode !== 'both')
    return none(`Trinity checks the trainer's memory in train and both mode, not ${mode}`);
  const strategy = trainerStrategy(ctx);
  if (!strategy.startsWith('fsdp')) return none(`Trinity's memory check covers FSDP trainers, not ${strategy}`);
  const world = ctx.get('cluster.trainer_gpu_num');
  if (typeof world !== 'number' || world <= 0)
    return none("the trainer's GPU count is unknown: set `cluster.node_num` and `cluster.gpu_per_node`");
  const modelPath = String(ctx.get('model.model_path') ?? '');
  const actorShape = modelShapeFor(ctx, modelPath);
  if ('problem' in actorShape) return none(actorShape.problem);
  const useCritic = algorithmTypeAt(String(ctx.get('algorithm.algorithm_type')), ctx.release)?.useCritic === true;
  const criticPath = String(ctx.get('model.critic_model_path') || modelPath);
  const criticShape = !useCritic ? undefined : criticPath === modelPath ? actorShape : modelShapeFor(ctx, criticPath);
  if (criticShape && 'problem' in criticShape) return none(`critic: ${criticShape.problem}`);
  const actorTokens = tokenBudget(ctx, 'actor_rollout_ref.actor', 'ppo_max_token_len_per_gpu');
  const criticTokens = tokenBudget(ctx, 'critic', 'ppo_max_token_len_per_gpu');
  if (!actorTokens || (useCritic && !criticTokens))
    return none('the per-GPU token budget is unknown (it follows from `model.max_model_len`)');

  // Trinity's condition is `use_fused_kernels and fused_kernel_options`; the options are a dataclass, always truthy.
  const logits: LogitsKind =
    verl(ctx, 'actor_rollout_ref.model.use_fused_kernels', false) === true
      ? 'fusion'
      : ctx.get('algorithm.entropy_loss_fn') !== 'none'
        ? 'normal-with-entropy'
        : 'normal-without-entropy';
  const actorFsdp = fsdpModule(ctx, 'actor', strategy, world);
  const actorParams = baseModelParams(actorShape.shape);
  const criticFsdp = fsdpModule(ctx, 'critic', strategy, world);
  const criticParams = criticShape ? baseModelParams(criticShape.shape) : 0;
  const modules = [
    moduleEstimate({
      module: 'actor',
      shape: actorShape.shape,
      params: actorParams,
      fsdp: actorFsdp,
      numTokens: actorTokens.effective,
      logits,
      gradientCheckpointing: verl(ctx, 'actor_rollout_ref.model.enable_gradient_checkpointing', true) !== false,
      otherIdle: criticShape ? paramsMemory(criticParams, criticFsdp).idle : 0,
    }),
  ];
  const shapes: Partial<Record<ModuleName, { shape: ModelShape; logits: LogitsKind }>> = {
    actor: { shape: actorShape.shape, logits },
  };
  if (criticShape && criticTokens) {
    modules.push(
      moduleEstimate({
        module: 'critic',
        shape: criticShape.shape,
        params: criticParams,
        fsdp: criticFsdp,
        numTokens: criticTokens.effective,
        logits: 'none',
        gradientCheckpointing: verl(ctx, 'critic.model.enable_gradient_checkpointing', true) !== false,
        otherIdle: paramsMemory(actorParams, actorFsdp).idle,
      }),
    );
    shapes.critic = { shape: criticShape.shape, logits: 'none' };
  }
  const limit = memoryLimit(gpu.bytes, ctx.host.env);
  const suggestions: string[] = [];
  for (const m of modules) {
    const name = (m.module === 'actor' ? modelPath : criticPath).split('/').pop() ?? '';
    const s = trinitySuggestions(m, name, limit, world);
    if (s.lines.length > 0) suggestions.push(...(suggestions.length > 0 ? [''] : []), ...s.lines);
  }
  if (suggestions.length > 0)
    suggestions.push('', 'To bypass this check, set `ignore_validator_suggestions: true` in config.');
  return {
    memory: {
      status: 'estimated',
      modules,
      limit,
      worldSize: world,
      shapeSource:
        criticShape && criticShape !== actorShape
          ? `${actorShape.shape.source}; critic: ${criticShape.shape.source}`
          : actorShape.shape.source,
      checked: ctx.get('ignore_validator_suggestions') !== true,
      suggestions,
    },
    shapes,
  };
}

/** The FSDP settings a module trains with: veRL's `fsdp_config` as Trinity synchronises it. */
function fsdpModule(ctx: CheckContext, module: ModuleName, strategy: string, world: number): FsdpModule {
  const base = module === 'actor' ? 'actor_rollout_ref.actor.fsdp_config' : 'critic.model.fsdp_config';
  const at = (key: string, fallback: unknown) => verl(ctx, `${base}.${key}`, fallback);
  const size = Number(at('fsdp_size', -1));
  const mixed = at('mixed_precision', {}) as Record<string, unknown> | null;
  // main: offloading comes from `trainer.*` (the legacy config's synchronize_config and veRL 0.8's builder alike).
  const main = ctx.since('main');
  return {
    strategy,
    fsdpSize: size <= 0 || size >= world ? world : size,
    reshardAfterForward: at('reshard_after_forward', true) !== false,
    optimizerOffload: main ? ctx.get('trainer.optimizer_offload') === true : at('optimizer_offload', false) === true,
    offloadPolicy: main ? ctx.get('trainer.offload_policy') === true : at('offload_policy', false) === true,
    dtype: String(mixed?.dtype ?? at('dtype', 'bfloat16')),
  };
}

function reportModule(
  ctx: CheckContext,
  m: ModuleEstimate,
  t: TrainerMemory,
  gpu: GpuSpec,
  model: { shape: ModelShape; logits: LogitsKind },
): void {
  const s = trinitySuggestions(m, '', t.limit, t.worldSize);
  if (s.lines.length === 0) return;
  const over = m.peak > gpu.bytes;
  const fixes = keyFixes(ctx, m, s.fixes, t, model);
  if (!over)
    fixes.push({
      title: "Bypass Trinity's memory check",
      set: [{ path: ['ignore_validator_suggestions'], value: true }],
    });
  const trinity =
    'Trinity\'s launch check prints MEMORY OVERUSE WARNING and raises "Unsafe GPU memory usage", then asks whether to go on when run from a terminal (yes after 30 s) and goes on otherwise';
  const advice = bullets(s.lines);
  let message: string;
  if (!m.gradientCheckpointing) {
    message = `Gradient checkpointing is off for the ${m.module}: Trinity's memory estimate assumes it, so ${trinity}. Memory use is much higher without it.`;
  } else if (over) {
    message = `${moduleSummary(m, gpu)} (${gpu.name}): by Trinity's estimate the ${m.module} needs more than the whole GPU and would run out of memory. ${trinity}. Try: ${advice.join('; ')}.`;
  } else {
    message = `${moduleSummary(m, gpu)} (${gpu.name}): above Trinity's limit of ${Math.round(t.limit.fraction * 100)} % (${gib(t.limit.bytes)} GiB), so ${trinity}. Try: ${advice.join('; ')}.`;
  }
  const code = over && m.gradientCheckpointing ? 'TRN274' : 'TRN273';
  const at = m.gradientCheckpointing ? firstWritten(ctx, ['trainer', 'model.model_path']) : checkpointingPath(m.module);
  ctx.report(code, message, at, { fixes });
}

/** Trinity's `• ...` suggestions, each with its continuation lines, as clauses. */
function bullets(lines: string[]): string[] {
  const out: string[] = [];
  for (const l of lines) {
    if (l.startsWith('• ')) out.push(l.slice(2));
    else if (l.startsWith('  ') && out.length > 0) out[out.length - 1] += ` ${l.trim()}`;
  }
  return out.map((b) => b.replace(/\.$/, ''));
}

function checkpointingPath(module: ModuleName): ConfigPath {
  return module === 'actor'
    ? 'trainer.trainer_config.actor_rollout_ref.model.enable_gradient_checkpointing'
    : 'trainer.trainer_config.critic.model.enable_gradient_checkpointing';
}

function firstWritten(ctx: CheckContext, paths: ConfigPath[]): ConfigPath {
  return paths.find((p) => ctx.written(p)) ?? paths[paths.length - 1];
}

const pathOf = (p: string): Path => p.split('.');

/** Trinity's suggestions that are config edits, as quick fixes (the environment variable is not one). */
function keyFixes(
  ctx: CheckContext,
  m: ModuleEstimate,
  kinds: ReturnType<typeof trinitySuggestions>['fixes'],
  t: TrainerMemory,
  model: { shape: ModelShape; logits: LogitsKind },
): KeyFix[] {
  const main = ctx.since('main');
  const verlBase =
    m.module === 'actor' ? 'trainer.trainer_config.actor_rollout_ref.actor' : 'trainer.trainer_config.critic.model';
  const offload = main ? 'trainer.offload_policy' : `${verlBase}.fsdp_config.offload_policy`;
  const out: KeyFix[] = [];
  for (const kind of kinds) {
    if (kind === 'gradient-checkpointing')
      out.push({
        title: 'Turn gradient checkpointing on',
        set: [{ path: pathOf(checkpointingPath(m.module)), value: true }],
      });
    if (kind === 'fsdp2-offload')
      out.push({
        title: 'Use FSDP2 with its CPU offload policy',
        set: [
          { path: ['trainer', 'trainer_strategy'], value: 'fsdp2' },
          { path: pathOf(offload), value: true },
        ],
      });
    if (kind === 'offload-policy')
      out.push({ title: "Turn on FSDP2's CPU offload policy", set: [{ path: pathOf(offload), value: true }] });
    if (kind === 'fsdp-size')
      out.push({
        title: `Shard over all ${t.worldSize} trainer GPUs (fsdp_size)`,
        set: [{ path: pathOf(`${verlBase}.fsdp_config.fsdp_size`), value: t.worldSize }],
      });
    if (kind === 'token-budget') {
      const budgetNow = tokenBudget(
        ctx,
        m.module === 'actor' ? 'actor_rollout_ref.actor' : 'critic',
        'ppo_max_token_len_per_gpu',
      );
      const fitting = largestFittingTokens(m, model.shape, model.logits, t.limit.bytes);
      if (budgetNow && fitting >= budgetNow.minimum && fitting < m.numTokens)
        out.push({
          title: `Lower the token budget to ${fitting} per GPU`,
          set: [
            {
              path: budgetNow.written
                ? pathOf(
                    `trainer.trainer_config.${m.module === 'actor' ? 'actor_rollout_ref.actor' : 'critic'}.ppo_max_token_len_per_gpu`,
                  )
                : ['trainer', 'max_token_len_per_gpu'],
              value: fitting,
            },
          ],
        });
    }
    if (kind === 'sequence-parallel') {
      const sp = Number(ctx.get('trainer.ulysses_sequence_parallel_size')) || 1;
      if (t.worldSize % (2 * sp) === 0 && model.shape.numHeads % (2 * sp) === 0)
        out.push({
          title: `Split sequences over ${2 * sp} GPUs (ulysses_sequence_parallel_size)`,
          set: [{ path: ['trainer', 'ulysses_sequence_parallel_size'], value: 2 * sp }],
        });
    }
  }
  return out;
}
