/**
 * Settings that change what the model computes, samples or learns, which Trinity-RFT hands to vLLM and veRL and the
 * local engine does not apply, for the rollout model and each auxiliary model alike: a repetition penalty,
 * `ignore_eos` and extra engine arguments (vLLM `SamplingParams` and engine args, from each inference model's config),
 * an auxiliary model served by an external API, RoPE overrides (`hf_overrides` of vLLM and the trainer's
 * `override_config`), an optimizer other than AdamW (Trinity maps `adam`/`adamw` to torch's AdamW), a veRL config
 * file, and the micro-batch loss rescaling (trinity/common/config.py `ModelConfig`, `InferenceModelConfig`,
 * `OptimizerConfig`, `TrainerConfig`, f3c8dec). A run with them would sample or train something else.
 */
import { valueAtPath } from '../../config/config-path';
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

/**
 * The engine settings of an inference model (`explorer.rollout_model`, each of `explorer.auxiliary_models`), which
 * Trinity-RFT hands to that model's vLLM engine: refused for every model the local runtime loads in its place.
 */
function engineRules(model: string): SettingRule[] {
  return [
    repetitionPenalty(`${model}.repetition_penalty`),
    {
      path: `${model}.ignore_eos`,
      since: 'v0.3.0',
      local: ['false'],
      doc: `\`${model}.ignore_eos: true\``,
      refuse: (v) =>
        v === true
          ? 'vLLM would sample past the end-of-sequence token up to `max_response_tokens` (`ignore_eos`); the local sampler stops at it'
          : undefined,
    },
    ropeOverride(`${model}.rope_scaling`, 'a `rope_scaling`'),
    ropeOverride(`${model}.rope_theta`, 'a `rope_theta`'),
    {
      path: `${model}.extra_engine_args`,
      since: 'main',
      local: ['{}'],
      doc: `\`${model}.extra_engine_args\` (vLLM engine arguments)`,
      refuse: (v) =>
        v && typeof v === 'object' && Object.keys(v).length
          ? `the vLLM engine would start with ${Object.keys(v)
              .map((k) => `\`${k}\``)
              .join(', ')}; the local engine is not vLLM and takes none of its arguments`
          : undefined,
    },
  ];
}

const AUXILIARY = 'explorer.auxiliary_models.*';

export const MODEL_SETTING_RULES: readonly SettingRule[] = [
  repetitionPenalty('model.repetition_penalty'),
  ropeOverride('model.rope_scaling', 'a `rope_scaling`'),
  ropeOverride('model.rope_theta', 'a `rope_theta`'),
  ...engineRules('explorer.rollout_model'),
  ...engineRules(AUXILIARY),
  {
    // An auxiliary model served by an OpenAI-compatible API instead of a vLLM engine (trinity/common/config.py
    // `InferenceModelConfig.external_model_config`, f3c8dec).
    path: `${AUXILIARY}.external_model_config.enable`,
    since: 'v0.5.2',
    local: ['model_path'],
    doc: `\`${AUXILIARY}.external_model_config.enable\` (an auxiliary model from an external OpenAI-compatible service)`,
    refuse: (v, cfg, at) => {
      if (v !== true) return undefined;
      const m = (valueAtPath(cfg, at.slice(0, -'.external_model_config.enable'.length)) ?? {}) as Record<string, any>;
      const e = (m.external_model_config ?? {}) as Record<string, unknown>;
      return (
        `the workflows would call the external model \`${e.model_name ?? m.model_path ?? m.name}\` at the OpenAI-compatible service in ` +
        `\`$${e.base_url_env ?? 'OPENAI_BASE_URL'}\` (its key in \`$${e.api_key_env ?? 'OPENAI_API_KEY'}\`) as this auxiliary model; that service is reached on Trinity-RFT only, and the local runtime would load \`model_path\` itself instead`
      );
    },
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
