/** A parsed JSON document's records as `datasets`' json builder (pandas.read_json) takes them. */

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export type DocumentRecords =
  /** `array`: one record per element (scalars become `{text: x}`); `columns`: a dict of columns. */
  | { records: Record<string, unknown>[]; kind: 'array' | 'columns' }
  /** What is wrong with the document, for a message that starts with the file. */
  | { error: string };

export function documentRecords(doc: unknown): DocumentRecords {
  if (Array.isArray(doc)) {
    if (doc.every(isPlainObject)) return { records: doc as Record<string, unknown>[], kind: 'array' };
    if (doc.every((x) => x === null || typeof x !== 'object')) {
      return { records: doc.map((x) => ({ text: x })), kind: 'array' };
    }
    return { error: 'a top-level JSON array must hold objects (one per record)' };
  }
  if (isPlainObject(doc)) {
    const records = dictOfColumnsToRecords(doc);
    if (!records) {
      return { error: 'a top-level JSON object must map column names to equally long arrays (or use JSON Lines)' };
    }
    return { records, kind: 'columns' };
  }
  return { error: 'a JSON document must be an array of records or an object of columns' };
}

/** pandas.read_json on an object: `{col: [..]}` (scalars broadcast) or `{col: {index: value}}`. */
function dictOfColumnsToRecords(doc: Record<string, unknown>): Record<string, unknown>[] | null {
  const keys = Object.keys(doc);
  if (keys.length === 0) return [];
  const values = keys.map((k) => doc[k]);
  if (values.every(isPlainObject)) {
    const index: string[] = [];
    for (const v of values) for (const i of Object.keys(v as object)) if (!index.includes(i)) index.push(i);
    return index.map((i) => Object.fromEntries(keys.map((k) => [k, (doc[k] as Record<string, unknown>)[i] ?? null])));
  }
  const arrays = values.filter(Array.isArray) as unknown[][];
  if (arrays.length === 0 || values.some(isPlainObject)) return null;
  const n = arrays[0].length;
  if (arrays.some((a) => a.length !== n)) return null;
  const out: Record<string, unknown>[] = [];
  for (let i = 0; i < n; i++)
    out.push(Object.fromEntries(keys.map((k) => [k, Array.isArray(doc[k]) ? (doc[k] as unknown[])[i] : doc[k]])));
  return out;
}

/** The 1-based line on which each element of a top-level JSON array starts. */
export function arrayElementLines(text: string): number[] {
  const out: number[] = [];
  let line = 1;
  let depth = 0;
  let inString = false;
  let expectElement = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\n') line++;
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\r' || c === '\n') continue;
    if (depth === 1 && expectElement && c !== ']') {
      out.push(line);
      expectElement = false;
    }
    if (c === '"') inString = true;
    else if (c === '[' || c === '{') {
      depth++;
      if (depth === 1) expectElement = true;
    } else if (c === ']' || c === '}') depth--;
    else if (c === ',' && depth === 1) expectElement = true;
  }
  return out;
}

/** Where in `text` JSON.parse's "at position N" points (1-based line and column), or null when it says not. */
export function jsonErrorPosition(e: unknown, text: string): { line: number; column: number } | null {
  const m = /at position (\d+)/.exec(e instanceof Error ? e.message : String(e));
  if (!m) return null;
  const pos = Number(m[1]);
  const before = text.slice(0, pos);
  return { line: before.split('\n').length, column: pos - before.lastIndexOf('\n') };
}
