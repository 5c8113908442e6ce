/**
 * Rollouts read back from a SQLite experience buffer, read-only (better-sqlite3: built for Node 20, so the editor
 * reads through `trinity-workbench rollouts`, not in its own process). Two table layouts are known:
 *
 * - Trinity-RFT's (trinity/buffer/schema/sql_schema.py, `ExperienceModel`): columns `prompt`, `response` (text),
 *   `reward`, and the step as `explore_step` (newer releases; also `train_step`) or `model_version` (older ones);
 *   the rest is a pickled `experience_bytes`, not read.
 * - Ours (runtime/rft/buffer/sql.ts): a `reward` column and the experience as JSON in `experience`, whose
 *   `prompt_text`, `response_text` and `eid.batch` (the explorer step) are read with SQLite's JSON functions.
 */
import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';

export interface ExperienceBufferRef {
  file: string;
  /** The buffer's `name`. */
  table: string;
}

export interface BufferSample {
  prompt: string;
  response: string;
  /** null where the row has none (or it is not finite). */
  reward: number | null;
}

export interface BufferRollouts {
  step: number;
  samples: BufferSample[];
}

const q = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * The samples of the latest `maxSteps` steps (at most `perStep` each, newest rows first), oldest step first.
 * `undefined` when the file or table is missing or has neither layout.
 */
export function rolloutsFromBuffer(
  ref: ExperienceBufferRef,
  maxSteps = 20,
  perStep = 256,
): BufferRollouts[] | undefined {
  if (!existsSync(ref.file)) return undefined;
  let db: Database.Database | undefined;
  try {
    db = new Database(ref.file, { readonly: true, fileMustExist: true });
    const exists = db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).get(ref.table);
    if (!exists) return undefined;
    const cols = new Set(
      (db.prepare(`PRAGMA table_info(${q(ref.table)})`).all() as { name: string }[]).map((c) => c.name),
    );
    let select: string;
    if (cols.has('prompt') && cols.has('response')) {
      const step = cols.has('explore_step')
        ? 'explore_step'
        : cols.has('model_version')
          ? 'model_version'
          : cols.has('train_step')
            ? 'train_step'
            : '0';
      select = `SELECT id, ${step} AS step, prompt, response, ${cols.has('reward') ? 'reward' : 'NULL'} AS reward FROM ${q(ref.table)}`;
    } else if (cols.has('experience')) {
      select = `SELECT id, json_extract(experience, '$.eid.batch') AS step, json_extract(experience, '$.prompt_text') AS prompt, json_extract(experience, '$.response_text') AS response, ${cols.has('reward') ? 'reward' : `json_extract(experience, '$.reward')`} AS reward FROM ${q(ref.table)}`;
    } else return undefined;
    const steps = (
      db
        .prepare(`SELECT DISTINCT step FROM (${select}) WHERE step IS NOT NULL ORDER BY step DESC LIMIT ?`)
        .all(maxSteps) as { step: unknown }[]
    ).map((r) => r.step);
    const rows = db.prepare(
      `SELECT step, prompt, response, reward FROM (${select}) WHERE step = ? ORDER BY id DESC LIMIT ?`,
    );
    const out: BufferRollouts[] = [];
    for (const s of steps.reverse()) {
      const step = Number(s);
      if (!Number.isFinite(step)) continue;
      const samples = (rows.all(s, perStep) as { prompt: unknown; response: unknown; reward: unknown }[])
        .reverse()
        .map((r) => ({
          prompt: r.prompt === null || r.prompt === undefined ? '' : String(r.prompt),
          response: r.response === null || r.response === undefined ? '' : String(r.response),
          reward: typeof r.reward === 'number' && Number.isFinite(r.reward) ? r.reward : null,
        }));
      out.push({ step, samples });
    }
    return out;
  } catch {
    return undefined;
  } finally {
    db?.close();
  }
}
