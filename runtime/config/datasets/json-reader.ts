/**
 * JSON Lines and JSON document files, as `datasets`' json builder reads them: as JSON Lines (one object per line),
 * and when that fails at the first line, as one JSON document. The peek reads the first rows within byte limits and
 * never throws; the runtime reads every row, with the line each starts on, and throws DataError.
 */
import { DataError } from './data-error';
import { concatBytes, decodeUtf8, openSource, readWhole, stripBom, type ChunkSource } from './file-bytes';
import { arrayElementLines, documentRecords, isPlainObject, jsonErrorPosition } from './json-records';
import { errorText, formatBytes } from './message-text';
import { peekFailure, type FilePeek, type PeekFailure, type PeekLimits, type PeekWarning } from './peek-result';

/** The first `want` rows of a JSON Lines file, or of a JSON document (parsed only below `maxDocumentBytes`). */
export async function peekJsonFile(file: string, want: number, limits: PeekLimits): Promise<FilePeek | PeekFailure> {
  let src: ChunkSource;
  try {
    src = await openSource(file);
  } catch (e) {
    return peekFailure('unreadable', `${file}: ${errorText(e)}`);
  }
  const rows: Record<string, unknown>[] = [];
  const columns: string[] = [];
  // An object, so that TypeScript does not narrow it across the takeLine closure.
  const state: { mode: 'unknown' | 'lines' | 'document' } = { mode: 'unknown' };
  let pending: Uint8Array = new Uint8Array(0);
  let total = 0;
  let lineNo = 0;
  let eof = false;
  let lineError: PeekFailure | null = null;
  let firstLineProblem = '';
  const firstLineCap = Math.max(limits.maxBytes, limits.maxDocumentBytes);

  const takeLine = (line: string): 'continue' | 'stop' => {
    lineNo++;
    const text = (lineNo === 1 ? stripBom(line) : line).replace(/\r$/, '');
    if (text.trim() === '') return 'continue';
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch (e) {
      if (state.mode === 'unknown') {
        state.mode = 'document';
        firstLineProblem = `line ${lineNo} is not valid JSON: ${errorText(e)}`;
        return 'stop';
      }
      lineError = peekFailure('unreadable', `${file}: line ${lineNo} is not valid JSON: ${errorText(e)}`);
      return 'stop';
    }
    if (!isPlainObject(v)) {
      if (state.mode === 'unknown') {
        state.mode = 'document';
        firstLineProblem = `line ${lineNo} is ${Array.isArray(v) ? 'an array' : 'not'} a JSON object`;
        return 'stop';
      }
      lineError = peekFailure(
        'unreadable',
        `${file}: line ${lineNo} is not a JSON object (JSON Lines need one object per line)`,
      );
      return 'stop';
    }
    state.mode = 'lines';
    rows.push(v);
    for (const k of Object.keys(v)) if (!columns.includes(k)) columns.push(k);
    return rows.length >= want ? 'stop' : 'continue';
  };

  try {
    outer: while (true) {
      const chunk = await src.next();
      if (chunk === null) eof = true;
      else {
        total += chunk.length;
        pending = pending.length === 0 ? chunk : concatBytes([pending, chunk]);
      }
      if (state.mode === 'unknown' && startsWithBracket(pending)) {
        // A top-level array: never JSON Lines (whose lines are objects), so it is one document.
        state.mode = 'document';
        firstLineProblem = 'the file starts with [';
        break;
      }
      let start = 0;
      for (let nl = pending.indexOf(10, start); nl >= 0; nl = pending.indexOf(10, start)) {
        const r = takeLine(decodeUtf8(pending, start, nl));
        start = nl + 1;
        if (r === 'stop') break outer;
      }
      pending = pending.subarray(start);
      if (eof) {
        if (pending.length > 0) takeLine(decodeUtf8(pending));
        pending = new Uint8Array(0);
        break;
      }
      if (state.mode === 'lines' && total >= limits.maxBytes) break;
      if (state.mode === 'unknown' && total >= firstLineCap) break;
    }
  } catch (e) {
    return peekFailure('unreadable', `${file}: ${errorText(e)}`);
  } finally {
    await src.close();
  }
  if (lineError) return lineError;
  if (state.mode === 'lines') return { format: 'jsonl', rows, columns, warnings: [] };
  if (state.mode === 'unknown') {
    if (eof) return { format: 'jsonl', rows: [], columns: [], warnings: [] }; // empty file
    return peekFailure('unreadable', `${file}: the first line is longer than ${formatBytes(firstLineCap)}; not peeked`);
  }
  return peekJsonDocument(file, want, limits, firstLineProblem);
}

/** The whole file as one JSON document, as pandas.read_json reads it when JSON Lines parsing fails. */
async function peekJsonDocument(
  file: string,
  want: number,
  limits: PeekLimits,
  firstLineProblem: string,
): Promise<FilePeek | PeekFailure> {
  let buf: Uint8Array | null;
  try {
    buf = await readWhole(file, limits.maxDocumentBytes);
  } catch (e) {
    return peekFailure('unreadable', `${file}: ${errorText(e)}`);
  }
  if (buf === null) {
    return peekFailure(
      'unreadable',
      `${file}: not JSON Lines (${firstLineProblem}), so it must be one JSON document, and it is larger than the ` +
        `${formatBytes(limits.maxDocumentBytes)} peek limit for parsing a document whole; ` +
        `JSON Lines (one object per line) can be peeked at any size`,
    );
  }
  const text = stripBom(decodeUtf8(buf));
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    return peekFailure(
      'unreadable',
      `${file}: not JSON Lines (${firstLineProblem}) and not one JSON document either (${withPosition(e, text)})`,
    );
  }
  const read = documentRecords(doc);
  if ('error' in read) return peekFailure('unreadable', `${file}: ${read.error}`);
  const records = read.records;
  const warnings: PeekWarning[] = [];
  const keys = read.kind === 'columns' ? Object.keys(doc as object) : [];
  const only = keys.length === 1 ? (doc as Record<string, unknown>)[keys[0]] : undefined;
  if (Array.isArray(only) && only.length > 0 && only.every(isPlainObject)) {
    warnings.push({
      code: 'json-field',
      message:
        `${file} holds its records under "${keys[0]}": datasets reads this as a single column '${keys[0]}' ` +
        `(Trinity passes no field= option); write the records as a top-level array or JSON Lines`,
    });
  }
  const columns: string[] = [];
  for (const r of records) for (const k of Object.keys(r)) if (!columns.includes(k)) columns.push(k);
  return { format: 'json', rows: records.slice(0, want), columns, warnings };
}

/** A row of a whole file (`line`: where it starts, when lines apply), or a malformed line skipped. */
export type JsonRow =
  | { row: Record<string, unknown>; line?: number }
  /** `record`: the rows of the file before it. */
  | { skip: { line: number; record: number; reason: string } };

/**
 * Every row of a JSON Lines file, or (when the first line is not a JSON object) of one JSON document. A malformed
 * line throws a DataError naming it, or with `onInvalid: 'skip'` is returned as a skip.
 */
export function readJsonRows(file: string, text: string, onInvalid: 'error' | 'skip', asLines = false): JsonRow[] {
  if (!asLines && /^\s*\[/.test(text)) return jsonDocumentRows(file, text);
  const lines = text.split('\n');
  const out: JsonRow[] = [];
  let first = !asLines;
  for (let i = 0; i < lines.length; i++) {
    const t = lines[i].replace(/\r$/, '');
    if (t.trim() === '') continue;
    let v: unknown;
    let problem: string | null = null;
    try {
      v = JSON.parse(t);
      if (!isPlainObject(v))
        problem = `is ${Array.isArray(v) ? 'an array' : 'not a JSON object'} (JSON Lines need one object per line)`;
    } catch (e) {
      problem = `is not valid JSON: ${(e as Error).message}`;
    }
    if (problem !== null && first) {
      try {
        return jsonDocumentRows(file, text, `line ${i + 1} ${problem}`);
      } catch (e) {
        // Not a document either: in skip mode, a JSON Lines file whose first line is broken.
        if (onInvalid === 'skip' && lines.length > 1) return readJsonRows(file, text, onInvalid, true);
        throw e;
      }
    }
    first = false;
    if (problem !== null) {
      const message = `${file}:${i + 1}: line ${problem}`;
      if (onInvalid === 'error') throw new DataError(message, file, i + 1);
      out.push({ skip: { line: i + 1, record: out.filter((x) => 'row' in x).length, reason: message } });
      continue;
    }
    out.push({ row: v as Record<string, unknown>, line: i + 1 });
  }
  return out;
}

function jsonDocumentRows(file: string, text: string, notLines?: string): JsonRow[] {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    const line = jsonErrorPosition(e, text)?.line;
    throw new DataError(
      `${file}${line !== undefined ? `:${line}` : ''}: ${notLines ? `not JSON Lines (${notLines}) and ` : ''}not a JSON document either: ${(e as Error).message}`,
      file,
      line,
    );
  }
  const read = documentRecords(doc);
  if ('error' in read) throw new DataError(`${file}: ${read.error}`, file);
  if (read.kind === 'columns') return read.records.map((row) => ({ row }));
  const lines = arrayElementLines(text);
  return read.records.map((row, i) => ({ row, line: lines[i] }));
}

/** JSON.parse's message, with "at position N" turned into a line:column. */
function withPosition(e: unknown, text: string): string {
  const at = jsonErrorPosition(e, text);
  return at ? `${errorText(e)} (line ${at.line}, column ${at.column})` : errorText(e);
}

/** Whether the first non-blank character (after a BOM) is `[`; false while only blanks have been seen. */
function startsWithBracket(bytes: Uint8Array): boolean {
  let i = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  while (i < bytes.length && (bytes[i] === 0x20 || bytes[i] === 0x09 || bytes[i] === 0x0a || bytes[i] === 0x0d)) i++;
  return i < bytes.length && bytes[i] === 0x5b;
}
