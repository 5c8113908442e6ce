/**
 * Experience <-> stored record, shared by the `file` (one JSON object per line) and `sql` storages.
 *
 * The record keeps the keys and shapes of Trinity's `Experience.to_dict()` (trinity/common/experience.py: `eid`,
 * `type`, `prompt_length`, `response_length`, `info`, `metrics`, `prompt_text`, `response_text`, `reward`,
 * `truncate_status`) and adds what to_dict leaves out, so a record reads back as the same Experience: `tokens`,
 * `logprobs`, `advantages`, `returns`, `teacher_logprobs`, `action_mask`, `chosen`, `rejected`, `model_version`,
 * `is_expert`, `truncated`, and for multi-turn episodes `messages` (Trinity's Experience field of that name) and
 * `turn_rewards` (ours: the reward of each model turn). A key a record lacks (older records have no `teacher_logprobs`) is an absent field. (Trinity's own JSONWriter output has no token ids, so it cannot be read back as experiences — Trinity
 * never reads it either: storage/file.py `FileStorage.read` raises NotImplementedError.)
 *
 * Numbers round-trip bit-exactly as doubles: JSON's shortest repr is exact for finite values, and the values JSON
 * cannot hold (NaN, ±Infinity, -0 — e.g. a logprob of -Infinity) are written as `{"$f64": "NaN" | "Infinity" |
 * "-Infinity" | "-0"}`. In SQL the float arrays (`FLOAT_ARRAYS`) go to BLOB columns as little-endian Float64
 * instead (see sql.ts); everything else is this JSON.
 */
import type { Experience, ExperienceId, ExperienceMessage } from '../experience';

/** The float arrays: the Experience field, and its record key and SQL BLOB column (Trinity's attribute name). */
export const FLOAT_ARRAYS = [
  { field: 'logprobs', key: 'logprobs' },
  { field: 'advantages', key: 'advantages' },
  { field: 'returns', key: 'returns' },
  { field: 'teacherLogprobs', key: 'teacher_logprobs' },
] as const;
export type FloatArrayField = (typeof FLOAT_ARRAYS)[number]['field'];
/** The float arrays of the first SQL layout, whose field and column names coincide. */
export const FLOAT_ARRAY_FIELDS = ['logprobs', 'advantages', 'returns'] as const;

/** The float arrays a row's BLOB columns hold (a column the row lacks or holds NULL in is absent). Throws RecordError. */
export function floatsFromRow(row: Readonly<Record<string, unknown>>): Partial<Record<FloatArrayField, number[]>> {
  const floats: Partial<Record<FloatArrayField, number[]>> = {};
  for (const { field, key } of FLOAT_ARRAYS)
    if (row[key] !== null && row[key] !== undefined) floats[field] = blobToFloats(row[key], key);
  return floats;
}

const F64_TAG = '$f64';
const SPECIALS: Record<string, number> = { NaN: NaN, Infinity: Infinity, '-Infinity': -Infinity, '-0': -0 };

/** Thrown by the decoders; the storage wraps it into a CorruptRecordError with the file and row. */
export class RecordError extends Error {}

function encodeNumber(x: number): unknown {
  if (Number.isFinite(x)) return Object.is(x, -0) ? { [F64_TAG]: '-0' } : x;
  return { [F64_TAG]: Number.isNaN(x) ? 'NaN' : x > 0 ? 'Infinity' : '-Infinity' };
}

/** A deep copy that JSON.stringify turns into text JSON.parse + decodeJsonValue turn back into an equal value. */
export function encodeJsonValue(v: unknown, path: string): unknown {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number') return encodeNumber(v);
  if (Array.isArray(v)) {
    return v.map((x, i) => {
      if (x === undefined) throw new RecordError(`${path}[${i}] is undefined (not storable)`);
      return encodeJsonValue(x, `${path}[${i}]`);
    });
  }
  if (typeof v === 'object') {
    const proto = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) {
      throw new RecordError(
        `${path} is a ${(v as object).constructor?.name ?? 'non-plain object'}; only plain JSON values can be stored`,
      );
    }
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      if (x === undefined) continue; // as JSON: an undefined property is absent
      out[k] = encodeJsonValue(x, `${path}.${k}`);
    }
    return out;
  }
  throw new RecordError(`${path} is a ${typeof v}; only plain JSON values can be stored`);
}

export function decodeJsonValue(v: unknown): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(decodeJsonValue);
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o);
  if (keys.length === 1 && keys[0] === F64_TAG && typeof o[F64_TAG] === 'string' && o[F64_TAG] in SPECIALS) {
    return SPECIALS[o[F64_TAG] as string];
  }
  const out: Record<string, unknown> = {};
  for (const k of keys) out[k] = decodeJsonValue(o[k]);
  return out;
}

/** Trinity's experience type, as its constructor infers it (written for readers of the file; ignored on read). */
function experienceType(e: Experience): string {
  if (e.actionMask !== undefined) return 'multi_turn';
  if (e.chosen !== undefined && e.rejected !== undefined) return 'dpo';
  return 'single_turn';
}

function checkIntArray(v: unknown, path: string): number[] {
  if (!Array.isArray(v)) throw new RecordError(`\`${path}\` is not an array`);
  for (let i = 0; i < v.length; i++) {
    if (typeof v[i] !== 'number' || !Number.isInteger(v[i]))
      throw new RecordError(`\`${path}[${i}]\` is not an integer`);
  }
  return v as number[];
}

function checkNumberArray(v: unknown, path: string): number[] {
  if (!Array.isArray(v)) throw new RecordError(`\`${path}\` is not an array`);
  for (let i = 0; i < v.length; i++)
    if (typeof v[i] !== 'number') throw new RecordError(`\`${path}[${i}]\` is not a number`);
  return v as number[];
}

function checkEid(v: unknown): ExperienceId {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new RecordError('`eid` is not an object');
  const e = v as Record<string, unknown>;
  for (const k of ['batch', 'task'] as const) {
    if (typeof e[k] !== 'number' && typeof e[k] !== 'string')
      throw new RecordError(`\`eid.${k}\` is not a number or string`);
  }
  for (const k of ['run', 'step'] as const)
    if (typeof e[k] !== 'number') throw new RecordError(`\`eid.${k}\` is not a number`);
  if (typeof e.suffix !== 'string') throw new RecordError('`eid.suffix` is not a string');
  return {
    batch: e.batch as number | string,
    task: e.task as number | string,
    run: e.run as number,
    step: e.step as number,
    suffix: e.suffix,
  };
}

/** Checks what every storage needs before anything is written, so a bad experience fails the whole batch up front. */
export function validateExperience(e: Experience, where: string): void {
  try {
    if (e === null || typeof e !== 'object') throw new RecordError('not an object');
    checkEid(e.eid);
    checkIntArray(e.tokens, 'tokens');
    if (!Number.isInteger(e.promptLength) || e.promptLength < 0)
      throw new RecordError('`promptLength` is not a non-negative integer');
    for (const k of ['actionMask', 'chosen', 'rejected'] as const) if (e[k] !== undefined) checkIntArray(e[k], k);
    for (const { field } of FLOAT_ARRAYS) if (e[field] !== undefined) checkNumberArray(e[field], field);
  } catch (err) {
    if (err instanceof RecordError) throw new RecordError(`${where}: ${err.message}`);
    throw err;
  }
}

/**
 * The record of one experience (Trinity's to_dict keys first, then ours), numbers already made JSON-safe.
 * `omitFloatArrays`: leave the FLOAT_ARRAYS out (SQL stores them as BLOBs).
 */
export function experienceToRecord(e: Experience, omitFloatArrays = false): Record<string, unknown> {
  const r: Record<string, unknown> = {
    eid: encodeJsonValue(
      { batch: e.eid.batch, task: e.eid.task, run: e.eid.run, step: e.eid.step, suffix: e.eid.suffix },
      'eid',
    ),
    type: experienceType(e),
    prompt_length: e.promptLength,
    response_length: e.tokens.length - e.promptLength,
  };
  if (e.info !== undefined) r.info = encodeJsonValue(e.info, 'info');
  if (e.metrics !== undefined) r.metrics = encodeJsonValue(e.metrics, 'metrics');
  if (e.promptText !== undefined) r.prompt_text = e.promptText;
  if (e.responseText !== undefined) r.response_text = e.responseText;
  if (e.reward !== undefined) r.reward = encodeNumber(e.reward);
  if (e.truncated === true) r.truncate_status = 'response_truncated';
  r.tokens = e.tokens;
  if (!omitFloatArrays) {
    for (const { field, key } of FLOAT_ARRAYS)
      if (e[field] !== undefined) r[key] = (e[field] as number[]).map(encodeNumber);
  }
  if (e.actionMask !== undefined) r.action_mask = e.actionMask;
  if (e.chosen !== undefined) r.chosen = e.chosen;
  if (e.rejected !== undefined) r.rejected = e.rejected;
  if (e.modelVersion !== undefined) r.model_version = encodeNumber(e.modelVersion);
  if (e.isExpert !== undefined) r.is_expert = e.isExpert;
  if (e.truncated !== undefined) r.truncated = e.truncated;
  if (e.messages !== undefined) r.messages = e.messages.map((m) => ({ role: m.role, content: m.content }));
  if (e.turnRewards !== undefined) r.turn_rewards = e.turnRewards.map(encodeNumber);
  return r;
}

/** The inverse of experienceToRecord; `floats` supplies the arrays SQL keeps outside the JSON. Throws RecordError. */
export function recordToExperience(raw: unknown, floats?: Partial<Record<FloatArrayField, number[]>>): Experience {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new RecordError('not a JSON object');
  const r = raw as Record<string, unknown>;
  if (r.tokens === undefined) {
    throw new RecordError(
      "no `tokens` (lines written by Trinity's own JSONWriter hold no token ids and cannot be read back as experiences)",
    );
  }
  const e: Experience = {
    eid: checkEid(r.eid),
    tokens: checkIntArray(r.tokens, 'tokens'),
    promptLength: 0,
  };
  if (typeof r.prompt_length !== 'number' || !Number.isInteger(r.prompt_length) || r.prompt_length < 0) {
    throw new RecordError('`prompt_length` is not a non-negative integer');
  }
  e.promptLength = r.prompt_length;
  for (const { field, key } of FLOAT_ARRAYS) {
    const fromBlob = floats?.[field];
    if (fromBlob !== undefined) e[field] = fromBlob;
    else if (r[key] !== undefined) e[field] = checkNumberArray(decodeJsonValue(r[key]), key);
  }
  if (r.action_mask !== undefined) e.actionMask = checkIntArray(r.action_mask, 'action_mask');
  if (r.chosen !== undefined) e.chosen = checkIntArray(r.chosen, 'chosen');
  if (r.rejected !== undefined) e.rejected = checkIntArray(r.rejected, 'rejected');
  if (r.reward !== undefined) {
    const v = decodeJsonValue(r.reward);
    if (typeof v !== 'number') throw new RecordError('`reward` is not a number');
    e.reward = v;
  }
  if (r.truncated !== undefined) {
    if (typeof r.truncated !== 'boolean') throw new RecordError('`truncated` is not a boolean');
    e.truncated = r.truncated;
  } else if (typeof r.truncate_status === 'string') {
    e.truncated = r.truncate_status === 'response_truncated';
  }
  if (r.model_version !== undefined) {
    const v = decodeJsonValue(r.model_version);
    if (typeof v !== 'number') throw new RecordError('`model_version` is not a number');
    e.modelVersion = v;
  }
  for (const [key, field] of [
    ['prompt_text', 'promptText'],
    ['response_text', 'responseText'],
  ] as const) {
    if (r[key] === undefined) continue;
    if (typeof r[key] !== 'string') throw new RecordError(`\`${key}\` is not a string`);
    e[field] = r[key] as string;
  }
  if (r.metrics !== undefined) {
    const m = decodeJsonValue(r.metrics);
    if (m === null || typeof m !== 'object' || Array.isArray(m)) throw new RecordError('`metrics` is not an object');
    for (const [k, v] of Object.entries(m))
      if (typeof v !== 'number') throw new RecordError(`\`metrics.${k}\` is not a number`);
    e.metrics = m as Record<string, number>;
  }
  if (r.info !== undefined) {
    const i = decodeJsonValue(r.info);
    if (i === null || typeof i !== 'object' || Array.isArray(i)) throw new RecordError('`info` is not an object');
    e.info = i as Record<string, unknown>;
  }
  if (r.is_expert !== undefined) {
    if (typeof r.is_expert !== 'boolean') throw new RecordError('`is_expert` is not a boolean');
    e.isExpert = r.is_expert;
  }
  if (r.messages !== undefined) e.messages = checkMessages(r.messages);
  if (r.turn_rewards !== undefined) e.turnRewards = checkNumberArray(decodeJsonValue(r.turn_rewards), 'turn_rewards');
  return e;
}

const ROLES = new Set(['system', 'user', 'assistant', 'tool']);

function checkMessages(v: unknown): ExperienceMessage[] {
  if (!Array.isArray(v)) throw new RecordError('`messages` is not a list');
  return v.map((m: unknown, i) => {
    const o = m as Record<string, unknown> | null;
    if (o === null || typeof o !== 'object' || !ROLES.has(o.role as string) || typeof o.content !== 'string')
      throw new RecordError(`\`messages[${i}]\` is not a {role, content} chat message`);
    return { role: o.role as ExperienceMessage['role'], content: o.content };
  });
}

/** Little-endian Float64: bit-exact for every double (including -0, ±Infinity). */
export function floatsToBlob(xs: number[]): Uint8Array {
  const b = new Uint8Array(xs.length * 8);
  const v = new DataView(b.buffer);
  for (let i = 0; i < xs.length; i++) v.setFloat64(i * 8, xs[i], true);
  return b;
}

export function blobToFloats(b: unknown, field: string): number[] {
  if (!(b instanceof Uint8Array)) throw new RecordError(`\`${field}\` is not a BLOB`);
  if (b.byteLength % 8 !== 0)
    throw new RecordError(`\`${field}\` BLOB has ${b.byteLength} bytes, not a multiple of 8 (Float64)`);
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const out = new Array<number>(b.byteLength / 8);
  for (let i = 0; i < out.length; i++) out[i] = v.getFloat64(i * 8, true);
  return out;
}

/** The model version Trinity's priority functions and SQL column read: `modelVersion`, else `info.model_version`, else 0. */
export function modelVersionOf(e: Experience): number {
  if (typeof e.modelVersion === 'number') return e.modelVersion;
  const v = e.info?.model_version;
  return typeof v === 'number' ? v : 0;
}
