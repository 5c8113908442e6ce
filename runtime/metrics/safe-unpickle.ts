/**
 * A pickle reader that runs no code: the opcodes of protocols 2–5 that plain data, dataclass instances and
 * `__reduce__` results are written with (Python's Lib/pickletools.py documents each), and nothing else. A GLOBAL is
 * looked up in the caller's table (module + name -> what REDUCE / NEWOBJ of it makes); any other name is refused,
 * as is every opcode not listed here (INST/OBJ, EXT*, the protocol 0 text opcodes, out-of-band buffers).
 *
 * Values: None -> null, bool, int -> number (bigint beyond 2^53), float -> number, str -> string,
 * bytes/bytearray -> Uint8Array, list -> array, tuple -> PyTuple, dict -> Map, set/frozenset -> Set, an object built
 * with NEWOBJ -> PyInstance (its class name and the state BUILD gave it).
 */

export class UnpickleError extends Error {}

export class PyTuple {
  constructor(readonly items: readonly unknown[]) {}
}

export class PyInstance {
  state: unknown = undefined;
  constructor(
    readonly className: string,
    readonly args: readonly unknown[],
  ) {}
}

/** What an allowed GLOBAL stands for: a class (NEWOBJ makes a PyInstance; REDUCE calls `call`) or a function. */
export interface AllowedGlobal {
  /** REDUCE with these arguments; absent: REDUCE is refused (a class only NEWOBJ may build). */
  call?: (args: readonly unknown[]) => unknown;
  /** NEWOBJ / NEWOBJ_EX makes an instance of it. */
  isClass?: boolean;
}

export interface UnpickleOptions {
  /** `module name` -> what it may be; anything else is refused. */
  globals: ReadonlyMap<string, AllowedGlobal>;
  /** BINPERSID's handler (torch.save's storages); absent: refused. */
  persistentLoad?: (pid: unknown) => unknown;
}

const MARK = Symbol('mark');

class GlobalRef {
  constructor(
    readonly name: string,
    readonly def: AllowedGlobal,
  ) {}
}

/** Reads one pickle from `data` at `offset`; returns its value and the offset after its STOP. */
export function unpickle(data: Uint8Array, opts: UnpickleOptions, offset = 0): { value: unknown; end: number } {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const stack: unknown[] = [];
  const memo = new Map<number, unknown>();
  const marks: number[] = [];
  let p = offset;
  const need = (n: number): number => {
    if (n < 0 || p + n > data.byteLength) throw new UnpickleError(`pickle ends early at byte ${p} (wanted ${n} more)`);
    const at = p;
    p += n;
    return at;
  };
  const u8 = () => data[need(1)];
  const u16 = () => view.getUint16(need(2), true);
  const u32 = () => view.getUint32(need(4), true);
  const i32 = () => view.getInt32(need(4), true);
  const u64 = () => {
    const v = view.getBigUint64(need(8), true);
    if (v > BigInt(data.byteLength)) throw new UnpickleError(`length ${v} at byte ${p - 8} is longer than the data`);
    return Number(v);
  };
  const bytes = (n: number) => data.slice(need(n), p);
  const text = (n: number) => new TextDecoder('utf-8', { fatal: true }).decode(data.subarray(need(n), p));
  const pop = () => {
    if (stack.length === 0 || stack[stack.length - 1] === MARK)
      throw new UnpickleError(`stack underflow at byte ${p - 1}`);
    return stack.pop();
  };
  const popMark = (): unknown[] => {
    const m = marks.pop();
    if (m === undefined) throw new UnpickleError(`no MARK before byte ${p - 1}`);
    const items = stack.splice(m);
    items.shift();
    return items;
  };
  const top = () => {
    if (stack.length === 0) throw new UnpickleError(`stack underflow at byte ${p - 1}`);
    return stack[stack.length - 1];
  };
  const long = (n: number): number | bigint => {
    if (n === 0) return 0;
    const b = data.subarray(need(n), p);
    let v = 0n;
    for (let i = n - 1; i >= 0; i--) v = (v << 8n) | BigInt(b[i]);
    if (b[n - 1] & 0x80) v -= 1n << BigInt(8 * n);
    return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
  };
  const setItems = (target: unknown, kv: unknown[]) => {
    if (!(target instanceof Map)) throw new UnpickleError(`SETITEM(S) on a non-dict at byte ${p - 1}`);
    for (let i = 0; i + 1 < kv.length; i += 2) target.set(kv[i], kv[i + 1]);
  };
  const appendItems = (target: unknown, items: unknown[]) => {
    if (!Array.isArray(target)) throw new UnpickleError(`APPEND(S) on a non-list at byte ${p - 1}`);
    target.push(...items);
  };
  const lookup = (module: string, name: string) => {
    const key = `${module} ${name}`;
    const def = opts.globals.get(key);
    if (!def)
      throw new UnpickleError(`refused global ${module}.${name}: only the classes an experience holds are read`);
    return new GlobalRef(key, def);
  };
  const newObj = (cls: unknown, args: unknown) => {
    if (!(cls instanceof GlobalRef) || !cls.def.isClass)
      throw new UnpickleError(`NEWOBJ of a non-class at byte ${p - 1}`);
    return new PyInstance(cls.name, args instanceof PyTuple ? args.items : []);
  };
  const line = () => {
    const end = data.indexOf(0x0a, p);
    if (end < 0) throw new UnpickleError(`unterminated line at byte ${p}`);
    const s = new TextDecoder().decode(data.subarray(p, end));
    p = end + 1;
    return s;
  };

  for (;;) {
    const at = p;
    const op = u8();
    switch (op) {
      case 0x80: // PROTO
        if (u8() > 5) throw new UnpickleError(`pickle protocol above 5 at byte ${at}`);
        break;
      case 0x95: // FRAME: a length prefix only
        need(8);
        break;
      case 0x2e: // STOP
        if (stack.length !== 1) throw new UnpickleError(`STOP with ${stack.length} values on the stack at byte ${at}`);
        return { value: stack[0], end: p };
      case 0x28: // MARK
        marks.push(stack.length);
        stack.push(MARK);
        break;
      case 0x30: // POP
        if (top() === MARK) popMark();
        else pop();
        break;
      case 0x31: // POP_MARK
        popMark();
        break;
      case 0x32: // DUP
        stack.push(top());
        break;
      case 0x4e: // NONE
        stack.push(null);
        break;
      case 0x88: // NEWTRUE
        stack.push(true);
        break;
      case 0x89: // NEWFALSE
        stack.push(false);
        break;
      case 0x4a: // BININT
        stack.push(i32());
        break;
      case 0x4b: // BININT1
        stack.push(u8());
        break;
      case 0x4d: // BININT2
        stack.push(u16());
        break;
      case 0x8a: // LONG1
        stack.push(long(u8()));
        break;
      case 0x8b: {
        // LONG4
        const n = i32();
        if (n < 0) throw new UnpickleError(`negative LONG4 length at byte ${at}`);
        stack.push(long(n));
        break;
      }
      case 0x47: // BINFLOAT (big-endian)
        stack.push(view.getFloat64(need(8), false));
        break;
      case 0x8c: // SHORT_BINUNICODE
        stack.push(text(u8()));
        break;
      case 0x58: // BINUNICODE
        stack.push(text(u32()));
        break;
      case 0x8d: // BINUNICODE8
        stack.push(text(u64()));
        break;
      case 0x43: // SHORT_BINBYTES
        stack.push(bytes(u8()));
        break;
      case 0x42: // BINBYTES
        stack.push(bytes(u32()));
        break;
      case 0x8e: // BINBYTES8
      case 0x96: // BYTEARRAY8
        stack.push(bytes(u64()));
        break;
      case 0x7d: // EMPTY_DICT
        stack.push(new Map());
        break;
      case 0x5d: // EMPTY_LIST
        stack.push([]);
        break;
      case 0x29: // EMPTY_TUPLE
        stack.push(new PyTuple([]));
        break;
      case 0x8f: // EMPTY_SET
        stack.push(new Set());
        break;
      case 0x85: // TUPLE1
        stack.push(new PyTuple([pop()]));
        break;
      case 0x86: {
        // TUPLE2
        const b = pop();
        stack.push(new PyTuple([pop(), b]));
        break;
      }
      case 0x87: {
        // TUPLE3
        const c = pop();
        const b = pop();
        stack.push(new PyTuple([pop(), b, c]));
        break;
      }
      case 0x74: // TUPLE
        stack.push(new PyTuple(popMark()));
        break;
      case 0x6c: // LIST
        stack.push(popMark());
        break;
      case 0x64: {
        // DICT
        const d = new Map();
        setItems(d, popMark());
        stack.push(d);
        break;
      }
      case 0x91: // FROZENSET
        stack.push(new Set(popMark()));
        break;
      case 0x90: {
        // ADDITEMS
        const items = popMark();
        const s = top();
        if (!(s instanceof Set)) throw new UnpickleError(`ADDITEMS on a non-set at byte ${at}`);
        for (const x of items) s.add(x);
        break;
      }
      case 0x61: {
        // APPEND
        const v = pop();
        appendItems(top(), [v]);
        break;
      }
      case 0x65: {
        // APPENDS
        const items = popMark();
        appendItems(top(), items);
        break;
      }
      case 0x73: {
        // SETITEM
        const v = pop();
        const k = pop();
        setItems(top(), [k, v]);
        break;
      }
      case 0x75: {
        // SETITEMS
        const kv = popMark();
        setItems(top(), kv);
        break;
      }
      case 0x94: // MEMOIZE
        memo.set(memo.size, top());
        break;
      case 0x71: // BINPUT
        memo.set(u8(), top());
        break;
      case 0x72: // LONG_BINPUT
        memo.set(u32(), top());
        break;
      case 0x68: // BINGET
      case 0x6a: {
        // LONG_BINGET
        const i = op === 0x68 ? u8() : u32();
        if (!memo.has(i)) throw new UnpickleError(`memo ${i} read before it was written at byte ${at}`);
        stack.push(memo.get(i));
        break;
      }
      case 0x63: {
        // GLOBAL
        const module = line();
        stack.push(lookup(module, line()));
        break;
      }
      case 0x93: {
        // STACK_GLOBAL
        const name = pop();
        const module = pop();
        if (typeof module !== 'string' || typeof name !== 'string')
          throw new UnpickleError(`STACK_GLOBAL without names at byte ${at}`);
        stack.push(lookup(module, name));
        break;
      }
      case 0x52: {
        // REDUCE
        const args = pop();
        const fn = pop();
        if (!(fn instanceof GlobalRef) || !fn.def.call || !(args instanceof PyTuple))
          throw new UnpickleError(`REDUCE of ${fn instanceof GlobalRef ? fn.name : 'a non-global'} at byte ${at}`);
        stack.push(fn.def.call(args.items));
        break;
      }
      case 0x81: {
        // NEWOBJ
        const args = pop();
        stack.push(newObj(pop(), args));
        break;
      }
      case 0x92: {
        // NEWOBJ_EX
        pop(); // kwargs
        const args = pop();
        stack.push(newObj(pop(), args));
        break;
      }
      case 0x62: {
        // BUILD
        const state = pop();
        const obj = top();
        if (obj instanceof PyInstance) obj.state = state;
        else if (obj instanceof Map && state instanceof Map) for (const [k, v] of state) obj.set(k, v);
        else throw new UnpickleError(`BUILD on a value that takes no state at byte ${at}`);
        break;
      }
      case 0x51: {
        // BINPERSID
        const pid = pop();
        if (!opts.persistentLoad) throw new UnpickleError(`persistent id at byte ${at}: not expected here`);
        stack.push(opts.persistentLoad(pid));
        break;
      }
      default:
        throw new UnpickleError(`opcode 0x${op.toString(16).padStart(2, '0')} at byte ${at} is not read`);
    }
  }
}

/** A dict's entries with string keys as a plain object (other keys dropped). */
export function dictToObject(v: unknown): Record<string, unknown> | undefined {
  if (!(v instanceof Map)) return undefined;
  const out: Record<string, unknown> = {};
  for (const [k, x] of v) if (typeof k === 'string') out[k] = x;
  return out;
}
