/**
 * Trinity-RFT's `experience_bytes` (the SQLite experience table's blob, trinity/buffer/schema/sql_schema.py
 * `ExperienceModel.from_experience`: `experience.serialize()`), read without Python, in the two forms Trinity wrote:
 *
 * - v0.3.0 … v0.5.0: `pickle.dumps(experience)` — an `Experience` dataclass (and its `EID`) with torch tensors
 *   (trinity/common/experience.py `serialize` at 7d2323f, c04b993, 30ca213, 4b27dff, fdfdc7b);
 * - v0.5.2 and main: `b"TRXP"`, a version byte (1), two little-endian u64 lengths, a pickled metadata dict
 *   (`{"version", "num_items", "items": [{eid as a dict, reward, truncate_status, info, metrics, prompt_length,
 *   response_text, prompt_text, messages, …}]}`) and the tensors as safetensors named `"<i>:<field>"`
 *   (`serialize_many` / `deserialize_many` at eedef4b and 10796ed, from b838531 "Optimize serialize / deserialize
 *   of Experience (#514)").
 *
 * The pickles are read by safe-unpickle.ts: the only classes and functions allowed are those an experience holds.
 */
import { readSafetensors, tensorNumbers } from '../engine/weights/safetensors';
import { dictToObject, PyInstance, PyTuple, unpickle, UnpickleError, type AllowedGlobal } from './safe-unpickle';
import { loadLegacyStorage, rebuildTensor, type PlainTensor } from './torch-pickled-tensor';

/** The fields of a Trinity Experience the dashboard shows (trinity/common/experience.py). */
export interface TrinityExperience {
  eid: { batch: unknown; task: unknown; run: unknown; step: unknown };
  tokens?: number[];
  promptLength: number;
  reward?: number;
  actionMask?: number[];
  advantages?: number[];
  truncateStatus?: string;
  info: Record<string, unknown>;
  metrics: Record<string, unknown>;
  promptText?: string;
  responseText?: string;
  messages?: unknown[];
}

const EXPERIENCE = 'trinity.common.experience Experience';
const EID = 'trinity.common.experience EID';

const GLOBALS = new Map<string, AllowedGlobal>([
  [EXPERIENCE, { isClass: true }],
  [EID, { isClass: true }],
  ['trinity.common.experience CustomField', { isClass: true }],
  ['torch._utils _rebuild_tensor_v2', { call: rebuildTensor }],
  ['torch.storage _load_from_bytes', { call: (a) => loadLegacyStorage(bytesArg(a)) }],
  ['collections OrderedDict', { call: () => new Map() }],
  // CustomField.data_type: a torch.dtype pickles as the global of its name.
  ...['float32', 'float64', 'float16', 'bfloat16', 'int64', 'int32', 'int16', 'int8', 'uint8', 'bool'].map(
    (d): [string, AllowedGlobal] => [`torch ${d}`, {}],
  ),
]);

function bytesArg(args: readonly unknown[]): Uint8Array {
  if (!(args[0] instanceof Uint8Array)) throw new UnpickleError('_load_from_bytes without bytes');
  return args[0];
}

const MAGIC = [0x54, 0x52, 0x58, 0x50]; // "TRXP"
/** Past this, a blob is not read (Trinity's experiences are token ids and a few floats per token). */
export const MAX_EXPERIENCE_BYTES = 64 << 20;

/** The experiences one `experience_bytes` blob holds (one, as Trinity writes a row). Throws UnpickleError. */
export function decodeExperienceBytes(blob: Uint8Array): TrinityExperience[] {
  if (blob.byteLength > MAX_EXPERIENCE_BYTES)
    throw new UnpickleError(`an experience of ${blob.byteLength} bytes is past the ${MAX_EXPERIENCE_BYTES}-byte limit`);
  if (MAGIC.every((b, i) => blob[i] === b)) return decodeBatched(blob);
  const { value } = unpickle(blob, { globals: GLOBALS });
  const items = Array.isArray(value) ? value : [value];
  return items.map((v) => {
    if (!(v instanceof PyInstance) || v.className !== EXPERIENCE)
      throw new UnpickleError('the pickle holds no trinity.common.experience.Experience');
    const state = v.state instanceof PyTuple ? v.state.items[0] : v.state;
    const fields = dictToObject(state);
    if (!fields) throw new UnpickleError('an Experience without its fields');
    return experienceOf(fields, (name) => (isTensor(fields[name]) ? (fields[name] as PlainTensor).values : undefined));
  });
}

function decodeBatched(blob: Uint8Array): TrinityExperience[] {
  const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
  if (blob.byteLength < 21) throw new UnpickleError('a TRXP experience shorter than its header');
  const version = blob[4];
  if (version !== 1) throw new UnpickleError(`TRXP serialization version ${version}, not 1`);
  const metaLen = Number(view.getBigUint64(5, true));
  const tensorLen = Number(view.getBigUint64(13, true));
  if (21 + metaLen + tensorLen > blob.byteLength)
    throw new UnpickleError(`TRXP lengths (${metaLen} + ${tensorLen}) run past the ${blob.byteLength}-byte blob`);
  const meta = dictToObject(unpickle(blob.subarray(21, 21 + metaLen), { globals: GLOBALS }).value);
  const tensors = readSafetensors(blob.subarray(21 + metaLen, 21 + metaLen + tensorLen)).tensors;
  if (!meta || !Array.isArray(meta.items)) throw new UnpickleError('TRXP metadata without items');
  return meta.items.map((item, i) => {
    const fields = dictToObject(item);
    if (!fields) throw new UnpickleError(`TRXP item ${i} is not a dict`);
    return experienceOf(fields, (name) => {
      const t = tensors.get(`${i}:${name}`);
      return t ? tensorNumbers(t) : undefined;
    });
  });
}

const isTensor = (v: unknown): v is PlainTensor =>
  typeof v === 'object' && v !== null && Array.isArray((v as PlainTensor).values);
const num = (v: unknown): number | undefined =>
  typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : undefined;
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

function experienceOf(f: Record<string, unknown>, tensor: (name: string) => number[] | undefined): TrinityExperience {
  const eidRaw = f.eid instanceof PyInstance ? f.eid.state : f.eid;
  const eid = dictToObject(eidRaw instanceof PyTuple ? eidRaw.items[0] : eidRaw) ?? {};
  const out: TrinityExperience = {
    eid: { batch: plain(eid.batch), task: plain(eid.task), run: plain(eid.run), step: plain(eid.step) },
    promptLength: num(f.prompt_length) ?? 1,
    info: (plain(f.info) as Record<string, unknown> | undefined) ?? {},
    metrics: (plain(f.metrics) as Record<string, unknown> | undefined) ?? {},
  };
  const set = <K extends keyof TrinityExperience>(k: K, v: TrinityExperience[K] | undefined) => {
    if (v !== undefined) out[k] = v;
  };
  set('tokens', tensor('tokens'));
  set('actionMask', tensor('action_mask'));
  set('advantages', tensor('advantages'));
  set('reward', num(f.reward));
  set('truncateStatus', str(f.truncate_status));
  set('promptText', str(f.prompt_text));
  set('responseText', str(f.response_text));
  const messages = plain(f.messages);
  if (Array.isArray(messages)) out.messages = messages;
  return out;
}

/**
 * A Python value as JSON-like data: dicts with string keys, lists, tuples and sets as arrays, tensors as their
 * values; bytes and other objects dropped. Bounded, so shared references (a pickle's memo) cannot multiply it.
 */
export function plain(v: unknown, budget = { left: 1_000_000 }, depth = 0): unknown {
  if (--budget.left < 0 || depth > 64) return undefined;
  if (v === null || typeof v === 'string' || typeof v === 'boolean' || typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (isTensor(v)) return v.values.length === 1 ? v.values[0] : v.values;
  if (Array.isArray(v) || v instanceof PyTuple || v instanceof Set) {
    const items = Array.isArray(v) ? v : v instanceof PyTuple ? v.items : [...v];
    return items.map((x) => plain(x, budget, depth + 1));
  }
  if (v instanceof Map) {
    const o: Record<string, unknown> = {};
    for (const [k, x] of v)
      if (typeof k === 'string' || typeof k === 'number') o[String(k)] = plain(x, budget, depth + 1);
    return o;
  }
  return undefined;
}
