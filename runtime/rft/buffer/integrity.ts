/**
 * SQLite buffers checked before a run works on them: `PRAGMA quick_check` (SQLite's O(N) check of the b-trees, the
 * integrity check without the index cross-checks) on every `sql` taskset and buffer file of a stage that exists. A
 * damaged file is reported with its file, the config key that names it and what SQLite found, and the run does
 * nothing: training on a buffer that loses or garbles rows would lose experiences silently.
 */
import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import type { Config, StorageConfig } from '../../config/types.generated';
import { sqliteFile } from './sql';

export class BufferIntegrityError extends Error {
  override name = 'BufferIntegrityError';
}

/** The `sql` storages of a stage config, by config key, with their paths as the config writes them. */
export function sqlStorages(cfg: Config): { key: string; path: string }[] {
  const input = cfg.buffer.explorer_input;
  const trainer = cfg.buffer.trainer_input;
  const all: [string, Pick<StorageConfig, 'storage_type' | 'path'> | null][] = [
    ['buffer.explorer_input.taskset', input.taskset],
    ...input.tasksets.map((t, i): [string, typeof t] => [`buffer.explorer_input.tasksets.${i}`, t]),
    ...input.eval_tasksets.map((t, i): [string, typeof t] => [`buffer.explorer_input.eval_tasksets.${i}`, t]),
    ['buffer.trainer_input.experience_buffer', trainer.experience_buffer],
    ...Object.entries(trainer.auxiliary_buffers ?? {}).map(([k, b]): [string, typeof b] => [
      `buffer.trainer_input.auxiliary_buffers.${k}`,
      b,
    ]),
  ];
  return all.flatMap(([key, s]) => (s?.storage_type === 'sql' && s.path ? [{ key, path: s.path }] : []));
}

/** Throws BufferIntegrityError for the first storage file (made absolute by `absolute`) that fails quick_check. */
export function checkSqlStorages(cfg: Config, absolute: (path: string) => string): void {
  const seen = new Set<string>();
  for (const { key, path } of sqlStorages(cfg)) {
    const file = sqliteFile(absolute(path), key);
    if (seen.has(file) || !existsSync(file)) continue;
    seen.add(file);
    const problems = quickCheck(file);
    if (problems.length)
      throw new BufferIntegrityError(
        `${file} (${key}) fails SQLite's integrity check (PRAGMA quick_check), so the run does not start:\n` +
          problems
            .slice(0, 5)
            .map((p) => `  ${p}`)
            .join('\n') +
          `${problems.length > 5 ? `\n  … ${problems.length - 5} more` : ''}\n` +
          `Restore the file from a copy, or move it away to start the buffer afresh.`,
      );
  }
}

/** What `PRAGMA quick_check` reports ([] when the file is fine; a file that is no database is one problem). */
export function quickCheck(file: string): string[] {
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { fileMustExist: true, timeout: 10000 });
    const rows = db.pragma('quick_check') as { quick_check: string }[];
    const lines = rows.map((r) => r.quick_check);
    return lines.length === 1 && lines[0] === 'ok' ? [] : lines;
  } catch (e) {
    return [`${(e as Error).message}${(e as { code?: string }).code ? ` (${(e as { code?: string }).code})` : ''}`];
  } finally {
    db?.close();
  }
}
