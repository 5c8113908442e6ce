/**
 * What the checks of a local run's wasm heaps (trainer-heap.ts, explorer-heap.ts) read from a config: the model's
 * shape from its own config.json, the longest row the explorer can produce, the models the trainer holds beside
 * the actor (and whether it trains LoRA adapters), and whether the explorer shares the trainer's thread.
 */
import { algorithmTypeAt, needsReference } from '../model/algorithms';
import { rolesOf } from '../model/choices';
import { explorerInOwnThread } from '../local-memory/explorer-thread';
import type { ConfigPath } from '../config-path';
import type { CheckContext } from './check-context';
import { causalLmParams, shapeFromHfConfig, type ModelShape } from '../gpu-memory/model-shape';
import type { TrainerPass } from '../local-memory/trainer-pass-bytes';
import { FROZEN_LAKE_EPISODE_BUDGET } from './turn-budget';
import { tasksetPaths, workflowTypePath } from './tasksets';

/** Multi-turn workflows whose whole episode is one row, and the token budget of an episode after its first prompt. */
const EPISODE_BUDGETS: Record<string, number> = { frozen_lake_workflow: FROZEN_LAKE_EPISODE_BUDGET };

/**
 * Refused where even the least heap a pass may need exceeds the limit (so a config that runs is never refused);
 * warned where the most it may need passes 75% of it (the heap's growth and fragmentation are not in the estimates).
 */
export const WARN_ABOVE = 0.75;

/**
 * The end of a warning (TRN324, TRN326) that `who` (the trainer, the explorer) may run out of the heap, whose most
 * it may need (`mostBytes`) passes the warning's share of the heap; the least fits.
 */
export function nearLimit(who: string, mostBytes: number, heapBytes: number): string {
  if (mostBytes > heapBytes)
    return `The least it needs fits, the most does not: ${who} may run out of the heap, depending on the rows it gets.`;
  return `That is within ${Math.round((1 - WARN_ABOVE) * 100)}% of the limit, and the heap also holds the allocator's fragmentation: ${who} may run out of it.`;
}

export interface RowLength {
  tokens: number;
  /** Of those, the response's at most (the trainer scores only these); all of them where unknown. */
  response?: number;
  /** The keys that set it, as `key` (line N) where written. */
  keys: ConfigPath[];
}

/** Whether the trainer trains LoRA adapters over a frozen base (`model.lora_configs`). */
export function usesLora(ctx: CheckContext): boolean {
  const configs = ctx.get('model.lora_configs');
  return Array.isArray(configs) && configs.length > 0;
}

/** Whether a `both` / `colocate` run's explorer runs in the trainer's thread (and wasm heap). */
export function explorerSharesThread(ctx: CheckContext): boolean {
  const mode = String(ctx.get('mode') ?? 'both');
  if (!rolesOf(mode).trainer || !rolesOf(mode).explorer) return false;
  return !explorerInOwnThread(
    {
      mode,
      sync_offset: Number(ctx.get('synchronizer.sync_offset') ?? 0),
      sync_interval: Number(ctx.get('synchronizer.sync_interval') ?? 1),
      sync_style: String(ctx.get('synchronizer.sync_style') ?? 'fixed'),
    },
    ctx.host.env?.TRINITY_WORKBENCH_EXPLORER_THREAD,
  );
}

/**
 * The models the trainer holds beside the actor: the frozen reference (as the trainer decides, needsReference) and
 * PPO's critic (`model.critic_model_path`, else the actor's model). Undefined where the critic's shape is unknown.
 */
export function heldModels(
  ctx: CheckContext,
  actor: ModelShape,
): Pick<TrainerPass, 'reference' | 'criticParams'> | undefined {
  const spec = algorithmTypeAt(String(ctx.get('algorithm.algorithm_type')), ctx.release);
  if (!spec) return undefined;
  const fn = (key: string): string => String(ctx.get(`algorithm.${key}` as ConfigPath) ?? 'none');
  const reference = needsReference({
    useReference: spec.useReference,
    klLossFn: fn('kl_loss_fn'),
    policyLossFn: fn('policy_loss_fn'),
    klPenaltyFn: fn('kl_penalty_fn'),
  });
  if (!spec.useCritic) return { reference };
  const criticPath = ctx.get('model.critic_model_path');
  const critic = typeof criticPath === 'string' && criticPath !== '' ? localModelShape(ctx, criticPath) : actor;
  return critic ? { reference, criticParams: causalLmParams(critic) } : undefined;
}

/** The longest row the explorer can produce: prompt + response, or a multi-turn episode's budget, within max_model_len. */
export function longestRow(ctx: CheckContext): RowLength | undefined {
  const maxLen = ctx.get('model.max_model_len');
  const prompt = ctx.get('model.max_prompt_tokens');
  const response = ctx.get('model.max_response_tokens');
  const budget = tasksetPaths(ctx)
    .map((base) => EPISODE_BUDGETS[String(ctx.get(workflowTypePath(ctx, base)) ?? '')])
    .find((b) => b !== undefined);
  const capped = (n: number | undefined, keys: ConfigPath[], answer?: number): RowLength | undefined => {
    if (typeof maxLen === 'number' && maxLen > 0 && (n === undefined || maxLen <= n))
      return { tokens: maxLen, response: answer && Math.min(answer, maxLen), keys: ['model.max_model_len'] };
    return n !== undefined && n > 0 ? { tokens: n, response: answer, keys } : undefined;
  };
  if (budget !== undefined)
    return capped(typeof prompt === 'number' ? prompt + budget : undefined, ['model.max_prompt_tokens'], budget);
  if (typeof prompt === 'number' && typeof response === 'number')
    return capped(prompt + response, ['model.max_prompt_tokens', 'model.max_response_tokens'], response);
  return capped(undefined, []);
}

/**
 * The shape in the model's own config.json (a local directory or the Hugging Face cache), which the local runtime
 * loads; a model not on this machine (published shapes only) cannot run locally anyway, and is left to TRN274.
 */
export function localModelShape(
  ctx: CheckContext,
  path: unknown = ctx.get('model.model_path'),
): ModelShape | undefined {
  if (typeof path !== 'string' || path === '') return undefined;
  const read = ctx.host.modelConfig?.(path, ctx.host.baseDirs ?? []);
  if (!read || !('json' in read)) return undefined;
  const shape = shapeFromHfConfig(read.json, read.file);
  return 'shape' in shape ? shape.shape : undefined;
}
