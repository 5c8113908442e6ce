/** Resolving a parsed value: config lookups, relative keys, OmegaConf's built-in resolvers and registered ones. */
import { isPyDict as isDict, PyFloat, pyStr, pyStrRepr as strRepr, pyTypeName } from '../python-repr';
import { dotted, isPrefix, pathKey, PY_INT, splitKey } from './keys';
import { errorMessage, ParseFail, Parser, parseValue } from './parse';
import type {
  Arg,
  ConfigPath,
  Interpolation,
  NodeInterpolation,
  Part,
  ResolveContext,
  ResolvedRef,
  ResolveError,
  ResolveResult,
  ResolverInterpolation,
} from './types';

function isContainer(v: unknown): boolean {
  return Array.isArray(v) || isDict(v);
}

function hasOwn(o: object, k: string): boolean {
  return Object.prototype.hasOwnProperty.call(o, k);
}

function setProp(o: Record<string, unknown>, k: string, v: unknown): void {
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
}

/** Longest chain of interpolations followed (`a: ${b}`, `b: ${c}`, ...) plus nesting, before giving up. */
const MAX_EVAL_DEPTH = 400;
/** Longest string an interpolation may produce (string interpolations can double in size at each reference level). */
const MAX_STRING_LENGTH = 1_000_000;
/** Total interpolations evaluated by one resolveValue call before giving up (a safety net; results are cached). */
const MAX_STEPS = 200_000;

type Code = ResolveError['code'];

interface InnerError {
  start: number;
  end: number;
  code: Code;
  message: string;
  target?: string;
  /** the nodes whose values were being resolved between the reporting `${...}` and the failure */
  via: ConfigPath[];
}

interface Frame {
  /** path of the node whose value is being resolved */
  path: ConfigPath;
  errors: InnerError[];
  /** collected only for the text given to resolveValue */
  refs: ResolvedRef[] | null;
}

/**
 * `loc`: the value is exactly the config node at that path (a node interpolation's target), so it can be walked
 * further through `lookup`. `cfg`: a config container that is not in the tree (`oc.create`), walkable as an object.
 * Neither: a plain value (a resolver's output, a string), which OmegaConf does not let you select into.
 */
type Outcome = { ok: true; value: unknown; loc?: ConfigPath; cfg?: boolean } | { ok: false };
type AtResult = { ok: true; value: unknown; loc?: ConfigPath; cfg?: boolean } | { ok: false; error: InnerError };

type Sel =
  | { k: 'ok'; value: unknown; loc?: ConfigPath; cfg?: boolean; at?: ConfigPath }
  | { k: 'notfound'; message: string; target: string }
  | { k: 'missing'; message: string; target: string }
  | { k: 'notcontainer'; message: string; target: string }
  | { k: 'badindex'; message: string; target: string }
  | { k: 'aboveroot'; message: string; target: string }
  | { k: 'failed'; error: InnerError; via: ConfigPath };

const FAIL: Outcome = { ok: false };

const BUILTINS = new Set([
  'oc.env',
  'oc.select',
  'oc.decode',
  'oc.create',
  'oc.deprecated',
  'oc.dict.keys',
  'oc.dict.values',
]);

function ok(value: unknown): Outcome {
  return { ok: true, value };
}

class Evaluator {
  private depth = 0;
  private steps = 0;
  private readonly cache = new Map<string, AtResult>();
  private readonly stackKeys: string[] = [];
  private readonly stackPaths: ConfigPath[] = [];
  /** lists / dicts built from resolver arguments (they may hold PyFloat and are copied by unwrap) */
  private readonly created = new WeakSet<object>();

  constructor(private readonly ctx: ResolveContext) {}

  resolveTop(parsed: { whole: boolean; parts: Part[] }, frame: Frame): Outcome {
    this.stackKeys.push(pathKey(frame.path));
    this.stackPaths.push(frame.path);
    try {
      return this.evalParts(parsed, frame);
    } finally {
      this.stackKeys.pop();
      this.stackPaths.pop();
    }
  }

  unwrap(v: unknown): unknown {
    if (v instanceof PyFloat) return v.value;
    if (typeof v === 'object' && v !== null && this.created.has(v)) {
      if (Array.isArray(v)) return v.map((x) => this.unwrap(x));
      const o: Record<string, unknown> = {};
      for (const k of Object.keys(v)) setProp(o, k, this.unwrap((v as Record<string, unknown>)[k]));
      return o;
    }
    return v;
  }

  // ---- evaluation ----

  private evalParts(pv: { whole: boolean; parts: Part[] }, frame: Frame): Outcome {
    if (pv.whole && pv.parts.length === 1 && pv.parts[0].type !== 'text') return this.evalInterp(pv.parts[0], frame);
    return this.concat(pv.parts, frame);
  }

  private concat(parts: Part[], frame: Frame): Outcome {
    let out = '';
    let failed = false;
    for (const p of parts) {
      if (p.type === 'text') out += p.value;
      else {
        const r = this.evalInterp(p, frame);
        if (!r.ok) failed = true;
        else if (!failed) out += pyStr(r.value);
      }
      if (!failed && out.length > MAX_STRING_LENGTH) {
        // e.g. `a: ${b}${b}`, `b: ${c}${c}`, ...: the result doubles at each level
        return this.err(
          frame,
          p,
          'resolver-error',
          `The resolved string is longer than ${MAX_STRING_LENGTH} characters`,
        );
      }
    }
    return failed ? FAIL : ok(out);
  }

  private err(frame: Frame, at: { start: number; end: number }, code: Code, message: string, target?: string): Outcome {
    frame.errors.push({ start: at.start, end: at.end, code, message, target, via: [] });
    return FAIL;
  }

  /** report, at `at`, a failure that happened while resolving the node at `via` */
  private propagate(frame: Frame, at: { start: number; end: number }, e: InnerError, via: ConfigPath | null): Outcome {
    frame.errors.push({
      start: at.start,
      end: at.end,
      code: e.code,
      message: e.message,
      target: e.target,
      via: via && e.code !== 'cycle' ? [via, ...e.via] : e.via,
    });
    return FAIL;
  }

  private addRef(frame: Frame, ref: ResolvedRef): void {
    if (frame.refs) frame.refs.push({ ...ref, value: this.unwrap(ref.value) });
  }

  /** Records the config node a selection (`${key}`, `oc.select`, `oc.dict.*`) found. */
  private addSelected(frame: Frame, node: Interpolation, sel: Extract<Sel, { k: 'ok' }>, key: string): void {
    this.addRef(frame, {
      start: node.start,
      end: node.end,
      kind: 'node',
      target: sel.at ?? sel.loc ?? key,
      value: sel.value,
    });
  }

  private evalInterp(node: Interpolation, frame: Frame): Outcome {
    if (this.depth >= MAX_EVAL_DEPTH) {
      return this.err(
        frame,
        node,
        'cycle',
        `Interpolation nesting / reference chain deeper than ${MAX_EVAL_DEPTH} levels`,
      );
    }
    if (++this.steps > MAX_STEPS) {
      return this.err(frame, node, 'resolver-error', `Resolution abandoned after ${MAX_STEPS} interpolation steps`);
    }
    this.depth++;
    try {
      return node.type === 'node' ? this.evalNode(node, frame) : this.evalResolver(node, frame);
    } finally {
      this.depth--;
    }
  }

  private evalArg(arg: Arg, frame: Frame): Outcome {
    switch (arg.type) {
      case 'node':
      case 'resolver':
        return this.evalInterp(arg, frame);
      case 'literal':
        return ok(arg.float && typeof arg.value === 'number' ? new PyFloat(arg.value) : arg.value);
      case 'string':
        return this.concat(arg.parts, frame);
      case 'list': {
        const out: unknown[] = [];
        let failed = false;
        for (const item of arg.items) {
          const r = this.evalArg(item, frame);
          if (!r.ok) failed = true;
          else out.push(r.value);
        }
        if (failed) return FAIL;
        this.created.add(out);
        return ok(out);
      }
      case 'dict': {
        const out: Record<string, unknown> = {};
        let failed = false;
        for (const { key, value } of arg.entries) {
          const r = this.evalArg(value, frame);
          if (!r.ok) {
            failed = true;
            continue;
          }
          const k =
            typeof key.value === 'string'
              ? key.value
              : pyStr(key.float && typeof key.value === 'number' ? new PyFloat(key.value) : key.value);
          setProp(out, k, r.value);
        }
        if (failed) return FAIL;
        this.created.add(out);
        return ok(out);
      }
    }
  }

  /** evaluate a nested `${...}` used as (part of) a key or resolver name: it must give a string */
  private evalKeyPart(k: string | Interpolation, frame: Frame, what: string): string | null {
    if (typeof k === 'string') return k;
    const r = this.evalInterp(k, frame);
    if (!r.ok) return null;
    if (typeof r.value !== 'string') {
      this.err(
        frame,
        k,
        'type',
        `A nested interpolation used as ${what} must resolve to a string, but it resolved to \`${pyStr(r.value)}\` of type ${pyTypeName(r.value)}`,
      );
      return null;
    }
    return r.value;
  }

  private evalNode(node: NodeInterpolation, frame: Frame): Outcome {
    let key = '.'.repeat(node.ref.up);
    let failed = false;
    for (let i = 0; i < node.ref.keys.length; i++) {
      const s = this.evalKeyPart(node.ref.keys[i], frame, 'a config key');
      if (s === null) {
        failed = true;
        continue;
      }
      key += node.ref.spans[i].bracket ? `[${s}]` : i === 0 ? s : `.${s}`;
    }
    if (failed) return FAIL;
    const sel = this.select(key, frame.path);
    switch (sel.k) {
      case 'ok': {
        const container = frame.path.slice(0, -1);
        if (sel.loc && isPrefix(sel.loc, container)) {
          return this.err(
            frame,
            node,
            'cycle',
            `Interpolation to parent node detected: '${key}' refers to '${dotted(sel.loc)}', which contains '${dotted(frame.path)}'`,
            dotted(sel.loc),
          );
        }
        this.addSelected(frame, node, sel, key);
        return { ok: true, value: sel.value, loc: sel.loc, cfg: sel.cfg };
      }
      case 'failed':
        return this.propagate(frame, node, sel.error, sel.via);
      case 'notfound':
      case 'missing':
      case 'aboveroot':
        return this.err(frame, node, 'missing-key', sel.message, sel.target);
      case 'notcontainer':
      case 'badindex':
        return this.err(frame, node, 'type', sel.message, sel.target);
    }
  }

  private evalResolver(node: ResolverInterpolation, frame: Frame): Outcome {
    const names: string[] = [];
    let failed = false;
    for (const part of node.nameParts) {
      const s = this.evalKeyPart(part, frame, 'a resolver name');
      if (s === null) failed = true;
      else names.push(s);
    }
    const args: unknown[] = [];
    for (const a of node.args) {
      const r = this.evalArg(a, frame);
      if (!r.ok) failed = true;
      else args.push(r.value);
    }
    const name = names.join('.');
    const custom = this.ctx.resolvers && hasOwn(this.ctx.resolvers, name) ? this.ctx.resolvers[name] : undefined;
    if (failed) {
      // an unknown name is worth reporting even when an argument failed too
      if (names.length === node.nameParts.length && typeof custom !== 'function' && !BUILTINS.has(name)) {
        this.err(frame, node, 'unknown-resolver', `Unsupported interpolation type ${name}`, name);
      }
      return FAIL;
    }
    if (typeof custom === 'function') {
      try {
        return ok(custom(args.map((a) => this.unwrap(a))));
      } catch (e) {
        return this.err(frame, node, 'resolver-error', `Resolver '${name}' failed: ${errorMessage(e)}`, name);
      }
    }
    if (!BUILTINS.has(name))
      return this.err(frame, node, 'unknown-resolver', `Unsupported interpolation type ${name}`, name);
    switch (name) {
      case 'oc.env':
        return this.ocEnv(node, args, frame);
      case 'oc.select':
        return this.ocSelect(node, args, frame);
      case 'oc.decode':
        return this.ocDecode(node, args, frame);
      case 'oc.create':
        return this.ocCreate(node, args, frame);
      case 'oc.deprecated':
        return this.ocDeprecated(node, args, frame);
      default:
        return this.ocDict(node, name, args, frame);
    }
  }

  private arity(
    node: ResolverInterpolation,
    frame: Frame,
    args: unknown[],
    min: number,
    max: number,
    usage: string,
  ): boolean {
    if (args.length >= min && args.length <= max) return true;
    const want = min === max ? `${min}` : `${min} to ${max}`;
    this.err(
      frame,
      node,
      'resolver-error',
      `${node.name} takes ${want} argument${max === 1 ? '' : 's'} (${usage}) but ${args.length} ${args.length === 1 ? 'was' : 'were'} given`,
      node.name,
    );
    return false;
  }

  private ocEnv(node: ResolverInterpolation, args: unknown[], frame: Frame): Outcome {
    if (args.length === 0) {
      return this.err(
        frame,
        node,
        'resolver-error',
        'oc.env needs the name of an environment variable: ${oc.env:NAME} or ${oc.env:NAME,default}',
        'oc.env',
      );
    }
    if (!this.arity(node, frame, args, 1, 2, 'name, default')) return FAIL;
    const key = args[0];
    if (typeof key !== 'string') {
      return this.err(
        frame,
        node,
        'resolver-error',
        `oc.env: the variable name must be a string, not ${pyTypeName(key)} \`${pyStr(key)}\``,
        'oc.env',
      );
    }
    const env = this.ctx.env;
    const v = hasOwn(env, key) ? env[key] : undefined;
    if (typeof v === 'string') {
      this.addRef(frame, { start: node.start, end: node.end, kind: 'env', target: key, value: v });
      return ok(v);
    }
    if (args.length === 2) {
      // the default is converted with str() unless it is None
      const d = args[1] === null ? null : pyStr(args[1]);
      this.addRef(frame, { start: node.start, end: node.end, kind: 'env', target: key, value: d, defaulted: true });
      return ok(d);
    }
    return this.err(frame, node, 'missing-env', `Environment variable '${key}' not found`, key);
  }

  private ocSelect(node: ResolverInterpolation, args: unknown[], frame: Frame): Outcome {
    if (!this.arity(node, frame, args, 1, 2, 'key, default')) return FAIL;
    const key = args[0];
    if (typeof key !== 'string')
      return this.err(
        frame,
        node,
        'resolver-error',
        `oc.select: the key must be a string, not ${pyTypeName(key)}`,
        'oc.select',
      );
    const sel = this.select(key, frame.path);
    switch (sel.k) {
      case 'ok':
        this.addSelected(frame, node, sel, key);
        return { ok: true, value: sel.value, loc: sel.loc, cfg: sel.cfg };
      case 'notfound':
      case 'missing':
      case 'notcontainer':
        return ok(args.length === 2 ? args[1] : null);
      case 'failed':
        return this.propagate(frame, node, sel.error, sel.via);
      case 'aboveroot':
        return this.err(frame, node, 'missing-key', sel.message, sel.target);
      case 'badindex':
        return this.err(frame, node, 'type', sel.message, sel.target);
    }
  }

  private ocDeprecated(node: ResolverInterpolation, args: unknown[], frame: Frame): Outcome {
    if (!this.arity(node, frame, args, 1, 2, 'key, message')) return FAIL;
    const key = args[0];
    if (typeof key !== 'string') {
      return this.err(
        frame,
        node,
        'resolver-error',
        `oc.deprecated: interpolation key type is not a string (${pyTypeName(key)})`,
        'oc.deprecated',
      );
    }
    if (args.length === 2 && typeof args[1] !== 'string') {
      return this.err(
        frame,
        node,
        'resolver-error',
        `oc.deprecated: interpolation message type is not a string (${pyTypeName(args[1])})`,
        'oc.deprecated',
      );
    }
    const sel = this.select(key, frame.path);
    switch (sel.k) {
      case 'ok':
        this.addSelected(frame, node, sel, key);
        return { ok: true, value: sel.value, loc: sel.loc, cfg: sel.cfg };
      case 'failed':
        return this.propagate(frame, node, sel.error, sel.via);
      case 'badindex':
        return this.err(frame, node, 'type', sel.message, sel.target);
      default:
        return this.err(
          frame,
          node,
          'missing-key',
          `In oc.deprecated resolver at '${dotted(frame.path)}': Key not found: '${key}'`,
          sel.target,
        );
    }
  }

  private ocDecode(node: ResolverInterpolation, args: unknown[], frame: Frame): Outcome {
    if (!this.arity(node, frame, args, 1, 1, 'expr')) return FAIL;
    const x = args[0];
    if (x === null) return ok(null);
    if (typeof x !== 'string') {
      return this.err(
        frame,
        node,
        'resolver-error',
        `\`oc.decode\` can only take strings or None as input, but \`${pyStr(x)}\` is of type ${pyTypeName(x)}`,
        'oc.decode',
      );
    }
    let el: Arg;
    try {
      el = new Parser(x).parseSingle();
    } catch (e) {
      if (!(e instanceof ParseFail)) throw e;
      return this.err(
        frame,
        node,
        'resolver-error',
        `oc.decode cannot parse ${strRepr(x)}: ${e.message} (at offset ${e.offset})`,
        'oc.decode',
      );
    }
    if (el.type === 'literal' && el.raw !== '' && el.raw.trim() === '') {
      // OmegaConf fails here too (an assertion in its visitor: a lone whitespace token)
      return this.err(
        frame,
        node,
        'resolver-error',
        `oc.decode cannot decode whitespace-only input ${strRepr(x)}`,
        'oc.decode',
      );
    }
    // interpolations inside the decoded text resolve relative to the same node; their offsets are in `x`, so
    // failures are reported on the oc.decode interpolation
    const sub: Frame = { path: frame.path, errors: [], refs: null };
    const r = this.evalArg(el, sub);
    if (!r.ok) {
      const e = sub.errors[0];
      if (!e) return this.err(frame, node, 'resolver-error', `oc.decode failed on ${strRepr(x)}`, 'oc.decode');
      return this.propagate(frame, node, { ...e, message: `in oc.decode of ${strRepr(x)}: ${e.message}` }, null);
    }
    return ok(r.value);
  }

  private ocCreate(node: ResolverInterpolation, args: unknown[], frame: Frame): Outcome {
    if (!this.arity(node, frame, args, 1, 1, 'obj')) return FAIL;
    const x = args[0];
    if (isContainer(x)) return { ok: true, value: x, cfg: true };
    // OmegaConf would parse a string as YAML; that is not emulated: the string is returned unchanged
    if (x === null || typeof x === 'string') return ok(x);
    return this.err(
      frame,
      node,
      'resolver-error',
      `oc.create: cannot create a config from ${pyTypeName(x)} \`${pyStr(x)}\``,
      'oc.create',
    );
  }

  private ocDict(node: ResolverInterpolation, name: string, args: unknown[], frame: Frame): Outcome {
    if (!this.arity(node, frame, args, 1, 1, 'key')) return FAIL;
    const key = args[0];
    if (typeof key !== 'string') {
      return this.err(
        frame,
        node,
        'type',
        `\`${name}\` requires a string as input, but obtained \`${pyStr(key)}\` of type: ${pyTypeName(key)}`,
        name,
      );
    }
    const sel = this.select(key, frame.path);
    switch (sel.k) {
      case 'ok': {
        if (!isDict(sel.value)) {
          const t = Array.isArray(sel.value) ? 'ListConfig' : pyTypeName(sel.value);
          return this.err(
            frame,
            node,
            'type',
            `\`${name}\` cannot be applied to objects of type: ${t}`,
            sel.at ? dotted(sel.at) : key,
          );
        }
        this.addSelected(frame, node, sel, key);
        const d = sel.value;
        const out = name === 'oc.dict.keys' ? Object.keys(d) : Object.keys(d).map((k) => d[k]);
        return ok(out);
      }
      case 'missing':
        return this.err(frame, node, 'missing-key', `Missing mandatory value: ${sel.target}`, sel.target);
      case 'failed':
        return this.propagate(frame, node, sel.error, sel.via);
      case 'badindex':
        return this.err(frame, node, 'type', sel.message, sel.target);
      default:
        return this.err(frame, node, 'missing-key', `Key not found: '${key}'`, sel.target);
    }
  }

  // ---- selection ----

  private look(path: ConfigPath): { found: boolean; value?: unknown } {
    try {
      const r = this.ctx.lookup(path);
      return r && r.found ? { found: true, value: r.value } : { found: false };
    } catch {
      return { found: false };
    }
  }

  /**
   * OmegaConf's `_resolve_key_and_root` + `_select_impl`: select `key` (as a node interpolation would) from the node
   * at `nodePath`. Interpolated values met on the way are resolved (relative to their own node).
   */
  private select(key: string, nodePath: ConfigPath): Sel {
    const container = nodePath.slice(0, -1);
    let k = key;
    let root: ConfigPath = [];
    if (k.charCodeAt(0) === 46) {
      let d = 0;
      while (d < k.length && k.charCodeAt(d) === 46) d++;
      const up = d - 1;
      if (up > container.length) {
        return {
          k: 'aboveroot',
          message: `Relative interpolation '${key}' goes above the config root (from '${dotted(nodePath)}')`,
          target: key,
        };
      }
      root = container.slice(0, container.length - up);
      k = k.slice(d);
    }
    if (k === '') {
      const r = this.look(root);
      return { k: 'ok', value: r.found ? r.value : undefined, loc: root, at: root };
    }
    const toks = splitKey(k);
    const absTarget = (upto: number) => dotted([...root, ...toks.slice(0, upto)]);
    const rootLook = this.look(root);
    let curVal: unknown = rootLook.found ? rootLook.value : undefined;
    let curLoc: ConfigPath | undefined = root;
    let curCfg = false;
    for (let i = 0; i < toks.length; i++) {
      const tok = toks[i];
      const last = i === toks.length - 1;
      let childKey: string | number = tok;
      if (Array.isArray(curVal)) {
        if (!PY_INT.test(tok)) {
          return {
            k: 'badindex',
            message: `Index '${tok}' (str) is not an int (while selecting '${key}')`,
            target: absTarget(i + 1),
          };
        }
        const idx = Number(tok.trim().replace(/_/g, ''));
        if (!(idx >= 0 && idx < curVal.length)) {
          return {
            k: 'notfound',
            message: `Interpolation key '${key}' not found: index ${tok.trim()} is out of range for '${dotted(curLoc ?? [])}' (length ${curVal.length})`,
            target: absTarget(toks.length),
          };
        }
        childKey = idx;
      }
      let found: boolean;
      let val: unknown;
      let childLoc: ConfigPath | undefined;
      if (curLoc) {
        childLoc = [...curLoc, childKey];
        const r = this.look(childLoc);
        found = r.found;
        val = r.value;
      } else if (Array.isArray(curVal)) {
        found = true;
        val = curVal[childKey as number];
      } else if (isDict(curVal) && hasOwn(curVal, tok)) {
        found = true;
        val = curVal[tok];
      } else found = false;
      if (!found) {
        const where =
          i === 0 && root.length === 0
            ? 'the config root'
            : `'${curLoc ? dotted(curLoc) : toks.slice(0, i).join('.')}'`;
        return {
          k: 'notfound',
          message: `Interpolation key '${key}' not found (${where} has no key '${tok}')`,
          target: absTarget(toks.length),
        };
      }
      if (val === '???') {
        return {
          k: 'missing',
          message: `Interpolation key '${key}' points to a missing mandatory value ('???') at '${absTarget(i + 1)}'`,
          target: absTarget(i + 1),
        };
      }
      let walkLoc: ConfigPath | undefined = childLoc;
      let walkCfg: boolean = !childLoc && curCfg;
      if (childLoc && typeof val === 'string' && val.includes('${')) {
        const r = this.resolveAt(childLoc, val);
        if (!r.ok) return { k: 'failed', error: r.error, via: childLoc };
        val = r.value;
        walkLoc = r.loc;
        walkCfg = r.cfg === true;
      }
      if (last) return { k: 'ok', value: val, loc: walkLoc, cfg: walkCfg, at: childLoc };
      if (!isContainer(val) || (!walkLoc && !walkCfg)) {
        return {
          k: 'notcontainer',
          message: `Error trying to access ${k}: node \`${toks.slice(0, i + 1).join('.')}\` is not a container and thus cannot contain \`${toks[i + 1]}\``,
          target: absTarget(i + 1),
        };
      }
      curVal = val;
      curLoc = walkLoc;
      curCfg = walkCfg;
    }
    return { k: 'notfound', message: `Interpolation key '${key}' not found`, target: key };
  }

  /** resolve the interpolated raw value stored at `path` (relative to that node), with cycle detection and caching */
  private resolveAt(path: ConfigPath, raw: string): AtResult {
    const key = pathKey(path);
    const cached = this.cache.get(key);
    if (cached) return cached;
    const idx = this.stackKeys.indexOf(key);
    if (idx >= 0) {
      const chain = [...this.stackPaths.slice(idx), path].map(dotted).join(' -> ');
      return {
        ok: false,
        error: {
          start: 0,
          end: 0,
          code: 'cycle',
          message: `Recursive interpolation detected: ${chain}`,
          target: dotted(path),
          via: [],
        },
      };
    }
    if (this.depth >= MAX_EVAL_DEPTH) {
      return {
        ok: false,
        error: {
          start: 0,
          end: 0,
          code: 'cycle',
          message: `Interpolation nesting / reference chain deeper than ${MAX_EVAL_DEPTH} levels`,
          target: dotted(path),
          via: [],
        },
      };
    }
    const parsed = parseValue(raw);
    let result: AtResult;
    if (parsed.kind === 'plain') result = { ok: true, value: raw };
    else if (parsed.errors.length > 0) {
      const pe = parsed.errors[0];
      result = {
        ok: false,
        error: {
          start: 0,
          end: 0,
          code: 'parse',
          message: `Invalid interpolation syntax in the value of '${dotted(path)}': ${pe.message}`,
          target: dotted(path),
          via: [],
        },
      };
    } else {
      const frame: Frame = { path, errors: [], refs: null };
      this.stackKeys.push(key);
      this.stackPaths.push(path);
      this.depth++;
      let r: Outcome;
      try {
        r = this.evalParts(parsed, frame);
      } finally {
        this.stackKeys.pop();
        this.stackPaths.pop();
        this.depth--;
      }
      if (r.ok) result = { ok: true, value: r.value, loc: r.loc, cfg: r.cfg };
      else {
        const e = frame.errors[0] ?? {
          start: 0,
          end: 0,
          code: 'resolver-error' as const,
          message: `Could not resolve '${dotted(path)}'`,
          via: [],
        };
        result = { ok: false, error: e };
      }
    }
    // every outcome is cached, failures included (also the depth-limit ones: otherwise `a: ${b}${b}` chains that hit
    // the limit would be re-evaluated exponentially often)
    this.cache.set(key, result);
    return result;
  }
}

function finishError(e: InnerError): ResolveError {
  let message = e.message;
  const via = e.via.filter((p, i) => i === 0 || pathKey(p) !== pathKey(e.via[i - 1]));
  if (via.length > 0) message += ` (while resolving ${via.map(dotted).join(' -> ')})`;
  const out: ResolveError = { start: e.start, end: e.end, code: e.code, message };
  if (e.target !== undefined) out.target = e.target;
  return out;
}

/**
 * Resolve a string value the way OmegaConf does when the node at `ctx.path` is read. Never throws.
 *
 * - exactly one `${...}`: the referenced / returned value with its type (number, boolean, null, object, array);
 *   a referenced container is returned raw (its own interpolations unresolved, as OmegaConf returns the node);
 * - otherwise a string, each interpolation converted with Python's str() (True / False / None, 1e-05, ['a', 1]);
 * - no `${` at all: the text itself.
 */
export function resolveValue(text: string, ctx: ResolveContext): ResolveResult {
  const refs: ResolvedRef[] = [];
  try {
    if (typeof text !== 'string' || !text.includes('${')) return { ok: true, value: text, refs };
    const parsed = parseValue(text);
    if (parsed.kind === 'plain') return { ok: true, value: text, refs };
    if (parsed.errors.length > 0) {
      return {
        ok: false,
        errors: parsed.errors.map((e) => ({
          start: e.start,
          end: e.end,
          code: 'parse' as const,
          message: `Invalid interpolation: ${e.message} (at offset ${e.offset})`,
        })),
        refs,
      };
    }
    const ev = new Evaluator(ctx);
    const frame: Frame = { path: Array.isArray(ctx.path) ? ctx.path : [], errors: [], refs };
    const r = ev.resolveTop(parsed, frame);
    if (frame.errors.length > 0 || !r.ok) {
      const errors = frame.errors.map(finishError);
      if (errors.length === 0)
        errors.push({ start: 0, end: text.length, code: 'resolver-error', message: 'Could not resolve the value' });
      return { ok: false, errors, refs };
    }
    return { ok: true, value: ev.unwrap(r.value), refs };
  } catch (e) {
    return {
      ok: false,
      errors: [
        {
          start: 0,
          end: typeof text === 'string' ? text.length : 0,
          code: 'resolver-error',
          message: `Internal error while resolving: ${errorMessage(e)}`,
        },
      ],
      refs,
    };
  }
}
