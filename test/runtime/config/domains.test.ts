/**
 * Value domains (runtime/config/model/domains.ts): for every domain in every release that has its field, a valid
 * boundary value passes and an invalid one gets TRN024 at its line, with the allowed range or set in the message;
 * values through `${...}` are checked after resolution, at the `${`; the JSON Schema carries the same bounds.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { lineColumn } from '../../../runtime/config/load/load-config';
import { fieldAt, ROOT_SECTION } from '../../../runtime/config/model';
import { DOMAINS, describeDomain, joinDomains } from '../../../runtime/config/model/domains';
import type { Domain, SectionDef, ValueType } from '../../../runtime/config/model/types';
import { RELEASES, type Release } from '../../../runtime/config/releases';
import { generateSchema } from '../../../runtime/config/codegen/schema-gen';
import { checkLoaded } from '../../../runtime/config/check-config';
import { loadConfig } from '../../../runtime/config/load/load-config';

/** A path from the root to a section named `name` at `release` (list items as index 0; maps not followed). */
function pathTo(name: string, release: Release): (string | number)[] | undefined {
  const seen = new Set<string>();
  const queue: { s: SectionDef; path: (string | number)[] }[] = [{ s: ROOT_SECTION, path: [] }];
  while (queue.length) {
    const { s, path } = queue.shift()!;
    if (s.name === name) return path;
    if (seen.has(s.name)) continue;
    seen.add(s.name);
    for (const key of Object.keys(s.fields)) {
      if (key === 'stages') continue;
      const f = fieldAt(s, key, release);
      if (!f) continue;
      let t: ValueType = f.type;
      const p: (string | number)[] = [...path, key];
      for (;;) {
        if (t.kind === 'list') (p.push(0), (t = t.item));
        else break;
      }
      if (t.kind === 'section') queue.push({ s: t.section, path: p });
    }
  }
  return undefined;
}

/** YAML that sets `path` to `value` (a scalar written as is), after `mode: both`; its last line holds the value. */
function yamlAt(path: (string | number)[], value: string): string {
  const lines = ['mode: both'];
  let indent = '';
  let item = false;
  path.forEach((k, i) => {
    const last = i === path.length - 1;
    if (typeof k === 'number') return;
    const next = path[i + 1];
    const prefix = item ? `${indent.slice(2)}- ` : indent;
    item = false;
    if (last) lines.push(`${prefix}${k}: ${value}`);
    else if (typeof next === 'number') {
      lines.push(`${prefix}${k}:`);
      indent += '    ';
      item = true;
    } else {
      lines.push(`${prefix}${k}:`);
      indent += '  ';
    }
  });
  return `${lines.join('\n')}\n`;
}

function domainErrors(text: string, release: Release) {
  const r = checkLoaded(loadConfig(text, { release, env: { BAD: '-16' } }));
  return r.diagnostics
    .filter((d) => d.code === 'TRN024')
    .map((d) => ({
      ...d,
      line: lineColumn(r.loaded.source, d.range[0]).line,
      column: lineColumn(r.loaded.source, d.range[0]).column,
    }));
}

function samples(d: Domain, isInt: boolean): { valid: string[]; invalid: string[] } {
  if (d.oneOf) return { valid: [...d.oneOf], invalid: [`${d.oneOf[0]}x`] };
  const valid: string[] = [];
  const invalid: string[] = [];
  const step = isInt ? 1 : 0.5;
  if (d.min !== undefined) {
    valid.push(String(d.minExclusive ? d.min + (isInt ? 1 : 0.001) : d.min));
    invalid.push(String(d.minExclusive ? d.min : d.min - step));
    if (d.except?.includes(d.min - step)) invalid.pop();
    if (!isInt || d.min - 2 >= -1000) invalid.push(String(d.min - 2 * step - (d.except?.length ? 5 : 0)));
  }
  if (d.max !== undefined) {
    valid.push(String(d.maxExclusive ? d.max - 0.001 : d.max));
    invalid.push(String(d.maxExclusive ? d.max : d.max + step));
  }
  for (const e of d.except ?? []) valid.push(String(e));
  return { valid, invalid: invalid.filter((v) => !(d.except ?? []).includes(Number(v))) };
}

describe('value domains', () => {
  for (const key of Object.keys(DOMAINS)) {
    const [section, field] = key.split('.');
    test(key, () => {
      let checked = 0;
      for (const release of RELEASES) {
        const path = pathTo(section, release);
        if (!path) continue;
        const f = (() => {
          // the field as resolved at this release, through the section found on the path
          let s: SectionDef = ROOT_SECTION;
          for (const k of path) {
            if (typeof k === 'number') continue;
            let t: ValueType = fieldAt(s, k, release)!.type;
            while (t.kind === 'list' || t.kind === 'map') t = t.kind === 'list' ? t.item : t.value;
            if (t.kind === 'section') s = t.section;
          }
          return fieldAt(s, field, release);
        })();
        if (!f?.domain) continue;
        const full = [...path, field];
        const { valid, invalid } = samples(f.domain, f.type.kind === 'int');
        for (const v of valid) {
          const errs = domainErrors(yamlAt(full, v), release);
          assert.deepEqual(
            errs.map((e) => e.message),
            [],
            `${release} ${full.join('.')}: ${v} is allowed (${describeDomain(f.domain)})`,
          );
        }
        for (const v of invalid) {
          const text = yamlAt(full, v);
          const errs = domainErrors(text, release);
          assert.equal(
            errs.length,
            1,
            `${release} ${full.join('.')}: ${v} is outside ${describeDomain(f.domain)}\n${text}`,
          );
          assert.equal(errs[0].line, text.trimEnd().split('\n').length, "at the value's line");
          assert.equal(errs[0].severity, f.domain.severity);
          assert.ok(errs[0].message.includes(describeDomain(f.domain)), errs[0].message);
        }
        checked++;
      }
      assert.ok(checked > 0, `${key} was checked in some release`);
    });
  }

  test('there are dozens of domains', () =>
    assert.ok(Object.keys(DOMAINS).length >= 50, `${Object.keys(DOMAINS).length}`));

  test("the issue's examples on main: batch_size -16, rollout_args temperature -0.5, storage_type quue", () => {
    const text = `mode: both
buffer:
  batch_size: -16
  explorer_input:
    taskset:
      storage_type: quue
      rollout_args:
        temperature: -0.5
`;
    const errs = domainErrors(text, 'main');
    assert.deepEqual(
      errs.map((e) => [e.line, e.severity]),
      [
        [3, 'error'],
        [6, 'error'],
        [8, 'error'],
      ],
    );
    assert.match(errs[0].message, /must be ≥ 1/);
    assert.match(errs[1].message, /one of `file`, `queue`, `sql`.*Did you mean `queue`\?/);
    assert.equal(errs[1].data?.suggestion, 'queue');
    assert.match(errs[2].message, /temperature must be non-negative/);
    // v0.3.2 still has StorageType as an Enum: the enum check (TRN022) reports it, not a domain
    assert.deepEqual(
      domainErrors(text, 'v0.3.2').map((e) => e.line),
      [3, 8],
    );
  });

  test('a value through ${...} is checked after resolution, at the ${', () => {
    const plain = 'mode: both\nbuffer:\n  batch_size: ${oc.env:BAD}\n';
    const errs = domainErrors(plain, 'main');
    assert.equal(errs.length, 1);
    assert.equal(errs[0].line, 3);
    assert.equal(errs[0].column, plain.split('\n')[2].indexOf('${') + 1);
    assert.match(errs[0].message, /-16 \(resolved from `\$\{oc\.env:BAD\}`\)/);
  });

  test('the JSON Schema carries the bounds and closed sets', () => {
    const s = generateSchema('main') as any;
    const defs = s.definitions;
    const batch = defs.BufferConfig.properties.batch_size.anyOf[0];
    assert.equal(batch.minimum, 1);
    const topP = JSON.stringify(defs.GenerationConfig.properties.top_p);
    assert.match(topP, /"exclusiveMinimum":0/);
    assert.match(topP, /"maximum":1/);
    assert.match(JSON.stringify(defs.GenerationConfig.properties.top_k), /"enum":\[-1,0\]/);
    assert.deepEqual(defs.TasksetConfig.properties.storage_type.anyOf[0].enum.includes('quue'), false);
    assert.match(defs.BufferConfig.properties.batch_size.markdownDescription, /Allowed: ≥ 1/);
    // a value that may reach either engine gets the bounds both admit
    const join = (a: Omit<Domain, 'severity' | 'source'>, b: Omit<Domain, 'severity' | 'source'>) => {
      const {
        severity: _s,
        source: _src,
        ...bounds
      } = joinDomains({ ...a, severity: 'error', source: 'a' }, { ...b, severity: 'error', source: 'b' });
      return bounds;
    };
    assert.deepEqual(join({ min: 1, except: [-1, 0] }, { min: 1, except: [-1] }), { min: 1, except: [-1, 0] });
    assert.deepEqual(join({ min: 1 }, { min: 0 }), { min: 0 });
    assert.deepEqual(join({ min: 0, minExclusive: true }, { min: 0, minExclusive: true, max: 2 }), {
      min: 0,
      minExclusive: true,
    });
    assert.deepEqual(join({ min: 0, minExclusive: true }, { min: 0 }), { min: 0 });
    assert.deepEqual(join({ min: 2, except: [0] }, { min: -1 }), { min: -1 });
    // hover names SGLang's own bounds where a model can run on it (main only)
    assert.match(defs.ModelConfig.properties.top_k.markdownDescription, /With an SGLang engine .*: -1 or ≥ 1/);
    const old = (generateSchema('v0.5.2') as any).definitions.ModelConfig.properties.top_k.markdownDescription;
    assert.doesNotMatch(old, /SGLang/);
  });
});

describe('domains corrected against their sources (issue 15 spot-check)', () => {
  const at = (yaml: string) => domainErrors(yaml, 'main').map((d) => [d.severity, d.line]);

  test('over_rollout.ratio: only a positive ratio is checked (< 1); a negative one is read as off', () => {
    assert.deepEqual(at('mode: both\nexplorer:\n  over_rollout:\n    ratio: -0.5\n'), []);
    assert.deepEqual(at('mode: both\nexplorer:\n  over_rollout:\n    ratio: 1.0\n'), [['error', 4]]);
  });

  test('logprobs: vLLM allows at most 20 (max_logprobs, which Trinity never raises); -1 means the whole vocabulary, past it', () => {
    const on = (yaml: string, release: Release) => domainErrors(yaml, release).map((d) => [d.severity, d.line]);
    for (const key of ['model:\n  logprobs', 'explorer:\n  rollout_model:\n    logprobs']) {
      const line = key.split('\n').length + 1;
      assert.deepEqual(on(`mode: both\n${key}: 20\n`, 'v0.5.2'), [], key);
      assert.deepEqual(on(`mode: both\n${key}: 21\n`, 'v0.5.2'), [['error', line]], key);
      assert.deepEqual(on(`mode: both\n${key}: -1\n`, 'v0.5.2'), [['error', line]], key);
      // main's extra_engine_args may raise vLLM's max_logprobs, which this check does not read: a warning there
      assert.deepEqual(on(`mode: both\n${key}: 21\n`, 'main'), [['warning', line]], key);
      assert.deepEqual(on(`mode: both\n${key}: 0\n`, 'main'), [], key);
    }
    const taskset =
      'mode: both\nbuffer:\n  explorer_input:\n    taskset:\n      path: x\n      rollout_args:\n        logprobs: 32\n';
    assert.deepEqual(on(taskset, 'v0.5.2'), [['error', 7]]);
  });

  test('LR schedules: Megatron takes linear and the rest of its own; FSDP only constant and cosine (TRN270 at the key)', () => {
    const found = (yaml: string, release: Release) => {
      const r = checkLoaded(loadConfig(yaml, { release }));
      return r.diagnostics
        .filter((d) => d.code === 'TRN270' || d.code === 'TRN024')
        .map((d) => [d.code, d.severity, lineColumn(r.loaded.source, d.range[0]).line]);
    };
    const cfg = (strategy: string, style: string) =>
      `mode: train\nalgorithm:\n  algorithm_type: sft\n  optimizer:\n    lr_scheduler_type: ${style}\ntrainer:\n  trainer_strategy: ${strategy}\n`;
    for (const release of ['v0.5.0', 'v0.5.2', 'main'] as const) {
      assert.deepEqual(found(cfg('megatron', 'linear'), release), [], release);
      assert.deepEqual(found(cfg('megatron', 'inverse-square-root'), release), [], release);
      assert.deepEqual(found(cfg('fsdp2', 'cosine'), release), [], release);
      assert.deepEqual(found(cfg('fsdp2', 'linear'), release), [['TRN270', 'error', 5]], release);
      assert.deepEqual(found(cfg('fsdp', 'linear'), release), [['TRN270', 'error', 5]], release);
      assert.deepEqual(found(cfg('megatron', 'step'), release), [['TRN024', 'error', 5]], release);
    }
    // v0.4.0 names the schedule warmup_style; before v0.4.0 the strategy comes from the veRL actor config
    const old = 'mode: train\nalgorithm:\n  algorithm_type: sft\n  optimizer:\n    warmup_style: linear\n';
    assert.deepEqual(found(`${old}trainer:\n  trainer_strategy: fsdp\n`, 'v0.4.0'), [['TRN270', 'error', 5]]);
    assert.deepEqual(found(`${old}trainer:\n  trainer_strategy: megatron\n`, 'v0.4.0'), []);
  });

  test('log.level: any logging level name in any case, WARN, FATAL and NOTSET included; other names error', () => {
    for (const lvl of ['warn', 'FATAL', 'NotSet', 'critical', 'DEBUG'])
      assert.deepEqual(at(`mode: both\nlog:\n  level: ${lvl}\n`), [], lvl);
    assert.deepEqual(at('mode: both\nlog:\n  level: VERBOSE\n'), [['error', 3]]);
  });

  test('lora_rank below 1: PEFT raises building the dummy adapter Trinity makes at its check', () => {
    const yaml = 'mode: both\nmodel:\n  lora_configs:\n  - lora_rank: 0\n';
    assert.deepEqual(at(yaml), [['error', 4]]);
    assert.deepEqual(at(yaml.replace('lora_rank: 0', 'lora_rank: 1')), []);
  });

  test('rope_theta of 0 or less gives infinite or NaN frequencies but raises nothing: a warning', () => {
    assert.deepEqual(at('mode: both\nmodel:\n  rope_theta: 0\n'), [['warning', 3]]);
    assert.deepEqual(at('mode: both\nmodel:\n  rope_theta: 0.5\n'), []);
  });

  test('ulysses_sequence_parallel_size below 1: veRL divides by it (error) until Trinity resets it to 1 (v0.5.2: warning)', () => {
    const yaml = 'mode: both\ntrainer:\n  ulysses_sequence_parallel_size: 0\n';
    const at = (release: Release) => domainErrors(yaml, release).map((d) => [d.severity, d.line]);
    assert.deepEqual(at('v0.5.0'), [['error', 3]]);
    assert.deepEqual(at('v0.5.2'), [['warning', 3]]);
    assert.deepEqual(at('main'), [['warning', 3]]);
  });

  test('max_checkpoints_to_keep 0 keeps all (no finding); a negative count is read the same way (warning)', () => {
    assert.deepEqual(at('mode: both\ntrainer:\n  max_checkpoints_to_keep: 0\n'), []);
    assert.deepEqual(at('mode: both\ntrainer:\n  max_checkpoints_to_keep: -1\n'), [['warning', 3]]);
  });

  test('save_interval below 0 is read as 0, "only at the end": a warning, not an error', () => {
    assert.deepEqual(at('mode: both\ntrainer:\n  save_interval: -5\n'), [['warning', 3]]);
  });

  test('storage_type is compared as written since v0.4.0: `QUEUE` is not `queue`', () => {
    const yaml = 'mode: both\nbuffer:\n  trainer_input:\n    experience_buffer:\n      storage_type: QUEUE\n';
    assert.deepEqual(at(yaml), [['error', 5]]);
    assert.deepEqual(at(yaml.replace('QUEUE', 'queue')), []);
  });

  test('min_lr_ratio out of [0, 1] warns: only the cosine schedule asserts on it', () => {
    const yaml = 'mode: both\nalgorithm:\n  optimizer:\n    min_lr_ratio: 1.5\n';
    assert.deepEqual(at(yaml), [['warning', 4]]);
  });
});

describe('domains that depend on more than the value', () => {
  const on = (yaml: string, release: Release = 'main') => domainErrors(yaml, release).map((d) => [d.severity, d.line]);

  test('max_cpu_loras has no domain: Trinity never passes it to vLLM, with LoRA or without', () => {
    assert.equal(DOMAINS['ModelConfig.max_cpu_loras'], undefined);
    for (const release of ['v0.3.1', 'v0.4.0', 'v0.5.2', 'main'] as const) {
      assert.deepEqual(on('mode: both\nmodel:\n  max_cpu_loras: 0\n', release), [], release);
      const lora = 'mode: both\nmodel:\n  max_cpu_loras: 0\n  lora_configs:\n  - lora_rank: 8\n';
      assert.deepEqual(on(lora, release), [], release);
    }
  });

  const SGLANG = 'explorer:\n  rollout_model:\n    engine_type: sglang\n';

  test('top_k 0 on an SGLang engine (main): SGLang raises where newer vLLM reads 0 as disabled', () => {
    assert.deepEqual(on('mode: both\nmodel:\n  top_k: 0\n'), []);
    assert.deepEqual(on(`mode: both\nmodel:\n  top_k: 0\n${SGLANG}`), [['error', 3]]);
    assert.match(domainErrors(`mode: both\nmodel:\n  top_k: 0\n${SGLANG}`, 'main')[0].message, /SGLang/);
    assert.deepEqual(on(`mode: both\nmodel:\n  top_k: -1\n${SGLANG}`), []);
    assert.deepEqual(on(`mode: both\nmodel:\n  top_k: 1\n${SGLANG}`), []);
    assert.deepEqual(on(`mode: both\n${SGLANG}    top_k: 0\n`), [['error', 5]]);
    const taskset = `mode: both\n${SGLANG}buffer:\n  explorer_input:\n    taskset:\n      path: x\n      rollout_args:\n        top_k: 0\n`;
    assert.deepEqual(on(taskset), [['error', 10]]);
    // a temperature below 1e-6 is greedy: SGLang sets top_k to 1 before it checks
    assert.deepEqual(on(`mode: both\nmodel:\n  top_k: 0\n  temperature: 0\n${SGLANG}`), []);
    assert.deepEqual(on(taskset.replace('top_k: 0', 'top_k: 0\n        temperature: 0.0')), []);
    // an auxiliary SGLang engine gets model.top_k unless it sets its own
    const aux = 'explorer:\n  auxiliary_models:\n  - model_path: m\n    engine_type: sglang\n';
    assert.deepEqual(on(`mode: both\nmodel:\n  top_k: 0\n${aux}`), [['error', 3]]);
    assert.deepEqual(on(`mode: both\nmodel:\n  top_k: 0\n${aux}    top_k: -1\n`), []);
    // before main there is no SGLang engine
    assert.deepEqual(on(`mode: both\nmodel:\n  top_k: 0\n${SGLANG}`, 'v0.5.2'), []);
  });

  test('repetition_penalty above 2 on an SGLang engine (main): SGLang raises, vLLM has no upper bound', () => {
    assert.deepEqual(on('mode: both\nmodel:\n  repetition_penalty: 2.5\n'), []);
    assert.deepEqual(on(`mode: both\nmodel:\n  repetition_penalty: 2.5\n${SGLANG}`), [['error', 3]]);
    assert.deepEqual(on(`mode: both\nmodel:\n  repetition_penalty: 2\n${SGLANG}`), []);
    assert.deepEqual(on(`mode: both\nmodel:\n  repetition_penalty: 0\n${SGLANG}`), [['error', 3]]);
    assert.deepEqual(on(`mode: both\n${SGLANG}    repetition_penalty: 3.0\n`), [['error', 5]]);
    // a vLLM rollout model beside an SGLang auxiliary one: the value reaches both and meets both bounds
    const mixed = 'explorer:\n  auxiliary_models:\n  - model_path: m\n    engine_type: sglang\n';
    assert.deepEqual(on(`mode: both\nmodel:\n  repetition_penalty: 2.5\n${mixed}`), [['error', 3]]);
    assert.deepEqual(on(`mode: both\nmodel:\n  repetition_penalty: -1\n${mixed}`), [['error', 3]]);
  });

  test("logprobs on an SGLang engine (main): Trinity asks only whether to return log-probs, so vLLM's 20 does not apply", () => {
    assert.deepEqual(on('mode: both\nmodel:\n  logprobs: 32\n'), [['warning', 3]]);
    assert.deepEqual(on(`mode: both\nmodel:\n  logprobs: 32\n${SGLANG}`), []);
    assert.deepEqual(on(`mode: both\n${SGLANG}    logprobs: 32\n`), []);
  });

  test('max_tokens 0 on an SGLang engine (main): SGLang asks only max_new_tokens >= 0; vLLM wants at least 1', () => {
    assert.deepEqual(on('mode: both\nmodel:\n  max_response_tokens: 0\n'), [['error', 3]]);
    assert.deepEqual(on(`mode: both\nmodel:\n  max_response_tokens: 0\n${SGLANG}`), []);
    assert.deepEqual(on(`mode: both\nmodel:\n  max_response_tokens: -1\n${SGLANG}`), [['error', 3]]);
    assert.match(domainErrors(`mode: both\nmodel:\n  max_response_tokens: -1\n${SGLANG}`, 'main')[0].message, /≥ 0/);
    const taskset = `mode: both\n${SGLANG}buffer:\n  explorer_input:\n    taskset:\n      path: x\n      rollout_args:\n        max_tokens: 0\n`;
    assert.deepEqual(on(taskset), []);
    assert.deepEqual(on(taskset.replace('engine_type: sglang', 'engine_type: vllm')), [['error', 10]]);
    assert.deepEqual(on(`mode: both\nmodel:\n  max_response_tokens: 0\n${SGLANG}`, 'v0.5.2'), [['error', 3]]);
  });

  test('inside stages, a value meets the bounds of the engines the stage runs with', () => {
    const stage = (body: string) => `mode: both\nstages:\n- stage_name: a\n${body}`;
    // the stage's own explorer replaces the root's whole: its engine type decides
    const own = stage('  explorer:\n    rollout_model:\n      engine_type: sglang\n      top_k: 0\n');
    assert.deepEqual(on(own), [['error', 7]]);
    assert.deepEqual(on(own.replace('engine_type: sglang', 'engine_type: vllm')), []);
    assert.deepEqual(on(`${SGLANG}${stage('  explorer:\n    rollout_model:\n      top_k: 0\n')}`), []);
    // a stage's rollout_args go to the stage's explorer, else to the root's
    const args =
      '  buffer:\n    explorer_input:\n      taskset:\n        path: x\n        rollout_args:\n          top_k: 0\n';
    assert.deepEqual(on(`${SGLANG}${stage(args)}`), [['error', 12]]);
    assert.deepEqual(on(stage(args)), []);
    // a root default reaches every stage's engines: here the second stage's SGLang one
    const second = '- stage_name: b\n  explorer:\n    rollout_model:\n      engine_type: sglang\n';
    assert.deepEqual(on(`model:\n  top_k: 0\n${stage('  mode: both\n')}${second}`), [['error', 2]]);
    assert.deepEqual(on(`model:\n  top_k: 0\n${stage('  mode: both\n')}`), []);
    // root rollout_args that every stage replaces with its own buffer reach no engine: vLLM's bounds stay
    assert.deepEqual(
      on(
        `${SGLANG}buffer:\n  explorer_input:\n    taskset:\n      path: x\n      rollout_args:\n        top_k: 0\n${stage(args.replace('top_k: 0', 'top_k: 1'))}`,
      ),
      [],
    );
  });
});
