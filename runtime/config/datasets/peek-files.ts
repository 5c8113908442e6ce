/** The first rows of a split's data files, through the reader of their format. */
import { peekCsvFile } from './csv-reader';
import { compressionOf, type BuilderModule } from './data-file-formats';
import { peekJsonFile } from './json-reader';
import { peekParquetFile } from './parquet-reader';
import {
  peekFailure,
  type DatasetFormat,
  type DatasetPeek,
  type FilePeek,
  type PeekFailure,
  type PeekLimits,
  type PeekResult,
  type PeekWarning,
} from './peek-result';

/** Files read for one peek at the most, however few rows each holds. */
const MAX_FILES_READ = 8;

/** Reads files until `maxRows` rows; `warnings` so far are passed in, and the result carries them with its own. */
export async function peekFiles(
  files: string[],
  module: BuilderModule,
  limits: PeekLimits,
  warnings: PeekWarning[],
): Promise<PeekResult> {
  const done = (peek: Omit<DatasetPeek, 'warnings'>): PeekResult => ({
    ok: true,
    peek: warnings.length > 0 ? { ...peek, warnings } : peek,
  });
  if (module === 'arrow') {
    warnings.push({
      code: 'rows-not-read',
      message: 'arrow, not peeked: rows and columns of .arrow files are not read',
    });
    return done({ files, format: 'arrow', rows: [], columns: [] });
  }
  if (module !== 'json' && module !== 'parquet' && module !== 'csv') {
    return peekFailure(
      'unreadable',
      `${files[0]}: datasets would load these files with its '${module}' builder; peeking supports json, jsonl, parquet and csv`,
    );
  }

  const rows: Record<string, unknown>[] = [];
  const columns: string[] = [];
  const addColumns = (cs: Iterable<string>) => {
    for (const c of cs) if (!columns.includes(c)) columns.push(c);
  };
  let format: DatasetFormat | null = null;
  for (const file of files.slice(0, MAX_FILES_READ)) {
    const want = limits.maxRows - rows.length;
    const compression = compressionOf(file);
    if (compression && compression !== '.gz') {
      return peekFailure('unreadable', `${file}: ${compression}-compressed files are not peeked (only .gz)`);
    }
    let r: FilePeek | PeekFailure;
    if (module === 'parquet') r = await peekParquetFile(file, want);
    else if (module === 'csv') r = await peekCsvFile(file, want, limits);
    else r = await peekJsonFile(file, want, limits);
    if ('ok' in r) return r;
    format = format ?? r.format;
    rows.push(...r.rows.slice(0, want));
    addColumns(r.columns);
    warnings.push(...r.warnings);
    if (rows.length >= limits.maxRows) break;
  }
  return done({ files, format: format ?? (module === 'json' ? 'jsonl' : module), rows, columns });
}
