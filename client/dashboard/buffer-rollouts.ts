/**
 * Rollouts read from a run's experience buffer when its config keeps one in SQLite (`storage_type: sql`, or a
 * queue persisted to a `sqlite:///` path), read-only. Two table layouts are known:
 *
 * - Trinity-RFT's (trinity/buffer/schema/sql_schema.py, `ExperienceModel`): columns `prompt`, `response` (text),
 *   `reward`, and the step as `explore_step` (newer releases; also `train_step`) or `model_version` (older ones);
 *   the rest is a pickled `experience_bytes`, not read.
 * - Ours (runtime/rft/buffer/sql.ts): a `reward` column and the experience as JSON in `experience`, whose
 *   `prompt_text`, `response_text` and `eid.batch` (the explorer step) are read with SQLite's JSON functions.
 *
 * The table is the buffer's `name`. Pure of `vscode`.
 */
import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { basename, isAbsolute, resolve } from 'node:path';
import { rolloutsOf, rolloutStepsOnDisk, type Rollouts } from './series';

type Plain = Record<string, unknown>;

export interface ExperienceBufferRef {
  file: string;
  table: string;
}

const obj = (v: unknown): Plain | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Plain) : undefined);

/**
 * The SQLite experience buffer a resolved config names (`buffer.trainer_input.experience_buffer`), if it has one.
 * A relative database path is looked for under `baseDirs` in order (Trinity resolves it against its working
 * directory); the first that exists wins, else the first.
 */
export function experienceBufferOf(resolved: unknown, baseDirs: readonly string[]): ExperienceBufferRef | undefined {
  const eb = obj(obj(obj(obj(resolved)?.buffer)?.trainer_input)?.experience_buffer);
  if (!eb) return undefined;
  const type = String(eb.storage_type ?? '').toLowerCase();
  const path = typeof eb.path === 'string' ? eb.path : '';
  if (!path.startsWith('sqlite:///') || (type !== 'sql' && type !== 'queue')) return undefined;
  const rel = path.slice('sqlite:///'.length).split('?')[0];
  const table = typeof eb.name === 'string' && eb.name ? eb.name : 'experience_buffer';
  if (isAbsolute(rel)) return { file: rel, table };
  const candidates = baseDirs.map((d) => resolve(d, rel));
  return { file: candidates.find((f) => existsSync(f)) ?? candidates[0] ?? resolve(rel), table };
}

const q = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * The samples of the latest `maxSteps` steps (at most `perStep` each, newest rows first), oldest step first.
 * `undefined` when the file or table is missing or has neither layout.
 */
export function rolloutsFromBuffer(ref: ExperienceBufferRef, maxSteps = 20, perStep = 256): Rollouts[] | undefined {
  if (!existsSync(ref.file)) return undefined;
  let db: Database.Database | undefined;
  try {
    db = new Database(ref.file, { readonly: true, fileMustExist: true });
    const exists = db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).get(ref.table);
    if (!exists) return undefined;
    const cols = new Set((db.prepare(`PRAGMA table_info(${q(ref.table)})`).all() as { name: string }[]).map((c) => c.name));
    let select: string;
    if (cols.has('prompt') && cols.has('response')) {
      const step = cols.has('explore_step') ? 'explore_step' : cols.has('model_version') ? 'model_version' : cols.has('train_step') ? 'train_step' : '0';
      select = `SELECT id, ${step} AS step, prompt, response, ${cols.has('reward') ? 'reward' : 'NULL'} AS reward FROM ${q(ref.table)}`;
    } else if (cols.has('experience')) {
      select = `SELECT id, json_extract(experience, '$.eid.batch') AS step, json_extract(experience, '$.prompt_text') AS prompt, json_extract(experience, '$.response_text') AS response, ${cols.has('reward') ? 'reward' : `json_extract(experience, '$.reward')`} AS reward FROM ${q(ref.table)}`;
    } else return undefined;
    const steps = (db.prepare(`SELECT DISTINCT step FROM (${select}) WHERE step IS NOT NULL ORDER BY step DESC LIMIT ?`).all(maxSteps) as { step: unknown }[]).map((r) => r.step);
    const rows = db.prepare(`SELECT step, prompt, response, reward FROM (${select}) WHERE step = ? ORDER BY id DESC LIMIT ?`);
    const out: Rollouts[] = [];
    for (const s of steps.reverse()) {
      const step = Number(s);
      if (!Number.isFinite(step)) continue;
      const samples = (rows.all(s, perStep) as { prompt: unknown; response: unknown; reward: unknown }[]).reverse().map((r) => ({
        prompt: r.prompt === null || r.prompt === undefined ? '' : String(r.prompt),
        response: r.response === null || r.response === undefined ? '' : String(r.response),
        reward: typeof r.reward === 'number' ? r.reward : Number.NaN,
      }));
      out.push(rolloutsOf(step, samples));
    }
    return out;
  } catch {
    return undefined;
  } finally {
    db?.close();
  }
}

export interface JobRollouts {
  /** Where they were read, for the tab to say. */
  origin: string;
  steps: Rollouts[];
}

/**
 * A run on disk's latest rollouts: our runtime's `monitor/rollouts.jsonl`, else the SQLite experience buffer its
 * resolved config names (Trinity logs samples only to W&B / MLflow; the buffer is where they are on disk). A
 * relative database path is looked for from the config's folder, then the job directory.
 */
export function rolloutsOfJob(jobDir: string, resolved: unknown, configDir: string | undefined, maxSteps: number): JobRollouts | undefined {
  const jsonl = rolloutStepsOnDisk(jobDir, maxSteps);
  if (jsonl.length) return { origin: 'monitor/rollouts.jsonl', steps: jsonl };
  const ref = resolved === undefined ? undefined : experienceBufferOf(resolved, [...(configDir ? [configDir] : []), jobDir]);
  const steps = ref ? rolloutsFromBuffer(ref, maxSteps) : undefined;
  return ref && steps?.length ? { origin: `experience buffer ${basename(ref.file)} (table ${ref.table})`, steps } : undefined;
}
