import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  findInterpolations,
  isInterpolated,
  parseValue,
  resolveValue,
  type Interpolation,
  type NodeInterpolation,
  type ParsedValue,
  type Part,
  type ResolveContext,
  type ResolveResult,
  type ResolverInterpolation,
} from '../../../runtime/config/interpolation';

type Path = (string | number)[];

/** lookup over a plain object tree (arrays indexed by numbers) */
function lookupIn(root: unknown) {
  return (p: Path): ReturnType<ResolveContext['lookup']> => {
    let n: unknown = root;
    for (let i = 0; i < p.length; i++) {
      const k = p[i];
      if (Array.isArray(n) && typeof k === 'number' && k >= 0 && k < n.length) n = n[k];
      else if (n !== null && typeof n === 'object' && !Array.isArray(n) && Object.hasOwn(n, String(k)))
        n = (n as Record<string, unknown>)[String(k)];
      else return { found: false, existingPrefix: i };
    }
    return { found: true, value: n };
  };
}

const ROOT = {
  model: {
    path: '/models/qwen',
    lr: 0.00001,
    steps: 100,
    use_fp16: true,
    extra: null,
    tags: ['a', 'b'],
    opts: { k: 1 },
    small: 0.0001,
    tiny: 1e-7,
    f: 1.5,
    neg: -3,
  },
  name: 'exp1',
  trainer: { save_dir: '${..name}/ckpt', name: 'trainer1', deep: { x: '${..name}' } },
  data: { files: ['f0.jsonl', 'f1.jsonl'], nested: [{ p: 1 }] },
  alias: '${model}',
  chain1: '${chain2}',
  chain2: '${chain3}',
  chain3: 42,
  cyc_a: '${cyc_b}',
  cyc_b: '${cyc_a}',
  tri_a: '${tri_b}',
  tri_b: '${tri_c}',
  tri_c: '${tri_a}',
  self: '${self}',
  parent: { child: '${parent}' },
  missing: '???',
  choice: 'path',
  idx: 0,
  port: '${oc.env:PORT}',
  str_interp: 'v_${name}',
  bad_syntax: '${oops',
};

function resolve(
  text: string,
  opts: {
    path?: Path;
    env?: Record<string, string | undefined>;
    resolvers?: ResolveContext['resolvers'];
    root?: unknown;
  } = {},
): ResolveResult {
  return resolveValue(text, {
    path: opts.path ?? ['target'],
    lookup: lookupIn(opts.root ?? ROOT),
    env: opts.env ?? {},
    resolvers: opts.resolvers,
  });
}

function value(text: string, opts?: Parameters<typeof resolve>[1]): unknown {
  const r = resolve(text, opts);
  assert.ok(r.ok, `expected ${JSON.stringify(text)} to resolve, got ${JSON.stringify(!r.ok && r.errors)}`);
  return r.value;
}

function errors(text: string, opts?: Parameters<typeof resolve>[1]) {
  const r = resolve(text, opts);
  assert.ok(!r.ok, `expected ${JSON.stringify(text)} to fail, got ${JSON.stringify(r.ok && r.value)}`);
  return r.errors;
}

function interpolated(text: string): Extract<ParsedValue, { kind: 'interpolated' }> {
  const p = parseValue(text);
  assert.equal(p.kind, 'interpolated');
  return p as Extract<ParsedValue, { kind: 'interpolated' }>;
}

function only(text: string): Interpolation {
  const p = interpolated(text);
  assert.deepEqual(p.errors, []);
  assert.equal(p.whole, true);
  return p.parts[0] as Interpolation;
}

function resolverAt(text: string): ResolverInterpolation {
  const n = only(text);
  assert.equal(n.type, 'resolver');
  return n as ResolverInterpolation;
}

describe('parseValue: node interpolations', () => {
  test('plain values', () => {
    assert.deepEqual(parseValue('hello'), { kind: 'plain' });
    assert.deepEqual(parseValue(''), { kind: 'plain' });
    assert.deepEqual(parseValue('$ {x} {a} $$'), { kind: 'plain' });
  });

  test('absolute ${a.b.c} with key spans', () => {
    assert.deepEqual(parseValue('${a.b.c}'), {
      kind: 'interpolated',
      whole: true,
      errors: [],
      parts: [
        {
          type: 'node',
          ref: {
            up: 0,
            keys: ['a', 'b', 'c'],
            spans: [
              { start: 2, end: 3, bracket: false },
              { start: 4, end: 5, bracket: false },
              { start: 6, end: 7, bracket: false },
            ],
          },
          start: 0,
          end: 8,
        },
      ],
    });
  });

  test('embedded in text: run_${name}_x', () => {
    const p = interpolated('run_${name}_x');
    assert.equal(p.whole, false);
    assert.deepEqual(p.errors, []);
    assert.deepEqual(p.parts, [
      { type: 'text', value: 'run_', start: 0, end: 4 },
      {
        type: 'node',
        ref: { up: 0, keys: ['name'], spans: [{ start: 6, end: 10, bracket: false }] },
        start: 4,
        end: 11,
      },
      { type: 'text', value: '_x', start: 11, end: 13 },
    ]);
  });

  test('relative refs: up counts the leading dots', () => {
    const sib = only('${.sibling}') as NodeInterpolation;
    assert.deepEqual(sib.ref, { up: 1, keys: ['sibling'], spans: [{ start: 3, end: 10, bracket: false }] });
    const par = only('${..parent_key}') as NodeInterpolation;
    assert.deepEqual(par.ref, { up: 2, keys: ['parent_key'], spans: [{ start: 4, end: 14, bracket: false }] });
    assert.equal((only('${...x}') as NodeInterpolation).ref.up, 3);
    assert.deepEqual((only('${.[a]}') as NodeInterpolation).ref, {
      up: 1,
      keys: ['a'],
      spans: [{ start: 4, end: 5, bracket: true }],
    });
  });

  test('bracket indices: ${a[0].b} and ${[a].b}', () => {
    assert.deepEqual(only('${a[0].b}'), {
      type: 'node',
      ref: {
        up: 0,
        keys: ['a', '0', 'b'],
        spans: [
          { start: 2, end: 3, bracket: false },
          { start: 4, end: 5, bracket: true },
          { start: 7, end: 8, bracket: false },
        ],
      },
      start: 0,
      end: 9,
    });
    assert.deepEqual((only('${[a].b}') as NodeInterpolation).ref.keys, ['a', 'b']);
    assert.deepEqual((only('${a[b][c]}') as NodeInterpolation).ref.keys, ['a', 'b', 'c']);
  });

  test('keys made of other characters (INTER_KEY): ${x@y}, ${$x}, ${0}, ${1.2}', () => {
    assert.deepEqual((only('${x@y}') as NodeInterpolation).ref.keys, ['x@y']);
    assert.deepEqual((only('${$x$y}') as NodeInterpolation).ref.keys, ['$x$y']);
    assert.deepEqual((only('${1.2}') as NodeInterpolation).ref.keys, ['1', '2']);
    assert.deepEqual((only('${a-b.c}') as NodeInterpolation).ref.keys, ['a-b', 'c']);
  });

  test('nested key ${a.${b}}', () => {
    assert.deepEqual(only('${a.${b}}'), {
      type: 'node',
      ref: {
        up: 0,
        keys: [
          'a',
          {
            type: 'node',
            ref: { up: 0, keys: ['b'], spans: [{ start: 6, end: 7, bracket: false }] },
            start: 4,
            end: 8,
          },
        ],
        spans: [
          { start: 2, end: 3, bracket: false },
          { start: 4, end: 8, bracket: false },
        ],
      },
      start: 0,
      end: 9,
    });
  });

  test('whitespace is allowed only next to ${, : and }', () => {
    assert.deepEqual((only('${ a.b \t}') as NodeInterpolation).ref.keys, ['a', 'b']);
    assert.equal(interpolated('${a .b}').errors.length, 1);
    assert.equal(interpolated('${a. b}').errors.length, 1);
  });

  test('whole is true only for exactly one interpolation', () => {
    assert.equal(interpolated('${a}').whole, true);
    assert.equal(interpolated(' ${a}').whole, false);
    assert.equal(interpolated('${a} ').whole, false);
    assert.equal(interpolated('${a}${b}').whole, false);
  });
});

describe('parseValue: resolver interpolations', () => {
  test('${oc.env:VAR}', () => {
    assert.deepEqual(resolverAt('${oc.env:VAR}'), {
      type: 'resolver',
      name: 'oc.env',
      nameParts: ['oc', 'env'],
      nameStart: 2,
      nameEnd: 8,
      args: [{ type: 'literal', value: 'VAR', float: false, raw: 'VAR', start: 9, end: 12 }],
      start: 0,
      end: 13,
    });
  });

  test('defaults: value, null, empty', () => {
    assert.deepEqual(resolverAt('${oc.env:VAR,default}').args[1], {
      type: 'literal',
      value: 'default',
      float: false,
      raw: 'default',
      start: 13,
      end: 20,
    });
    assert.deepEqual(resolverAt('${oc.env:VAR,null}').args[1], {
      type: 'literal',
      value: null,
      float: false,
      raw: 'null',
      start: 13,
      end: 17,
    });
    const empty = resolverAt('${oc.env:VAR,}');
    assert.equal(empty.end, 14);
    assert.deepEqual(empty.args[1], { type: 'literal', value: '', float: false, raw: '', start: 13, end: 13 });
    assert.deepEqual(
      resolverAt('${f:,}').args.map((a) => (a as { value: unknown }).value),
      ['', ''],
    );
    assert.deepEqual(resolverAt('${oc.env:}').args, []);
    assert.deepEqual(resolverAt('${oc.env: }').args, []);
  });

  test('${oc.select:a.b,default}: unquoted multi-token argument', () => {
    const r = resolverAt('${oc.select:a.b,default}');
    assert.equal(r.name, 'oc.select');
    assert.deepEqual(r.args, [
      { type: 'string', quote: null, parts: [{ type: 'text', value: 'a.b', start: 12, end: 15 }], start: 12, end: 15 },
      { type: 'literal', value: 'default', float: false, raw: 'default', start: 16, end: 23 },
    ]);
    assert.equal(r.end, 24);
  });

  test('quoted arguments keep commas and their offsets', () => {
    const r = resolverAt(`\${f:'a,b',"c"}`);
    assert.deepEqual(r.args, [
      { type: 'string', quote: "'", parts: [{ type: 'text', value: 'a,b', start: 5, end: 8 }], start: 4, end: 9 },
      { type: 'string', quote: '"', parts: [{ type: 'text', value: 'c', start: 11, end: 12 }], start: 10, end: 13 },
    ]);
    assert.deepEqual(resolverAt(`\${f:''}`).args, [{ type: 'string', quote: "'", parts: [], start: 4, end: 6 }]);
  });

  test('nested resolver ${oc.env:A,${oc.env:B,x}}', () => {
    const r = resolverAt('${oc.env:A,${oc.env:B,x}}');
    assert.equal(r.end, 25);
    assert.deepEqual(r.args[1], {
      type: 'resolver',
      name: 'oc.env',
      nameParts: ['oc', 'env'],
      nameStart: 13,
      nameEnd: 19,
      args: [
        { type: 'literal', value: 'B', float: false, raw: 'B', start: 20, end: 21 },
        { type: 'literal', value: 'x', float: false, raw: 'x', start: 22, end: 23 },
      ],
      start: 11,
      end: 24,
    });
  });

  test('typed literals, lists and dicts', () => {
    const r = resolverAt('${f:1,-2.5,1e-3,TrUe,NULL,inf,1_000,007}');
    assert.deepEqual(
      r.args.map((a) => (a.type === 'literal' ? [a.value, a.float] : a.type)),
      [
        [1, false],
        [-2.5, true],
        [0.001, true],
        [true, false],
        [null, false],
        [Infinity, true],
        [1000, false],
        'string',
      ],
    );
    const l = resolverAt('${f:[a, 1],{k: v}}');
    assert.equal(l.args[0].type, 'list');
    assert.equal(l.args[1].type, 'dict');
  });

  test('resolver names: namespaces, whitespace around the colon, nested names', () => {
    assert.equal(resolverAt('${ns1.ns2.f:1}').name, 'ns1.ns2.f');
    assert.equal(resolverAt('${ oc.env : X }').name, 'oc.env');
    assert.deepEqual(resolverAt('${ oc.env : X }').args, [
      { type: 'literal', value: 'X', float: false, raw: 'X', start: 12, end: 13 },
    ]);
    const n = resolverAt('${${x}:a}');
    assert.equal(n.name, '${x}');
    assert.equal((n.nameParts[0] as Interpolation).type, 'node');
  });

  test('${oc.decode:...} argument forms', () => {
    const r = resolverAt(`\${oc.decode:'[1, 2]'}`);
    assert.equal(r.name, 'oc.decode');
    assert.deepEqual(r.args[0], {
      type: 'string',
      quote: "'",
      parts: [{ type: 'text', value: '[1, 2]', start: 13, end: 19 }],
      start: 12,
      end: 20,
    });
  });
});

describe('parseValue: escapes', () => {
  test('\\${ is a literal ${', () => {
    const p = interpolated('\\${a}');
    assert.deepEqual(p, {
      kind: 'interpolated',
      whole: false,
      errors: [],
      parts: [{ type: 'text', value: '${a}', start: 0, end: 5 }],
    });
  });

  test('\\\\${a}: an escaped backslash, then an interpolation', () => {
    const p = interpolated('\\\\${a}');
    assert.deepEqual(p.parts, [
      { type: 'text', value: '\\', start: 0, end: 2 },
      { type: 'node', ref: { up: 0, keys: ['a'], spans: [{ start: 4, end: 5, bracket: false }] }, start: 2, end: 6 },
    ]);
  });

  test('\\\\\\${a}: escaped backslash + escaped interpolation', () => {
    assert.deepEqual(interpolated('\\\\\\${a}').parts, [{ type: 'text', value: '\\${a}', start: 0, end: 7 }]);
  });

  test('backslashes elsewhere are kept as written', () => {
    assert.deepEqual(interpolated('a\\b\\\\c ${x}\\\\').parts, [
      { type: 'text', value: 'a\\b\\\\c ', start: 0, end: 7 },
      { type: 'node', ref: { up: 0, keys: ['x'], spans: [{ start: 9, end: 10, bracket: false }] }, start: 7, end: 11 },
      { type: 'text', value: '\\\\', start: 11, end: 13 },
    ]);
  });

  test('escapes inside resolver arguments', () => {
    const lit = (t: string) => resolverAt(t).args[0];
    assert.deepEqual(lit('${f:a\\,b}'), {
      type: 'string',
      quote: null,
      parts: [{ type: 'text', value: 'a,b', start: 4, end: 8 }],
      start: 4,
      end: 8,
    });
    assert.equal((lit('${f:\\ }') as { value: unknown }).value, ' ');
    assert.deepEqual((lit("${f:'it\\'s'}") as { parts: Part[] }).parts, [
      { type: 'text', value: "it's", start: 5, end: 10 },
    ]);
    assert.deepEqual((lit("${f:'\\${x}'}") as { parts: Part[] }).parts, [
      { type: 'text', value: '${x}', start: 5, end: 10 },
    ]);
    assert.deepEqual((lit("${f:'a\\\\'}") as { parts: Part[] }).parts, [
      { type: 'text', value: 'a\\', start: 5, end: 8 },
    ]);
  });
});

describe('parseValue: errors with exact ranges', () => {
  test('unterminated ${a.b', () => {
    const p = interpolated('${a.b');
    assert.equal(p.whole, false);
    assert.equal(p.errors.length, 1);
    assert.deepEqual({ ...p.errors[0], message: '' }, { start: 0, end: 5, offset: 5, message: '' });
    assert.match(p.errors[0].message, /end of text/);
    assert.deepEqual(p.parts, [{ type: 'text', value: '${a.b', start: 0, end: 5 }]);
  });

  test('empty ${}', () => {
    const p = interpolated('${}');
    assert.deepEqual({ ...p.errors[0], message: '' }, { start: 0, end: 3, offset: 2, message: '' });
    assert.match(p.errors[0].message, /empty interpolation/);
  });

  test('a failing interpolation does not hide the next one', () => {
    const p = interpolated('x ${} y ${a}');
    assert.deepEqual(
      p.errors.map((e) => [e.start, e.end, e.offset]),
      [[2, 5, 4]],
    );
    assert.deepEqual(p.parts, [
      { type: 'text', value: 'x ${} y ', start: 0, end: 8 },
      { type: 'node', ref: { up: 0, keys: ['a'], spans: [{ start: 10, end: 11, bracket: false }] }, start: 8, end: 12 },
    ]);
  });

  test('error offsets point at the offending character', () => {
    const at = (t: string) => interpolated(t).errors.map((e) => [e.start, e.end, e.offset]);
    assert.deepEqual(at('${a b}'), [[0, 6, 3]]); // whitespace inside a key
    assert.deepEqual(at('${a:b=c}'), [[0, 8, 5]]); // '=' is not allowed unquoted
    assert.deepEqual(at('${a${b}}'), [[0, 8, 4]]); // ${foo${bar}} is not allowed
    assert.deepEqual(at(`\${f:'abc}`), [[0, 9, 9]]); // unterminated quote
    assert.deepEqual(at('${y@z:x}'), [[0, 8, 2]]); // invalid resolver name
    assert.deepEqual(at('${a.}'), [[0, 5, 4]]);
    assert.deepEqual(at('${..}'), [[0, 5, 4]]);
    assert.deepEqual(at('ok ${a} ${b'), [[8, 11, 11]]);
    assert.deepEqual(at(`\${f:'x'y}`), [[0, 9, 7]]); // quoted value followed by more text
    assert.deepEqual(at('${f:{a:1,}}'), [[0, 11, 9]]); // dicts do not allow a trailing comma
  });

  test('${oc.env:} is valid syntax (it fails when resolved)', () => {
    assert.deepEqual(interpolated('${oc.env:}').errors, []);
  });

  test('nesting deeper than the limit is an error, not a crash', () => {
    const t = '${'.repeat(300) + 'a' + '}'.repeat(300);
    const p = interpolated(t);
    assert.equal(p.errors.length, 1);
    assert.match(p.errors[0].message, /nesting/);
    assert.equal(p.errors[0].end, t.length);
  });
});

describe('findInterpolations / isInterpolated', () => {
  test('ranges of top-level interpolations', () => {
    assert.deepEqual(findInterpolations('a ${b} \\${c} ${d:${e}} ${f'), [
      { start: 2, end: 6 },
      { start: 13, end: 22 },
      { start: 23, end: 26 },
    ]);
    assert.deepEqual(findInterpolations(`\${f:'}'}x`), [{ start: 0, end: 8 }]);
    assert.deepEqual(findInterpolations('\\\\${a}'), [{ start: 2, end: 6 }]);
    assert.deepEqual(findInterpolations('plain'), []);
  });

  test('isInterpolated follows OmegaConf: any ${, escaped ones included', () => {
    assert.equal(isInterpolated('${a}'), true);
    assert.equal(isInterpolated('\\${a}'), true);
    assert.equal(isInterpolated('$a {b}'), false);
    assert.equal(isInterpolated(''), false);
  });
});

describe('resolveValue: node interpolations', () => {
  test('a whole-value reference keeps the type', () => {
    assert.equal(value('${model.lr}'), 0.00001);
    assert.equal(value('${model.steps}'), 100);
    assert.equal(value('${model.use_fp16}'), true);
    assert.equal(value('${model.extra}'), null);
    assert.deepEqual(value('${model.tags}'), ['a', 'b']);
    assert.deepEqual(value('${model.opts}'), { k: 1 });
  });

  test('refs give the range, target path and value', () => {
    assert.deepEqual(resolve('${model.lr}'), {
      ok: true,
      value: 0.00001,
      refs: [{ start: 0, end: 11, kind: 'node', target: ['model', 'lr'], value: 0.00001 }],
    });
    const r = resolve('run_${name}_x');
    assert.deepEqual(r, {
      ok: true,
      value: 'run_exp1_x',
      refs: [{ start: 4, end: 11, kind: 'node', target: ['name'], value: 'exp1' }],
    });
  });

  test('embedded values are stringified like Python str()', () => {
    assert.equal(value('fp16=${model.use_fp16}'), 'fp16=True');
    assert.equal(value('off=${oc.decode:"false"}'), 'off=False');
    assert.equal(value('x=${model.extra}'), 'x=None');
    assert.equal(value('n=${model.steps}'), 'n=100');
    assert.equal(value('neg=${model.neg}'), 'neg=-3');
    assert.equal(value('lr=${model.lr}'), 'lr=1e-05');
    assert.equal(value('s=${model.small}'), 's=0.0001');
    assert.equal(value('t=${model.tiny}'), 't=1e-07');
    assert.equal(value('f=${model.f}'), 'f=1.5');
    assert.equal(value('tags=${model.tags}'), "tags=['a', 'b']");
    assert.equal(value('opts=${model.opts}'), "opts={'k': 1}");
    assert.equal(value('${name}${model.steps}'), 'exp1100');
  });

  test('referenced values that are interpolations resolve relative to their own node', () => {
    assert.equal(value('${chain1}'), 42);
    assert.deepEqual(resolve('${chain1}').refs, [{ start: 0, end: 9, kind: 'node', target: ['chain1'], value: 42 }]);
    assert.equal(value('${str_interp}'), 'v_exp1');
    assert.equal(value('${trainer.save_dir}'), 'exp1/ckpt');
    assert.equal(value('${trainer.deep.x}'), 'trainer1');
    // selecting through an interpolated container
    assert.equal(value('${alias.path}'), '/models/qwen');
    assert.deepEqual(resolve('${alias.path}').refs[0].target, ['model', 'path']);
  });

  test('relative references', () => {
    const at: Path = ['trainer', 'x'];
    assert.equal(value('${.name}', { path: at }), 'trainer1');
    assert.deepEqual(resolve('${.name}', { path: at }).refs[0].target, ['trainer', 'name']);
    assert.equal(value('${..name}', { path: at }), 'exp1');
    assert.equal(value('${.deep.x}', { path: at }), 'trainer1');
    assert.equal(value('${..data.files[0]}', { path: at }), 'f0.jsonl');
    const errs = errors('${...name}', { path: at });
    assert.deepEqual(
      errs.map((e) => [e.start, e.end, e.code]),
      [[0, 10, 'missing-key']],
    );
    assert.match(errs[0].message, /above the config root/);
  });

  test('list indices', () => {
    assert.equal(value('${data.files[1]}'), 'f1.jsonl');
    assert.deepEqual(resolve('${data.files[1]}').refs[0].target, ['data', 'files', 1]);
    assert.equal(value('${data.files.0}'), 'f0.jsonl');
    assert.equal(value('${data.nested[0].p}'), 1);
    assert.equal(errors('${data.files[5]}')[0].code, 'missing-key');
    assert.equal(errors('${data.files[-1]}')[0].code, 'missing-key');
    assert.equal(errors('${data.files.x}')[0].code, 'type');
    assert.equal(errors('${name.x}')[0].code, 'type');
  });

  test('nested keys', () => {
    assert.equal(value('${model.${choice}}'), '/models/qwen');
    assert.deepEqual(
      resolve('${model.${choice}}').refs.map((r) => [r.start, r.end, r.target]),
      [
        [8, 17, ['choice']],
        [0, 18, ['model', 'path']],
      ],
    );
    // a key produced by an interpolation must be a string (OmegaConf rejects ints here)
    const e = errors('${data.files.${idx}}');
    assert.deepEqual(
      e.map((x) => [x.start, x.end, x.code]),
      [[13, 19, 'type']],
    );
  });

  test('missing keys report the failing range and the dotted target', () => {
    const e = errors('${model.nope}');
    assert.deepEqual(
      e.map((x) => [x.start, x.end, x.code, x.target]),
      [[0, 13, 'missing-key', 'model.nope']],
    );
    assert.match(e[0].message, /model\.nope/);
    assert.deepEqual(
      errors('${nope}_${model.nope2}').map((x) => [x.start, x.end, x.code]),
      [
        [0, 7, 'missing-key'],
        [8, 22, 'missing-key'],
      ],
    );
    const m = errors('${missing}');
    assert.equal(m[0].code, 'missing-key');
    assert.match(m[0].message, /missing mandatory value/);
  });

  test('cycles: direct, self, 3-chain, and entered from outside', () => {
    const direct = errors('${cyc_b}', { path: ['cyc_a'] });
    assert.deepEqual(
      direct.map((e) => [e.start, e.end, e.code]),
      [[0, 8, 'cycle']],
    );
    assert.match(direct[0].message, /cyc_a -> cyc_b -> cyc_a/);
    assert.match(errors('${self}', { path: ['self'] })[0].message, /self -> self/);
    const tri = errors('${tri_b}', { path: ['tri_a'] });
    assert.equal(tri[0].code, 'cycle');
    assert.match(tri[0].message, /tri_a -> tri_b -> tri_c -> tri_a/);
    const outside = errors('x ${cyc_a}');
    assert.deepEqual(
      outside.map((e) => [e.start, e.end, e.code]),
      [[2, 10, 'cycle']],
    );
    assert.match(outside[0].message, /cyc_a -> cyc_b -> cyc_a/);
  });

  test('an interpolation pointing at its own parent is a cycle', () => {
    const e = errors('${parent}', { path: ['parent', 'child'] });
    assert.equal(e[0].code, 'cycle');
    assert.match(e[0].message, /parent node/);
  });

  test('syntax errors, here and in referenced values', () => {
    assert.deepEqual(
      errors('${a.b').map((e) => [e.start, e.end, e.code]),
      [[0, 5, 'parse']],
    );
    const e = errors('x_${bad_syntax}');
    assert.deepEqual(
      e.map((x) => [x.start, x.end, x.code]),
      [[2, 15, 'parse']],
    );
    assert.match(e[0].message, /bad_syntax/);
  });

  test('escapes when resolving', () => {
    const r = resolve('a\\${name}');
    assert.deepEqual(r, { ok: true, value: 'a${name}', refs: [] });
    assert.equal(value('\\\\${name}'), '\\exp1');
    assert.equal(value('C:\\dir\\${name}'), 'C:\\dir${name}');
    assert.equal(value('C:\\\\dir'), 'C:\\\\dir');
  });

  test('values without ${ are returned as they are', () => {
    assert.deepEqual(resolve('plain'), { ok: true, value: 'plain', refs: [] });
    assert.deepEqual(resolve('???'), { ok: true, value: '???', refs: [] });
  });
});

describe('resolveValue: oc.env', () => {
  const env = { PORT: '8080', EMPTY: '' };
  test('returns the variable as a string', () => {
    assert.deepEqual(resolve('${oc.env:PORT}', { env }), {
      ok: true,
      value: '8080',
      refs: [{ start: 0, end: 14, kind: 'env', target: 'PORT', value: '8080' }],
    });
    assert.equal(value('${oc.env:EMPTY,d}', { env }), '');
    assert.equal(value('http://localhost:${oc.env:PORT}/v1', { env }), 'http://localhost:8080/v1');
  });

  test('unset without a default: missing-env naming the variable', () => {
    const e = errors('${oc.env:NOPE}', { env });
    assert.deepEqual(
      e.map((x) => [x.start, x.end, x.code, x.target]),
      [[0, 14, 'missing-env', 'NOPE']],
    );
    assert.match(e[0].message, /NOPE/);
    // through a referenced node
    const via = errors('${port}', { env: {} });
    assert.deepEqual(
      via.map((x) => [x.start, x.end, x.code, x.target]),
      [[0, 7, 'missing-env', 'PORT']],
    );
    assert.match(via[0].message, /while resolving port/);
  });

  test('defaults: string, null, empty, str() of typed defaults, quoted, nested', () => {
    assert.equal(value('${oc.env:NOPE,dflt}', { env }), 'dflt');
    assert.equal(value('${oc.env:NOPE,/tmp/x}', { env }), '/tmp/x');
    assert.equal(value('${oc.env:NOPE,null}', { env }), null);
    assert.equal(value('${oc.env:NOPE,}', { env }), '');
    assert.equal(value('${oc.env:NOPE,12345}', { env }), '12345');
    assert.equal(value('${oc.env:NOPE,true}', { env }), 'True');
    assert.equal(value('${oc.env:NOPE,1.0}', { env }), '1.0');
    assert.equal(value('${oc.env:NOPE,[a, 1]}', { env }), "['a', 1]");
    assert.equal(value(`\${oc.env:NOPE,'a,b'}`, { env }), 'a,b');
    assert.equal(value('${oc.env:NOPE,${oc.env:PORT}}', { env }), '8080');
    assert.equal(value('${oc.env:NOPE,${oc.env:NOPE2,x}}', { env }), 'x');
    assert.deepEqual(resolve('${oc.env:NOPE,x}', { env }).refs, [
      { start: 0, end: 16, kind: 'env', target: 'NOPE', value: 'x', defaulted: true },
    ]);
    // arguments are evaluated first, as in OmegaConf: a failing nested default fails the whole interpolation
    assert.deepEqual(
      errors('${oc.env:NOPE,${oc.env:NOPE2}}', { env }).map((x) => [x.start, x.end, x.code, x.target]),
      [[14, 29, 'missing-env', 'NOPE2']],
    );
  });

  test('${oc.env:} fails at resolution', () => {
    assert.deepEqual(
      errors('${oc.env:}').map((x) => [x.start, x.end, x.code]),
      [[0, 10, 'resolver-error']],
    );
  });
});

describe('resolveValue: other resolvers', () => {
  test('oc.select', () => {
    assert.equal(value('${oc.select:model.path,/tmp}'), '/models/qwen');
    assert.deepEqual(resolve('${oc.select:model.path,/tmp}').refs[0].target, ['model', 'path']);
    assert.equal(value('${oc.select:model.nope,/tmp}'), '/tmp');
    assert.equal(value('${oc.select:model.nope}'), null);
    assert.equal(value('${oc.select:missing,d}'), 'd');
    assert.equal(value('${oc.select:.name,d}', { path: ['trainer', 'x'] }), 'trainer1');
  });

  test('oc.decode parses strings into values', () => {
    assert.equal(value('${oc.decode:${oc.env:PORT}}', { env: { PORT: '8080' } }), 8080);
    assert.deepEqual(value(`\${oc.decode:'[a, 1, 2.5]'}`), ['a', 1, 2.5]);
    assert.deepEqual(value(`\${oc.decode:'{a: true, b: null}'}`), { a: true, b: null });
    assert.equal(value('${oc.decode:null}'), null);
    assert.equal(value(`\${oc.decode:'x y'}`), 'x y');
    assert.equal(value("${oc.decode:'1.0'}"), 1);
    assert.equal(value("v${oc.decode:'1.0'}"), 'v1.0');
    assert.equal(value('v${oc.decode:"true"}'), 'vTrue');
    assert.equal(value(`x\${oc.decode:'1e-5'}`), 'x1e-05');
    // only strings (or null) can be decoded
    assert.equal(errors('${oc.decode:1}')[0].code, 'resolver-error');
    assert.equal(errors('${oc.decode:false}')[0].code, 'resolver-error');
    assert.equal(errors(`\${oc.decode:'[1'}`)[0].code, 'resolver-error');
  });

  test('unknown resolvers (prototype names included)', () => {
    const e = errors('${nope:1}');
    assert.deepEqual(
      e.map((x) => [x.start, x.end, x.code, x.target]),
      [[0, 9, 'unknown-resolver', 'nope']],
    );
    assert.equal(errors('${toString:}')[0].code, 'unknown-resolver');
    // both the failing argument and the unknown name are reported
    assert.deepEqual(
      errors('${nope:${missing_key}}').map((x) => [x.start, x.end, x.code]),
      [
        [7, 21, 'missing-key'],
        [0, 22, 'unknown-resolver'],
      ],
    );
    assert.equal(errors('${constructor:x}')[0].code, 'unknown-resolver');
  });

  test('custom resolvers get evaluated arguments; errors become resolver-error', () => {
    const resolvers = {
      add: (args: unknown[]) => (args as number[]).reduce((a, b) => a + b, 0),
      boom: () => {
        throw new Error('kaboom');
      },
    };
    assert.equal(value('${add:1,2}', { resolvers }), 3);
    assert.equal(value('x${add:1,${model.steps}}', { resolvers }), 'x101');
    const e = errors('a ${boom:}', { resolvers });
    assert.deepEqual(
      e.map((x) => [x.start, x.end, x.code]),
      [[2, 10, 'resolver-error']],
    );
    assert.match(e[0].message, /kaboom/);
  });
});

describe('robustness', () => {
  const units = [
    '$',
    '{',
    '}',
    '${',
    '\\',
    ':',
    ',',
    "'",
    '"',
    '.',
    '[',
    ']',
    ' ',
    'a',
    'b',
    '0',
    'oc.env',
    'oc.decode',
    'oc.select',
    'null',
    '=',
    '\t',
  ];
  const soup = fc.string({ unit: fc.constantFrom(...units), maxLength: 60 });
  const ctx = (path: Path): ResolveContext => ({ path, lookup: lookupIn(ROOT), env: { PORT: '1' } });

  function checkParsed(s: string): void {
    const p = parseValue(s);
    if (p.kind === 'plain') {
      assert.equal(s.includes('${'), false);
      return;
    }
    for (const e of p.errors)
      assert.ok(
        e.start >= 0 && e.start < e.end && e.end <= s.length && e.offset >= e.start && e.offset <= e.end,
        JSON.stringify(e),
      );
    // parts tile the text
    let at = 0;
    for (const part of p.parts) {
      assert.equal(part.start, at);
      assert.ok(part.end > part.start);
      at = part.end;
    }
    assert.equal(at, s.length);
    if (p.errors.length === 0) {
      const inters = p.parts.filter((x) => x.type !== 'text');
      for (const x of inters) assert.ok(s.startsWith('${', x.start) && s[x.end - 1] === '}');
      assert.deepEqual(
        findInterpolations(s),
        inters.map((x) => ({ start: x.start, end: x.end })),
      );
    }
  }

  test('parse / resolve / find never throw on random text (property)', () => {
    fc.assert(
      fc.property(soup, (s) => {
        checkParsed(s);
        const r = resolveValue(s, ctx(['trainer', 'x']));
        assert.equal(typeof r.ok, 'boolean');
        if (!r.ok) for (const e of r.errors) assert.ok(e.start >= 0 && e.end <= s.length && e.start <= e.end);
        findInterpolations(s);
      }),
      { numRuns: 3000 },
    );
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 80 }), (s) => {
        checkParsed(s);
        checkParsed('${' + s);
        resolveValue('${' + s + '}', ctx(['x']));
      }),
      { numRuns: 1000 },
    );
  });

  test('resolution against random keys into a config with cycles never throws (property)', () => {
    const key = fc.string({
      unit: fc.constantFrom(
        'cyc_a',
        'tri_a',
        'alias',
        'model',
        '.',
        '..',
        '[0]',
        'self',
        'parent',
        'child',
        'x',
        '${',
        '}',
        'oc.select:',
      ),
      maxLength: 8,
    });
    fc.assert(
      fc.property(
        key,
        fc.constantFrom<Path>(['x'], ['parent', 'child'], ['cyc_a'], ['data', 'files', 0]),
        (k, path) => {
          const r = resolveValue('${' + k + '}', ctx(path));
          assert.equal(typeof r.ok, 'boolean');
        },
      ),
      { numRuns: 1500 },
    );
  });

  test('a lookup that throws is a missing key, not a crash', () => {
    const r = resolveValue('${a.b}', {
      path: ['x'],
      env: {},
      lookup: () => {
        throw new Error('boom');
      },
    });
    assert.equal(r.ok, false);
    assert.equal(!r.ok && r.errors[0].code, 'missing-key');
  });

  /**
   * Linear, not quadratic, counted rather than timed: the interpolation code reads its input one character at a time
   * (`charCodeAt`) and copies pieces of it (`slice`, `indexOf`/`includes` scanning their string), so those
   * characters are its work. For 8x the input the count must stay under 12x (linear gives 8x, quadratic 64x); a
   * count does not care how loaded the machine is.
   */
  const charWork = (s: string): number => {
    const proto = String.prototype;
    const saved = {
      charCodeAt: proto.charCodeAt,
      slice: proto.slice,
      indexOf: proto.indexOf,
      includes: proto.includes,
    };
    let n = 0;
    proto.charCodeAt = function (this: string, i: number) {
      n++;
      return saved.charCodeAt.call(this, i);
    };
    proto.slice = function (this: string, a?: number, b?: number) {
      const r = saved.slice.call(this, a, b);
      n += r.length;
      return r;
    };
    proto.indexOf = function (this: string, x: string, from?: number) {
      n += this.length;
      return saved.indexOf.call(this, x, from);
    };
    proto.includes = function (this: string, x: string, from?: number) {
      n += this.length;
      return saved.includes.call(this, x, from);
    };
    try {
      parseValue(s);
      resolveValue(s, ctx(['x']));
      findInterpolations(s);
    } finally {
      Object.assign(proto, saved);
    }
    return n;
  };
  const scalesLinearly = (make: (n: number) => string, n: number) => {
    const small = charWork(make(n));
    const large = charWork(make(8 * n));
    assert.ok(small >= n, `${JSON.stringify(make(n).slice(0, 12))}…: only ${small} characters read`);
    const ratio = large / small;
    assert.ok(
      ratio < 12,
      `${JSON.stringify(make(n).slice(0, 12))}…: 8x the input took ${ratio.toFixed(1)}x the character reads (${small} -> ${large})`,
    );
  };

  test('20 kB of ${ is handled in linear time', () => {
    const s = '${'.repeat(10_000);
    const p = parseValue(s);
    assert.equal(p.kind === 'interpolated' && p.errors.length, 1);
    assert.equal(resolveValue(s, ctx(['x'])).ok, false);
    scalesLinearly((n) => '${'.repeat(n), 1_250);
  });

  test('other pathological inputs take linear time', () => {
    const inputs: ((n: number) => string)[] = [
      (n) => '${}'.repeat(n),
      (n) => '\\'.repeat(n) + '${a}',
      (n) => '${a:' + '['.repeat(n),
      (n) => '${a:' + '{'.repeat(n),
      (n) => "${a:'" + '${'.repeat(n),
      (n) => '${'.repeat(n) + 'a' + '}'.repeat(n),
      (n) => '${a' + '.b'.repeat(n) + '}',
      (n) => '${' + '.'.repeat(n) + 'a}',
      (n) => '${a:' + ' '.repeat(n) + 'x',
      (n) => '${' + '['.repeat(n),
      (n) => '\\${'.repeat(n),
    ];
    for (const make of inputs) scalesLinearly(make, 2_500);
  });

  test('long reference chains and exponential strings are cut off, not crashed', () => {
    const chain: Record<string, unknown> = { end: 7 };
    for (let i = 0; i < 1000; i++) chain['a' + i] = i === 999 ? '${end}' : '${a' + (i + 1) + '}';
    const deep = resolveValue('${a0}', { path: ['x'], lookup: lookupIn(chain), env: {} });
    assert.equal(deep.ok, false);
    const short = resolveValue('${a950}', { path: ['x'], lookup: lookupIn(chain), env: {} });
    assert.deepEqual(short.ok && short.value, 7);

    const doubling: Record<string, unknown> = { d40: 'x' };
    for (let i = 0; i < 40; i++) doubling['d' + i] = `\${d${i + 1}}\${d${i + 1}}`;
    // 2^40 characters if expanded: each key is looked up once (outcomes are cached), and the length cap stops it
    const lookup = lookupIn(doubling);
    let lookups = 0;
    const counted: typeof lookup = (...args) => (lookups++, lookup(...args));
    const r = resolveValue('${d0}', { path: ['x'], lookup: counted, env: {} });
    assert.equal(!r.ok && r.errors[0].code, 'resolver-error');
    assert.match(!r.ok ? r.errors[0].message : '', /longer than 1000000 characters/);
    assert.ok(lookups <= 4 * 41, `${lookups} lookups for 41 keys`);
  });
});
