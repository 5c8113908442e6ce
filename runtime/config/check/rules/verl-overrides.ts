/**
 * What veRL 0.8's config builder on main (trinity/trainer/verl/config.py, 3231abd) does with `trainer.trainer_config`
 * beyond dropping unknown sections: overrides of the keys Trinity derives from its own config are ignored with a
 * warning (`FROZEN_KEYS`), and the other strategy's engine section is stripped (`_strip_incompatible_engine_keys`).
 * Both are warnings at the written key: Trinity runs, without the value.
 */
import type { Path } from '../../diagnostics';
import type { YMap, YNode } from '../../load/yaml-tree';
import type { CheckContext } from '../check-context';

const SOURCE = 'trinity/trainer/verl/config.py, 3231abd';

/** Each frozen key (veRL 0.8's flat layout) and the Trinity setting it is built from. */
const FROZEN: Record<string, string> = {
  'model.path': '`model.model_path`',
  'model.trust_remote_code': '`model.trust_remote_code`',
  'model.use_remove_padding': '`trainer.use_remove_padding`',
  'model.custom_chat_template': '`model.custom_chat_template`',
  'model.lora_rank': '`model.lora_configs`',
  'model.lora_alpha': '`model.lora_configs`',
  'model.target_modules': '`model.lora_configs`',
  'model.exclude_modules': '`model.lora_configs`',
  'model.lora_adapter_path': '`model.lora_configs`',
  'actor.strategy': '`trainer.trainer_strategy`',
  'actor.ppo_mini_batch_size': '`buffer.train_batch_size`',
  'actor.use_dynamic_bsz': '`trainer.use_dynamic_bsz`',
  'actor.ppo_max_token_len_per_gpu': '`trainer.max_token_len_per_gpu`',
  'actor.ppo_infer_max_token_len_per_gpu': '`trainer.max_token_len_per_gpu`',
  'actor.use_kl_loss': '`algorithm.kl_loss_fn` (any but `none`)',
  'actor.loss_agg_mode': '`algorithm.loss_agg_mode`',
  'actor.rollout_n': '`algorithm.repeat_times`',
  'actor.grad_clip': '`trainer.grad_clip`',
  'actor.ulysses_sequence_parallel_size': '`trainer.ulysses_sequence_parallel_size`',
  'actor.use_remove_padding': '`trainer.use_remove_padding`',
  'ref.strategy': '`trainer.trainer_strategy`',
  'ref.rollout_n': '`algorithm.repeat_times`',
  'ref.log_prob_use_dynamic_bsz': '`trainer.use_dynamic_bsz`',
  'ref.log_prob_max_token_len_per_gpu': '`trainer.max_token_len_per_gpu`',
  'ref.ulysses_sequence_parallel_size': '`trainer.ulysses_sequence_parallel_size`',
  'ref.use_remove_padding': '`trainer.use_remove_padding`',
  'rollout.temperature': "the first taskset's `rollout_args.temperature`",
  'rollout.n': '`algorithm.repeat_times`',
  'rollout.log_prob_use_dynamic_bsz': '`trainer.use_dynamic_bsz`',
  'rollout.log_prob_max_token_len_per_gpu': '`trainer.max_token_len_per_gpu`',
  'critic.enable': '`algorithm.algorithm_type` (whether it trains a critic)',
  'critic.strategy': '`trainer.trainer_strategy`',
  'critic.ppo_mini_batch_size': '`buffer.train_batch_size`',
  'critic.use_dynamic_bsz': '`trainer.use_dynamic_bsz`',
  'critic.ppo_max_token_len_per_gpu': '`trainer.max_token_len_per_gpu`',
  'critic.ppo_infer_max_token_len_per_gpu': '`trainer.max_token_len_per_gpu`',
  'critic.rollout_n': '`algorithm.repeat_times`',
  'critic.grad_clip': '`trainer.grad_clip`',
  'critic.ulysses_sequence_parallel_size': '`trainer.ulysses_sequence_parallel_size`',
  'critic.forward_max_token_len_per_gpu': '`trainer.max_token_len_per_gpu`',
};

const MERGED = ['model', 'actor', 'ref', 'rollout', 'critic'] as const;
const FSDP_ENGINE = ['fsdp_config', 'fsdp'];
const MEGATRON_ENGINE = ['megatron'];

/**
 * Reports the frozen overrides and stripped engine sections written in `trainer_config` (the map at `src`) for a
 * trainer of `strategy`.
 * A section is read where Trinity reads it: under `actor_rollout_ref` (critic at the top), else at the top.
 */
export function checkVerl08Overrides(ctx: CheckContext, config: YMap, src: Path, strategy: string): void {
  const dropped = strategy.startsWith('fsdp') ? MEGATRON_ENGINE : FSDP_ENGINE;
  for (const { name, node, path } of mergedSections(config, src)) {
    for (const e of node.entries) {
      if (['actor', 'ref', 'critic'].includes(name) && dropped.includes(e.key)) {
        ctx.report(
          'TRN271',
          `\`${name}.${e.key}\` is dropped: it configures the ${strategy.startsWith('fsdp') ? 'Megatron' : 'FSDP'} engine, and with \`trainer_strategy: ${strategy}\` veRL 0.8's config builder on main strips it (\`_strip_incompatible_engine_keys\`, ${SOURCE}).`,
          e.keyRange,
          { path: [...path, e.key], remove: true },
          'warning',
        );
        continue;
      }
      frozenUnder(ctx, `${name}.${e.key}`, e.value, [...path, e.key], e.keyRange);
    }
  }
}

function frozenUnder(ctx: CheckContext, key: string, value: YNode, path: Path, keyRange: readonly [number, number]) {
  const from = FROZEN[key];
  if (from) {
    ctx.report(
      'TRN271',
      `\`${key}\` is ignored: with veRL 0.8 (main's default) Trinity builds it from ${from} and skips a \`trainer_config\` override of it (\`FROZEN_KEYS\`, ${SOURCE}). Set ${from} instead.`,
      keyRange,
      { path, remove: true },
      'warning',
    );
    return;
  }
  if (value.kind !== 'map') return;
  for (const e of value.entries) frozenUnder(ctx, `${key}.${e.key}`, e.value, [...path, e.key], e.keyRange);
}

/** The sections Trinity's `_normalize_trainer_config` merges, with where each is written. */
function mergedSections(config: YMap, src: Path): { name: string; node: YMap; path: Path }[] {
  const out: { name: string; node: YMap; path: Path }[] = [];
  const at = (map: YMap, key: string) => map.entries.find((e) => e.key === key)?.value;
  const arr = at(config, 'actor_rollout_ref');
  for (const name of MERGED) {
    const nested = arr?.kind === 'map' ? at(arr, name) : undefined;
    const top = at(config, name);
    // A top-level `critic` wins over one under `actor_rollout_ref`; for the others the nested one wins.
    const useTop = name === 'critic' ? top !== undefined : nested === undefined;
    const [node, path] = useTop ? [top, [...src, name]] : [nested, [...src, 'actor_rollout_ref', name]];
    if (node?.kind === 'map') out.push({ name, node, path });
  }
  return out;
}
