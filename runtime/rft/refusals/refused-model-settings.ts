/**
 * Settings that change what the model computes, samples or learns, which Trinity-RFT hands to vLLM and veRL and the
 * local engine does not apply: a repetition penalty, `ignore_eos` and extra engine arguments (vLLM `SamplingParams`
 * and engine args, from the rollout model's config), RoPE overrides (`hf_overrides` of vLLM and the trainer's
 * `override_config`), an optimizer other than AdamW (Trinity maps `adam`/`adamw` to torch's AdamW), a veRL config file, and the micro-batch loss
 * rescaling (trinity/common/config.py `ModelConfig`, `InferenceModelConfig`, `OptimizerConfig`, `TrainerConfig`,
 * f3c8dec). A run with them would sample or train something else.
 */
import type { SettingRule } from './setting-rule';

const isSet = (v: unknown): boolean => v !== null && v !== undefined;

function repetitionPenalty(path: string): SettingRule {
  return {
    path,
    since: 'v0.4.0',
    local: ['1.0'],
    doc: `\`${path}\` other than 1.0`,
    refuse: (v) =>
      isSet(v) && v !== 1
        ? `a repetition penalty of ${String(v)} would reshape every sampling distribution (vLLM's \`repetition_penalty\`); the local sampler applies none`
        : undefined,
  };
}

function ropeOverride(path: string, what: string): SettingRule {
  return {
    path,
    since: 'v0.4.0',
    local: ["the model's config.json"],
    doc: `\`${path}\` (a RoPE override)`,
    refuse: (v) =>
      isSet(v)
        ? `${what} would override the model's own (vLLM's \`hf_overrides\` and the trainer's model config); the local engine uses the model's config.json as it is`
        : undefined,
  };
}

export const MODEL_SETTING_RULES: readonly SettingRule[] = [
  repetitionPenalty('model.repetition_penalty'),
  repetitionPenalty('explorer.rollout_model.repetition_penalty'),
  {
    path: 'explorer.rollout_model.ignore_eos',
    since: 'v0.3.0',
    local: ['false'],
    doc: '`explorer.rollout_model.ignore_eos: true`',
    refuse: (v) =>
      v === true
        ? 'vLLM would sample past the end-of-sequence token up to `max_response_tokens` (`ignore_eos`); the local sampler stops at it'
        : undefined,
  },
  ropeOverride('model.rope_scaling', 'a `rope_scaling`'),
  ropeOverride('model.rope_theta', 'a `rope_theta`'),
  ropeOverride('explorer.rollout_model.rope_scaling', 'a `rope_scaling`'),
  ropeOverride('explorer.rollout_model.rope_theta', 'a `rope_theta`'),
  {
    path: 'explorer.rollout_model.extra_engine_args',
    since: 'main',
    local: ['{}'],
    doc: '`explorer.rollout_model.extra_engine_args` (vLLM engine arguments)',
    refuse: (v) =>
      v && typeof v === 'object' && Object.keys(v).length
        ? `the vLLM engine would start with ${Object.keys(v)
            .map((k) => `\`${k}\``)
            .join(', ')}; the local engine is not vLLM and takes none of its arguments`
        : undefined,
  },
  {
    path: 'trainer.trainer_config_path',
    since: 'v0.3.0',
    local: ['trainer.trainer_config'],
    doc: '`trainer.trainer_config_path` (veRL settings in a file)',
    refuse: (v, cfg) => {
      const inline = cfg.trainer?.trainer_config;
      return isSet(v) && v !== '' && !(inline && typeof inline === 'object' && Object.keys(inline).length)
        ? `the veRL settings in \`${String(v)}\` would configure the trainer (epochs, micro-batches, clipping); the local trainer reads them from \`trainer.trainer_config\` only (move them there)`
        : undefined;
    },
  },
  {
    path: 'trainer.fix_actor_microbatch_loss_scale',
    since: 'v0.3.2',
    local: ['false'],
    doc: '`trainer.fix_actor_microbatch_loss_scale: true`',
    refuse: (v) =>
      v === true
        ? "each micro-batch's loss would be weighted by its share of the mini-batch's tokens; the local trainer weights it by its share of the rows (veRL's default)"
        : undefined,
  },
  {
    path: 'algorithm.optimizer.optimizer_type',
    since: 'v0.3.0',
    local: ['adam', 'adamw'],
    doc: '`algorithm.optimizer.optimizer_type` other than `adam` / `adamw`',
    refuse: (v) =>
      typeof v === 'string' && !['adam', 'adamw'].includes(v.toLowerCase())
        ? `the trainer would step with \`${v}\`; the local trainer runs AdamW (what Trinity-RFT runs for \`adam\` and \`adamw\`)`
        : undefined,
  },
];
