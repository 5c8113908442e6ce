/** The sampling limits of the explorer's models: `model`'s for the rollout model, each auxiliary model's own. */
import type { Config, InferenceModelConfig } from '../../../config/types.generated';
import type { RolloutLimits } from '../../models/rollout-model';

export function rolloutLimits(cfg: Config): RolloutLimits {
  const m = cfg.model;
  return {
    maxPromptTokens: m.max_prompt_tokens,
    maxResponseTokens: m.max_response_tokens ?? 512,
    minResponseTokens: m.min_response_tokens,
    enablePromptTruncation: m.enable_prompt_truncation,
    // `model.temperature`, `top_p` and `top_k` are new in v0.3.2, `enable_thinking` in v0.5.2: earlier releases
    // sample with vLLM's defaults and the chat template's own.
    temperature: m.temperature ?? 1,
    topP: m.top_p ?? 1,
    topK: m.top_k ?? -1,
    enableThinking: m.enable_thinking ?? null,
    // The check fills the rollout model's from `model.custom_chat_template` (itself read from `chat_template_path`).
    chatTemplate: cfg.explorer.rollout_model.chat_template ?? m.custom_chat_template ?? null,
    maxModelLen: modelLen(m.max_model_len, m.max_prompt_tokens, m.max_response_tokens),
  };
}

/**
 * The engine's `max_model_len`: as set, else `max_prompt_tokens + max_response_tokens` as Trinity's validator derives
 * it (trinity/common/config_validator.py `_check_model_len`, cbeb875); null when neither is known (the checker's
 * TRN212: Trinity refuses such a config).
 */
function modelLen(
  set: number | null | undefined,
  prompt: number | null | undefined,
  response: number | null | undefined,
): number | null {
  if (set != null) return set;
  return prompt != null && response != null ? prompt + response : null;
}

/**
 * An auxiliary model's sampling limits: its own values, else `model`'s (Trinity's check fills each unset one from
 * `model` with set_if_none; the checker here leaves them unset).
 */
export function auxiliaryLimits(cfg: Config, m: InferenceModelConfig): RolloutLimits {
  const base = rolloutLimits(cfg);
  return {
    maxPromptTokens: m.max_prompt_tokens ?? base.maxPromptTokens,
    maxResponseTokens: m.max_response_tokens ?? base.maxResponseTokens,
    minResponseTokens: m.min_response_tokens ?? base.minResponseTokens,
    enablePromptTruncation: m.enable_prompt_truncation ?? base.enablePromptTruncation,
    temperature: m.temperature ?? base.temperature,
    topP: m.top_p ?? base.topP,
    topK: m.top_k ?? base.topK,
    enableThinking: m.enable_thinking ?? base.enableThinking,
    chatTemplate: m.chat_template ?? null,
    maxModelLen: m.max_model_len ?? base.maxModelLen,
  };
}
