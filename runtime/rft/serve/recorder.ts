/**
 * Trinity's HistoryRecorder (trinity/explorer/proxy/recorder.py): every served response is kept in a SQL table (by
 * default `proxy_history` in `<buffer.cache_dir>/proxy_history.db`, else `explorer.db_url`) keyed by its message id
 * (the response id); feedback sets the reward, task id and run id of the rows of the given message ids that were
 * never consumed, marks them consumed and hands them back as experiences. A message id gets its reward once.
 *
 * The table has the layout of the `sql` buffer (buffer/sql.ts, written through its writer): Trinity's columns plus the
 * experience as JSON and its log-probs as a Float64 BLOB.
 */
import Database from 'better-sqlite3';
import type { Experience } from '../experience';
import { FLOAT_ARRAY_FIELDS, blobToFloats, recordToExperience, type FloatArrayField } from '../buffer/codec';
import { SqlExperienceWriter, sqliteFile } from '../buffer';

export const HISTORY_TABLE = 'proxy_history';

/** The feedback's grouping: Trinity copies `task_id` and `run_id` into each experience's id. */
/** Feedback naming message ids this service never served: nothing was changed. */
export class UnknownMessageIds extends Error {
  constructor(readonly ids: string[]) {
    super(
      `unknown msg_ids (not response ids of this service): ${ids
        .slice(0, 5)
        .map((i) => JSON.stringify(i))
        .join(', ')}${ids.length > 5 ? `, and ${ids.length - 5} more` : ''}`,
    );
  }
}

export interface FeedbackKey {
  taskId: string | number | null;
  runId: number;
}

interface HistoryRow {
  id: number;
  msg_id: string;
  model_version: number | null;
  experience: string;
  logprobs: Uint8Array | null;
  advantages: Uint8Array | null;
  returns: Uint8Array | null;
}

export class HistoryRecorder {
  readonly file: string;
  private readonly writer: SqlExperienceWriter;
  private readonly db: Database.Database;

  /** `dbUrl`: `sqlite:///<file>`; `key` names the config key it came from, for errors. */
  constructor(dbUrl: string, key: string) {
    this.file = sqliteFile(dbUrl, key);
    this.writer = new SqlExperienceWriter(dbUrl, HISTORY_TABLE);
    this.db = new Database(this.file, { timeout: 10000 });
  }

  /** record_history: one row per experience, its message id being `eid.suffix`. */
  async record(exps: Experience[]): Promise<void> {
    await this.writer.write(exps);
  }

  /**
   * update_reward: the unconsumed rows of `msgIds`, now with `reward`, `task_id` and `run_id`, consumed. Unlike
   * Trinity, an id that was never recorded fails the whole feedback (UnknownMessageIds) and changes nothing.
   */
  updateReward(reward: number, msgIds: readonly string[], key: FeedbackKey): Experience[] {
    const t = `"${HISTORY_TABLE}"`;
    const select = this.db.prepare(
      `SELECT id, msg_id, model_version, experience, logprobs, advantages, returns FROM ${t}
        WHERE consumed = 0 AND msg_id IN (SELECT value FROM json_each(?)) ORDER BY id`,
    );
    const known = this.db.prepare(`SELECT DISTINCT msg_id FROM ${t} WHERE msg_id IN (SELECT value FROM json_each(?))`);
    const update = this.db.prepare(
      `UPDATE ${t} SET reward = ?, task_id = ?, run_id = ?, consumed = consumed + 1 WHERE id = ?`,
    );
    const rows = this.db
      .transaction(() => {
        const seen = new Set((known.all(JSON.stringify(msgIds)) as { msg_id: string }[]).map((r) => r.msg_id));
        const unknown = [...new Set(msgIds)].filter((m) => !seen.has(m));
        if (unknown.length) throw new UnknownMessageIds(unknown);
        const found = select.all(JSON.stringify(msgIds)) as HistoryRow[];
        const taskColumn = key.taskId === null ? null : String(key.taskId);
        for (const r of found) update.run(reward, taskColumn, key.runId, r.id);
        return found;
      })
      .immediate();
    return rows.map((r) => {
      const floats: Partial<Record<FloatArrayField, number[]>> = {};
      for (const k of FLOAT_ARRAY_FIELDS) if (r[k] !== null) floats[k] = blobToFloats(r[k], k);
      const e = recordToExperience(JSON.parse(r.experience), floats);
      // A feedback without task_id groups its experiences together (Trinity's task id None).
      e.eid = { ...e.eid, task: key.taskId ?? '', run: key.runId, suffix: r.msg_id };
      e.reward = reward;
      if (r.model_version !== null) e.modelVersion = r.model_version;
      return e;
    });
  }

  async close(): Promise<void> {
    await this.writer.finish();
    if (this.db.open) this.db.close();
  }
}
