/** The loader: YAML as OmegaConf reads it, the structured merge, conversions, ranges and release selection. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadConfig, nodeAt, rangeForPath } from '../../../runtime/config/load/load-config';
import { checkConfig, checkLoaded, valueSource } from '../../../runtime/config/check-config';

const at = (text: string, offset: number) => text.slice(0, offset).split('\n').length;

function codes(text: string, release: 'main' | 'v0.3.1' | 'v0.4.0' = 'main', env: Record<string, string> = {}) {
  return loadConfig(text, { release, env }).diagnostics.map((d) => `${at(text, d.range[0])}:${d.code}`);
}

describe('YAML as Trinity reads it', () => {
  test('OmegaConf reads 1e-5 as a float, and y/n stay strings', () => {
    const c = loadConfig('algorithm:\n  optimizer:\n    lr: 1e-5\nproject: y\n', { release: 'main' });
    assert.deepEqual(c.diagnostics, []);
    assert.equal((c.value.algorithm as any).optimizer.lr, 0.00001);
    assert.equal(c.value.project, 'y');
  });

  test('yes/no/on/off are booleans (YAML 1.1), so `yes` in an int field is a type error', () => {
    const c = loadConfig('continue_from_checkpoint: no\nbuffer:\n  batch_size: yes\n', { release: 'main' });
    assert.equal(c.value.continue_from_checkpoint, false);
    assert.deepEqual(
      c.diagnostics.map((d) => d.code),
      ['TRN020'],
    );
  });

  test('strings convert as OmegaConf converts them: "8" -> 8, "true" -> true, 8 -> "8"', () => {
    const c = loadConfig('buffer:\n  batch_size: "8"\ncontinue_from_checkpoint: "true"\nname: 8\n', {
      release: 'main',
    });
    assert.deepEqual(c.diagnostics, []);
    assert.equal((c.value.buffer as any).batch_size, 8);
    assert.equal(c.value.continue_from_checkpoint, true);
    assert.equal(c.value.name, '8');
  });

  test('enum names are case-insensitive; aliases exist from v0.5.0 only', () => {
    const text = 'synchronizer:\n  sync_method: CHECKPOINT\n  sync_style: dynamic_by_explorer\n';
    const main = loadConfig(text, { release: 'main' });
    assert.deepEqual(main.diagnostics, []);
    assert.equal((main.value.synchronizer as any).sync_method, 'checkpoint');
    assert.equal((main.value.synchronizer as any).sync_style, 'explorer_driven');
    assert.deepEqual(
      loadConfig('synchronizer:\n  sync_method: offline\n', { release: 'v0.4.0' }).diagnostics.map((d) => d.code),
      ['TRN022'],
    );
  });

  test('null is refused where the field is not Optional, accepted where it is', () => {
    assert.deepEqual(codes('buffer:\n  batch_size: null\n'), ['2:TRN021']);
    assert.deepEqual(codes('model:\n  max_model_len: null\n'), []);
  });

  test('duplicate keys and syntax errors are reported at their line', () => {
    assert.deepEqual(codes('mode: both\nmode: train\n'), ['2:TRN002']);
    assert.ok(codes('mode: [both\n').some((c) => c.endsWith('TRN001')));
  });

  test('anchors and merge keys expand like PyYAML', () => {
    const c = loadConfig(
      'base: &b\n  temperature: 0.7\nbuffer:\n  explorer_input:\n    taskset:\n      rollout_args:\n        <<: *b\n        top_p: 0.9\n',
      { release: 'main' },
    );
    const rollout = (c.value.buffer as any).explorer_input.taskset.rollout_args;
    assert.equal(rollout.temperature, 0.7);
    assert.equal(rollout.top_p, 0.9);
    assert.deepEqual(
      c.diagnostics.map((d) => d.code),
      ['TRN010'],
      'the anchor holder `base` itself is not a Trinity key',
    );
  });

  test('an empty file and a non-mapping document are handled', () => {
    assert.deepEqual(codes(''), []);
    assert.deepEqual(codes('- a\n- b\n'), ['1:TRN004']);
  });
});

describe('structured merge', () => {
  test('defaults are applied; the tree holds only what is written', () => {
    const c = loadConfig('mode: train\nbuffer:\n  total_epochs: 2\n', { release: 'main' });
    assert.equal((c.value.buffer as any).batch_size, 1);
    assert.equal((c.value.buffer as any).total_epochs, 2);
    assert.equal((c.value.explorer as any).eval_interval, 100);
    assert.equal((c.value.explorer as any).rollout_model.engine_num, 1);
    assert.equal(nodeAt(c.root, ['buffer', 'batch_size']), undefined);
    assert.equal(nodeAt(c.root, ['buffer', 'total_epochs'])?.origin, 'yaml');
  });

  test('loading twice gives independent values (defaults are copied, not shared)', () => {
    const a = loadConfig('mode: train\n', { release: 'main' });
    (a.value.buffer as any).batch_size = 99;
    (a.value.explorer as any).rollout_model.engine_num = 7;
    const b = loadConfig('mode: train\n', { release: 'main' });
    assert.equal((b.value.buffer as any).batch_size, 1);
    assert.equal((b.value.explorer as any).rollout_model.engine_num, 1);
  });

  test('free-form nodes accept any keys', () => {
    assert.deepEqual(
      codes('buffer:\n  explorer_input:\n    taskset:\n      workflow_args:\n        anything: [1, 2]\n'),
      [],
    );
    assert.deepEqual(codes('trainer:\n  trainer_config:\n    whatever: 1\n'), []);
  });

  test('a key from another release names the releases that have it', () => {
    const c = loadConfig('explorer:\n  runner_per_model: 4\n  api_port: 8000\n', { release: 'main' });
    assert.equal(c.diagnostics[0].code, 'TRN011');
    assert.match(
      c.diagnostics[0].message,
      /not in Trinity main \(it exists in v0\.3\.1–v0\.3\.2\)\. Use `proxy_port` instead\./,
    );
  });

  test('auto-filled keys written by the user are flagged', () => {
    const c = loadConfig('checkpoint_job_dir: /tmp/x\n', { release: 'main' });
    assert.equal(c.diagnostics[0].code, 'TRN013');
  });

  test('ranges point at the key the user wrote', () => {
    const text = 'project: p\nbuffer:\n  batch_size: 4\n';
    const c = loadConfig(text, { release: 'main' });
    const r = rangeForPath(c.root, ['buffer', 'batch_size']);
    assert.equal(text.slice(r[0], r[1]), 'batch_size');
    const missing = rangeForPath(c.root, ['buffer', 'explorer_input', 'taskset', 'path']);
    assert.equal(text.slice(missing[0], missing[1]), 'buffer', 'falls back to the nearest written ancestor');
  });
});

describe('interpolation in configs', () => {
  test('resolves env vars, defaults and node references with the target type', () => {
    const text =
      'name: run_${buffer.batch_size}\nbuffer:\n  batch_size: ${oc.env:BS,16}\n  train_batch_size: ${buffer.batch_size}\nmodel:\n  model_path: ${oc.env:MODEL}\n';
    const c = loadConfig(text, { release: 'main', env: { MODEL: '/models/qwen' } });
    assert.deepEqual(c.diagnostics, []);
    assert.equal(c.value.name, 'run_16');
    assert.equal((c.value.buffer as any).batch_size, 16);
    assert.equal((c.value.buffer as any).train_batch_size, 16);
    assert.equal((c.value.model as any).model_path, '/models/qwen');
  });

  test('an env value that does not convert to the field type is an error at the interpolation', () => {
    const text = 'buffer:\n  batch_size: ${oc.env:BS}\n';
    const c = loadConfig(text, { release: 'main', env: { BS: 'many' } });
    assert.equal(c.diagnostics[0].code, 'TRN106');
    assert.equal(text.slice(c.diagnostics[0].range[0], c.diagnostics[0].range[1]), '${oc.env:BS}');
  });

  test('the missing reference is underlined, not the whole value', () => {
    const text = 'name: a_${oc.env:NOPE}_${project}\n';
    const c = loadConfig(text, { release: 'main' });
    assert.equal(c.diagnostics.length, 1);
    assert.equal(text.slice(c.diagnostics[0].range[0], c.diagnostics[0].range[1]), '${oc.env:NOPE}');
  });

  test('references into typed sections see schema defaults (and null)', () => {
    const c = loadConfig('name: r${explorer.eval_interval}\n', { release: 'main' });
    assert.equal(c.value.name, 'r100');
  });
});

describe('release selection', () => {
  test('a `# trinity-version:` comment selects the release', () => {
    const c = loadConfig('# trinity-version: 0.4.0\nmode: both\n');
    assert.equal(c.release, 'v0.4.0');
    assert.equal(c.releaseFrom, 'comment');
  });

  test('an explicit release wins over the comment', () => {
    assert.equal(loadConfig('# trinity-version: 0.4.0\n', { release: 'v0.3.1' }).release, 'v0.3.1');
  });

  test('an unknown release in the comment is reported and the newest is used', () => {
    const c = loadConfig('# trinity-version: banana\n');
    assert.equal(c.release, 'main');
    assert.equal(c.diagnostics[0].code, 'TRN030');
  });
});

describe('stages', () => {
  test('each stage replaces whole sections and is checked on its own', async () => {
    const text = [
      'project: p',
      'name: n',
      'model:',
      '  model_path: m',
      '  max_model_len: 1024',
      'buffer:',
      '  batch_size: 4',
      '  explorer_input:',
      '    taskset:',
      '      path: tasks.jsonl',
      'algorithm:',
      '  algorithm_type: grpo',
      '  repeat_times: 4',
      'stages:',
      '  - stage_name: warmup',
      '    mode: train',
      '    algorithm:',
      '      algorithm_type: sft',
      '    buffer:',
      '      total_epochs: 1',
      '  - stage_name: rl',
      '',
    ].join('\n');
    const r = await checkConfig(text, { release: 'main', datasets: false });
    assert.equal(r.runs.length, 2);
    assert.equal(r.runs[0].resolved.name, 'n/warmup');
    assert.equal(r.runs[0].resolved.algorithm.algorithm_type, 'sft');
    assert.equal(r.runs[1].resolved.algorithm.algorithm_type, 'grpo');
    // The SFT stage's buffer replaced the root's: no train_batch_size there, which Trinity requires for SFT.
    const sftError = r.diagnostics.find((d) => d.code === 'TRN254');
    assert.ok(sftError, 'stage buffer lacks train_batch_size');
    assert.match(sftError.message, /^\[stage warmup\]/);
    assert.equal(at(text, sftError.range[0]), 19, 'reported at the stage buffer that replaced the root one');
  });

  test('a stage that trains nothing fails the checkpoint hand-over; save_hf_checkpoint is forced to last', async () => {
    const text = [
      'model:',
      '  model_path: m',
      '  max_model_len: 256',
      'buffer:',
      '  batch_size: 2',
      '  explorer_input:',
      '    taskset:',
      '      path: openai/gsm8k',
      'stages:',
      '  - stage_name: rl',
      '    trainer:',
      '      save_hf_checkpoint: never',
      '  - stage_name: eval',
      '    mode: bench',
      '',
    ].join('\n');
    const r = await checkConfig(text, { release: 'main', datasets: false });
    const forced = r.diagnostics.find((d) => d.code === 'TRN280' && d.severity === 'warning');
    assert.ok(forced, JSON.stringify(r.diagnostics.map((d) => d.message)));
    assert.equal(at(text, forced.range[0]), 12);
    assert.equal(r.runs[0].resolved.trainer.save_hf_checkpoint, 'last');
    const handover = r.diagnostics.find((d) => d.code === 'TRN280' && d.severity === 'error');
    assert.ok(handover);
    assert.equal(at(text, handover.range[0]), 14);
    assert.match(handover.message, /^\[stage eval\] .*`bench` stage trains nothing.*No huggingface checkpoint found/);
  });

  test('a stage without stage_name is an error', () => {
    const c = loadConfig('stages:\n  - mode: train\n', { release: 'main' });
    assert.deepEqual(
      c.diagnostics.map((d) => d.code),
      ['TRN023'],
    );
  });
});

test('checkLoaded runs without any I/O host', () => {
  const r = checkLoaded(
    loadConfig('mode: explore\nbuffer:\n  explorer_input:\n    taskset:\n      path: ./nowhere.jsonl\n', {
      release: 'main',
    }),
  );
  assert.ok(!r.diagnostics.some((d) => d.code === 'TRN304'), 'no exists() given: no path checks');
});

describe('where each value comes from', () => {
  const text =
    'mode: both\nalgorithm:\n  algorithm_type: grpo\n  repeat_times: 4\nmodel:\n  model_path: m\n  max_model_len: 512\nbuffer:\n  batch_size: 8\n  explorer_input:\n    taskset:\n      path: openai/gsm8k\n';
  const r = checkLoaded(loadConfig(text, { release: 'main' }));

  test('a written value points at its text', () => {
    const s = valueSource(r, 'buffer.batch_size');
    assert.equal(s?.origin, 'written');
    assert.equal(s?.value, 8);
    assert.equal(text.slice(s!.range[0], s!.range[1]), '8');
  });

  test('a value Trinity derives names how, and points at the key that drives it', () => {
    const s = valueSource(r, 'buffer.train_batch_size');
    assert.equal(s?.origin, 'derived');
    assert.equal(s?.value, 32);
    assert.match(s!.derivation!.message, /8 × 4 = 32/);
    assert.equal(text.slice(s!.range[0], s!.range[1]), 'batch_size');
  });

  test('algorithm defaults and length splits are derived too', () => {
    assert.equal(valueSource(r, 'algorithm.advantage_fn')?.value, 'grpo');
    assert.equal(valueSource(r, 'algorithm.advantage_fn')?.origin, 'derived');
    assert.equal(valueSource(r, 'model.max_prompt_tokens')?.value, 256);
    assert.equal(valueSource(r, 'model.max_response_tokens')?.value, 256);
  });

  test('in a multi-stage file each stage points at its own driving key', () => {
    const staged =
      'mode: both\nalgorithm:\n  algorithm_type: grpo\n  repeat_times: 4\nmodel:\n  model_path: m\n  max_model_len: 512\nstages:\n  - stage_name: a\n    buffer:\n      batch_size: 8\n      explorer_input:\n        taskset:\n          path: openai/gsm8k\n  - stage_name: b\n    buffer:\n      batch_size: 2\n      explorer_input:\n        taskset:\n          path: openai/gsm8k\n';
    const rs = checkLoaded(loadConfig(staged, { release: 'main' }));
    const lineOf = (offset: number) => staged.slice(0, offset).split('\n').length;
    const [a, b] = [valueSource(rs, 'buffer.train_batch_size', 0), valueSource(rs, 'buffer.train_batch_size', 1)];
    assert.deepEqual([a?.value, b?.value], [32, 8]);
    assert.deepEqual([lineOf(a!.range[0]), lineOf(b!.range[0])], [11, 17]);
  });

  test('an untouched default is marked as such', () => {
    const s = valueSource(r, 'explorer.max_timeout');
    assert.equal(s?.origin, 'default');
    assert.equal(s?.value, 1800);
  });
});
