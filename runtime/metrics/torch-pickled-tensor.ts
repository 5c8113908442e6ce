/**
 * A torch tensor inside a plain `pickle.dumps` (what Trinity ≤ v0.5.0 stored per experience), read without torch:
 *
 * - `Tensor.__reduce_ex__` gives `torch._utils._rebuild_tensor_v2(storage, storage_offset, size, stride,
 *   requires_grad, backward_hooks[, metadata])` (torch/_tensor.py `_reduce_ex_internal`);
 * - its storage's `TypedStorage.__reduce__` gives `torch.storage._load_from_bytes(b)`, where `b` is
 *   `torch.save(storage, _use_new_zipfile_serialization=False)`: torch's legacy format (torch/serialization.py
 *   `_legacy_save`): pickles of the magic number, the protocol version and sys_info, then the storage pickled as a
 *   persistent id `('storage', torch.<T>Storage, key, location, numel[, view_metadata])`, then the list of storage
 *   keys, then per key an int64 element count and the raw little-endian elements.
 *
 * Only CPU storages of the dtypes below are read; a big-endian sys_info is refused.
 */
import { DTYPE_BYTES, tensorNumbers, type SafeDtype } from '../engine/weights/safetensors';
import { PyTuple, unpickle, UnpickleError, type AllowedGlobal } from './safe-unpickle';

/** A tensor's shape and values (row-major), as numbers. */
export interface PlainTensor {
  dtype: SafeDtype;
  shape: number[];
  values: number[];
}

/** torch.<T>Storage -> the element type (torch/storage.py `_dtype_to_storage_type_map`). */
const STORAGE_DTYPES: Record<string, SafeDtype> = {
  DoubleStorage: 'F64',
  FloatStorage: 'F32',
  HalfStorage: 'F16',
  BFloat16Storage: 'BF16',
  LongStorage: 'I64',
  IntStorage: 'I32',
  ShortStorage: 'I16',
  CharStorage: 'I8',
  ByteStorage: 'U8',
  BoolStorage: 'BOOL',
};

/** torch.save's legacy magic number and protocol version (torch/serialization.py MAGIC_NUMBER, PROTOCOL_VERSION). */
const MAGIC = 0x1950a86a20f9469cfc6cn;
const PROTOCOL_VERSION = 1001;

/** A storage read from its bytes: the elements, flat. */
export class TorchStorage {
  constructor(
    readonly dtype: SafeDtype,
    readonly values: number[],
  ) {}
}

// A storage type is only named inside the persistent id (never called): the handler reads the reference's name.
const storageGlobals = new Map<string, AllowedGlobal>(Object.keys(STORAGE_DTYPES).map((name) => [`torch ${name}`, {}]));
const storageTypeOf = (ref: unknown): SafeDtype | undefined => {
  const name = (ref as { name?: unknown })?.name;
  return typeof name === 'string' && name.startsWith('torch ') ? STORAGE_DTYPES[name.slice(6)] : undefined;
};

/** `torch.storage._load_from_bytes(b)` for a CPU storage saved in torch's legacy format. */
export function loadLegacyStorage(b: Uint8Array): TorchStorage {
  const plain = { globals: new Map<string, AllowedGlobal>() };
  let r = unpickle(b, plain);
  if (r.value !== MAGIC && r.value !== Number(MAGIC))
    throw new UnpickleError('a tensor storage is not in torch.save legacy format (no magic number)');
  r = unpickle(b, plain, r.end);
  if (r.value !== PROTOCOL_VERSION) throw new UnpickleError(`torch.save protocol ${String(r.value)}, not 1001`);
  r = unpickle(b, plain, r.end);
  const sys = r.value instanceof Map ? r.value : undefined;
  if (sys?.get('little_endian') === false) throw new UnpickleError('a big-endian torch storage is not read');
  let want: { dtype: SafeDtype; key: string; numel: number } | undefined;
  r = unpickle(
    b,
    {
      globals: storageGlobals,
      persistentLoad: (pid) => {
        const t = pid instanceof PyTuple ? pid.items : [];
        const dtype = storageTypeOf(t[1]);
        if (t[0] !== 'storage' || !dtype || typeof t[2] !== 'string' || typeof t[4] !== 'number')
          throw new UnpickleError('a tensor storage of a type not read (torch.save persistent id)');
        if (t[3] !== 'cpu') throw new UnpickleError(`a tensor storage on ${String(t[3])}, not cpu`);
        want = { dtype, key: t[2], numel: t[4] };
        return want;
      },
    },
    r.end,
  );
  if (!want || r.value !== want) throw new UnpickleError('torch.save bytes hold no storage');
  r = unpickle(b, plain, r.end);
  const keys = r.value;
  if (!Array.isArray(keys) || keys.length !== 1 || keys[0] !== want.key)
    throw new UnpickleError('torch.save storage keys do not name the one storage');
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  if (r.end + 8 > b.byteLength) throw new UnpickleError('torch.save storage ends before its element count');
  const numel = Number(view.getBigInt64(r.end, true));
  const size = DTYPE_BYTES[want.dtype];
  const start = r.end + 8;
  if (numel !== want.numel || start + numel * size > b.byteLength)
    throw new UnpickleError(`torch.save storage of ${numel} elements does not fit its ${b.byteLength} bytes`);
  const bytes = b.subarray(start, start + numel * size);
  return new TorchStorage(want.dtype, tensorNumbers({ dtype: want.dtype, shape: [numel], bytes }));
}

/** `torch._utils._rebuild_tensor_v2`: the storage's elements at offset + Σ index·stride, row-major. */
export function rebuildTensor(args: readonly unknown[]): PlainTensor {
  const [storage, offset, size, stride] = args;
  const ints = (v: unknown) =>
    v instanceof PyTuple && v.items.every((x) => Number.isInteger(x) && (x as number) >= 0)
      ? (v.items as number[])
      : undefined;
  const shape = ints(size);
  const strides = ints(stride);
  if (
    !(storage instanceof TorchStorage) ||
    !Number.isInteger(offset) ||
    !shape ||
    !strides ||
    shape.length !== strides.length
  )
    throw new UnpickleError('_rebuild_tensor_v2 with arguments not of a CPU tensor');
  const count = shape.reduce((a, n) => a * n, 1);
  const values = new Array<number>(count);
  const idx = new Array<number>(shape.length).fill(0);
  for (let i = 0; i < count; i++) {
    let at = offset as number;
    for (let d = 0; d < shape.length; d++) at += idx[d] * strides[d];
    if (at >= storage.values.length) throw new UnpickleError('a tensor reaches past its storage');
    values[i] = storage.values[at];
    for (let d = shape.length - 1; d >= 0; d--) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return { dtype: storage.dtype, shape, values };
}
