/** A model directory a config names, loaded: a local path (against the config's directory) or a cached hub id. */
import { existsSync } from 'node:fs';
import type { Config } from '../../../config/types.generated';
import { loadPretrained, type Pretrained } from '../../../engine/pretrained';
import { localPath } from './config-paths';
import { RunSetupError } from './stage-context';

/** Loads `modelPath` (default `model.model_path`); a failure names `key`, the config key that set the path. */
export function loadModelFor(
  cfg: Config,
  configDir: string,
  modelPath = cfg.model.model_path,
  key = 'model.model_path',
): Pretrained {
  const p = localPath(modelPath, configDir);
  try {
    return loadPretrained(existsSync(p) ? p : modelPath);
  } catch (e) {
    throw new RunSetupError(`${key} ${modelPath}: ${(e as Error).message}`);
  }
}
