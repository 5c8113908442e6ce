/**
 * `data_processor.experience_pipeline.save_input` / `input_save_path`: every explorer step's experiences, as they
 * reach the pipeline (before its operators), kept in a store of their own, as Trinity's `ExperiencePipeline.
 * _init_input_storage` does (trinity/buffer/pipelines/experience_pipeline.py, f3c8dec; the same at 4b27dff, v0.4.0):
 *
 * - a path ending in `.json` / `.jsonl` (Trinity's `is_json_file`) is a file storage: JSON lines;
 * - a database URL (`is_database_url`) is a sql storage whose table is `pipeline_input` (the StorageConfig's `name`
 *   there, schema `experience`); only `sqlite:///` opens here, as for every sql buffer;
 * - anything else Trinity refuses with "Unsupported save_input format".
 *
 * The default path (`sqlite:///<buffer.cache_dir>/explorer_output.db` from v0.4.0, `<cache_dir>/explorer_output.jsonl`
 * before) is the check's fill (runtime/config/check/rules/buffer.ts). Relative paths open from the working directory,
 * as SQLAlchemy and `open` take them. Before v0.4.0 Trinity's StorageConfig here had no `name` (30ca213); the table is
 * `pipeline_input` for every release.
 */
import { JsonlExperienceWriter, SqlExperienceWriter, isDatabaseUrl, sqliteFile } from '../../buffer';
import { INPUT_SAVE_PATH, unsupportedInputSavePath } from '../../../config/check/runtime';
import type { Config } from '../../../config/types.generated';
import type { Experience } from '../../experience';
import { RunSetupError } from '../stage/stage-context';

/** The table Trinity's pipeline names its sql input store (experience_pipeline.py `name="pipeline_input"`). */
export const PIPELINE_INPUT_TABLE = 'pipeline_input';

export interface PipelineInputStore {
  save(exps: Experience[]): void;
  close(): void;
}

/** The store `save_input` asks for, opened; undefined when it is off (or there is no pipeline section). */
export function openPipelineInputStore(cfg: Config): PipelineInputStore | undefined {
  const ep = cfg.data_processor.experience_pipeline;
  if (!ep?.save_input) return undefined;
  const path = ep.input_save_path;
  if (path === null || path === undefined || path === '')
    throw new RunSetupError(`\`${INPUT_SAVE_PATH}\`: input_save_path must be set when save_input is True.`);
  const unsupported = unsupportedInputSavePath(path);
  if (unsupported) throw new RunSetupError(unsupported); // the check's TRN320 refuses it first
  if (!isDatabaseUrl(path)) {
    const w = new JsonlExperienceWriter(path);
    return { save: (exps) => w.writeNow(exps), close: () => w.finishNow() };
  }
  sqliteFile(path, INPUT_SAVE_PATH); // a postgresql:// or mysql:// server: refused before any work (refused-features.ts)
  const w = new SqlExperienceWriter(path, PIPELINE_INPUT_TABLE);
  return { save: (exps) => w.writeNow(exps), close: () => w.finishNow() };
}
