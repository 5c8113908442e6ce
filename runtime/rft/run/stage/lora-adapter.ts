/**
 * `model.lora_configs` as Trinity trains it (Trinity-RFT 10796ed: trinity/common/config_validator.py
 * `_validate_lora`, trinity/trainer/verl/verl_config.py and fsdp_workers.py): one adapter of `lora_rank`,
 * `lora_alpha`, `target_modules` and `exclude_modules` (PEFT's matching: `all-linear`, else a regular expression over
 * the module names) on frozen base weights. It comes from `path` (`PeftModel.from_pretrained`), or is a fresh one
 * (PEFT's initialisation, B = 0) where Trinity made a dummy adapter (`is_dummy`). Each checkpoint keeps it as PEFT
 * files in `lora_adapter/` (fsdp_workers.py `_save_lora`), beside the merged weights that the explorer loads, as
 * vLLM serves the base with the adapter.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../../../config/types.generated';
import type { CausalLM } from '../../../engine/lm/transformer';
import { addLora, loadLora, mergeLora, type LoraSpec } from '../../../engine/lm/lora';
import { localPath } from './config-paths';
import { RunSetupError } from './stage-context';

/** Where a checkpoint keeps the adapter (Trinity: `global_step_N/actor/lora_adapter`). */
export const LORA_DIR = 'lora_adapter';

type LoraConfig = NonNullable<Config['model']['lora_configs']>[number];

/** The adapter the config trains, as the engine takes it; undefined without `lora_configs`. */
export function loraSpecOf(cfg: Config): LoraSpec | undefined {
  const lc = cfg.model.lora_configs?.[0];
  if (!lc) return undefined;
  const match = (m: string) => (m === 'all-linear' ? m : { regex: m });
  return {
    rank: lc.lora_rank,
    alpha: lc.lora_alpha,
    targetModules: match(lc.target_modules),
    ...(lc.exclude_modules ? { excludeModules: { regex: lc.exclude_modules } } : {}),
    // Trinity's LoRAConfig has no dropout: PEFT's default, none.
    dropout: 0,
  };
}

/** The pre-trained adapter directory `path` names, or undefined for a fresh (dummy) adapter. */
function pretrainedPath(lc: LoraConfig, configDir: string): string | undefined {
  if (!lc.path) return undefined;
  const dir = localPath(lc.path, configDir);
  // Releases before v0.5.0 have no `is_dummy`: the dummy path the check fills in holds nothing here.
  const dummy = lc.is_dummy ?? !existsSync(join(dir, 'adapter_config.json'));
  return dummy ? undefined : dir;
}

/**
 * Puts the config's adapter on the trainer's policy (whose weights are the base): the resumed checkpoint's, else the
 * one at `path`, else a fresh one. Returns what it trains, for the checkpoints.
 */
export function attachTrainerAdapter(
  model: CausalLM,
  cfg: Config,
  configDir: string,
  seed: number,
  resumedDir: string | undefined,
): LoraSpec | undefined {
  const spec = loraSpecOf(cfg);
  if (!spec) return undefined;
  const lc = cfg.model.lora_configs![0];
  const from = resumedDir ? join(resumedDir, LORA_DIR) : pretrainedPath(lc, configDir);
  try {
    if (from) loadLora(model, from);
    else addLora(model, spec, seed);
  } catch (e) {
    throw new RunSetupError(`model.lora_configs.0${from ? ` (${from})` : ''}: ${(e as Error).message}`);
  }
  return spec;
}

/** The explorer's base weights with a pre-trained adapter merged in (nothing to do for a fresh one, B = 0). */
export function mergePretrainedAdapter(model: CausalLM, cfg: Config, configDir: string): void {
  const lc = cfg.model.lora_configs?.[0];
  const from = lc && pretrainedPath(lc, configDir);
  if (!from) return;
  try {
    loadLora(model, from);
  } catch (e) {
    throw new RunSetupError(`model.lora_configs.0.path ${lc.path}: ${(e as Error).message}`);
  }
  mergeLora(model);
}

/** Whether a model directory is one of this runtime's checkpoints (its weights already merged). */
export function isCheckpointDir(dir: string): boolean {
  return existsSync(join(dir, 'trainer_state.json'));
}
