/**
 * Rollouts read back from a SQLite experience buffer, read-only (better-sqlite3: built for Node 20, so the editor
 * reads through `trinity-workbench rollouts`, not in its own process). Two table layouts are known:
 *
 * - Trinity-RFT's (trinity/buffer/schema/sql_schema.py, `ExperienceModel`): the pickled experience in
 *   `experience_bytes` (trinity-experience.ts: tokens, prompt length, action mask, advantages, eid, info, messages),
 *   the `reward` column (which `to_experience` puts back over the pickled one), and, where a blob is absent or
 *   unreadable, the text columns `prompt` / `response` of v0.3.x; the step is the experience's `eid.batch` (the
 *   explorer step), else the column `explore_step` / `model_version` / `train_step`.
 * - Ours (runtime/rft/buffer/sql.ts): a `reward` column and the experience as JSON in `experience`, whose
 *   `prompt_text`, `response_text` and `eid.batch` (the explorer step) are read with SQLite's JSON functions.
 */
import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { decodeExperienceBytes } from './trinity-experience';
import { sampleOfExperience, type ExperienceSample } from './experience-sample';

export interface ExperienceBufferRef {
  file: string;
  /** The buffer's `name`. */
  table: string;
}

/** A rollout record; `reward` null where the row has none (or it is not finite). */
export type BufferSample = ExperienceSample;

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
    const step = ['explore_step', 'model_version', 'train_step'].find((c) => cols.has(c)) ?? '0';
    if (cols.has('experience_bytes')) return trinityRows(db, ref.table, cols, step, maxSteps, perStep);
    let select: string;
    if (cols.has('prompt') && cols.has('response')) {
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

/** Past these, older rows of a Trinity table are not read (the newest steps are what the dashboard shows). */
const MAX_ROWS = 20_000;
const MAX_TOTAL_BYTES = 256 << 20;

/** Trinity's table: the newest rows decoded, grouped by step, the latest `maxSteps` steps kept. */
function trinityRows(
  db: Database.Database,
  table: string,
  cols: Set<string>,
  stepColumn: string,
  maxSteps: number,
  perStep: number,
): BufferRollouts[] {
  const text = (c: string) => (cols.has(c) ? c : 'NULL');
  const rows = db
    .prepare(
      `SELECT ${stepColumn} AS step, ${text('prompt')} AS prompt, ${text('response')} AS response, ${text('reward')} AS reward, experience_bytes AS blob FROM ${q(table)} ORDER BY id DESC LIMIT ?`,
    )
    .iterate(MAX_ROWS) as IterableIterator<{
    step: unknown;
    prompt: unknown;
    response: unknown;
    reward: unknown;
    blob: unknown;
  }>;
  const bySteps = new Map<number, BufferSample[]>();
  let bytes = 0;
  for (const r of rows) {
    const blob = r.blob instanceof Uint8Array ? r.blob : undefined;
    bytes += blob?.byteLength ?? 0;
    if (bytes > MAX_TOTAL_BYTES) break;
    const columns = {
      prompt: r.prompt === null || r.prompt === undefined ? '' : String(r.prompt),
      response: r.response === null || r.response === undefined ? '' : String(r.response),
      reward: typeof r.reward === 'number' && Number.isFinite(r.reward) ? r.reward : null,
    };
    let sample: BufferSample = columns;
    let step = Number(r.step);
    if (blob) {
      try {
        const [exp] = decodeExperienceBytes(blob);
        if (!exp) throw new Error('the blob holds no experience');
        sample = sampleOfExperience(exp, columns);
        if (Number.isInteger(Number(exp.eid.batch)) && exp.eid.batch !== '') step = Number(exp.eid.batch);
      } catch (e) {
        if (!columns.prompt && !columns.response)
          sample = { ...columns, response: `[experience_bytes not read: ${(e as Error).message}]` };
      }
    }
    if (!Number.isFinite(step)) continue;
    const list = bySteps.get(step) ?? [];
    if (!bySteps.has(step)) {
      if (bySteps.size >= maxSteps && step < Math.min(...bySteps.keys())) continue;
      bySteps.set(step, list);
    }
    if (list.length < perStep) list.push(sample);
  }
  return [...bySteps.entries()]
    .sort((a, b) => a[0] - b[0])
    .slice(-maxSteps)
    .map(([step, samples]) => ({ step, samples: samples.reverse() }));
}
