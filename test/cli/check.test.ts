/** `trinity-workbench check` through the bundled dist/cli.js, as a user runs it: output formats and exit codes. */
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { runNodeChild } from '../helpers/node-child';

const CLI = resolve(__dirname, '..', '..', 'dist', 'cli.js');

/** dist/cli.js with `args`; asynchronous, so that two of the describe's tests run at once (each waits on its CLI). */
function run(args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}) {
  return runNodeChild([CLI, ...args], { cwd: opts.cwd, env: { PATH: process.env.PATH ?? '', ...opts.env } });
}

function workspace(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'tw-cli-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

const GOOD = `# trinity-version: 0.5.2
mode: train
algorithm:
  algorithm_type: sft
model:
  model_path: m
  max_model_len: 512
cluster:
  node_num: 1
  gpu_per_node: 2
buffer:
  train_batch_size: 8
  trainer_input:
    experience_buffer:
      storage_type: file
      path: data/sft.jsonl
      format:
        messages_key: messages
trainer:
  save_interval: 10
`;

const SFT_ROW = `${JSON.stringify({
  messages: [
    { role: 'user', content: 'hi' },
    { role: 'assistant', content: 'hello' },
  ],
})}\n`;

describe('trinity-workbench check', { concurrency: 2 }, () => {
  test('a clean file prints no problems and exits 0', async () => {
    const dir = workspace({ 'good.yaml': GOOD, 'data/sft.jsonl': SFT_ROW });
    const r = await run(['check', 'good.yaml'], { cwd: dir });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.doesNotMatch(r.stdout, / error /);
    assert.match(r.stderr, /1 file checked: 0 error\(s\)/);
  });

  test('errors print as file:line:col severity code message and exit 1', async () => {
    const dir = workspace({
      'bad.yaml': GOOD.replace('  train_batch_size: 8', '  train_batch_sise: 8'),
      'data/sft.jsonl': SFT_ROW,
    });
    const r = await run(['check', 'bad.yaml'], { cwd: dir });
    assert.equal(r.code, 1);
    const lines = r.stdout.trim().split('\n');
    assert.ok(
      lines.includes(
        'bad.yaml:12:3 error TRN010 Unknown key `train_batch_sise` under `buffer` (BufferConfig). Did you mean `train_batch_size`?',
      ),
      r.stdout,
    );
    for (const l of lines) assert.match(l, /^bad\.yaml:\d+:\d+ (error|warning|information|hint) TRN\d{3} .+/);
  });

  test('# trinity-disable-next-line silences the codes it names on the next line, as the editor does', async () => {
    const bad = GOOD.replace('  train_batch_size: 8', '  train_batch_size: 8\n  train_batch_sise: 8');
    const dir = workspace({
      'named.yaml': bad.replace('  train_batch_sise', '  # trinity-disable-next-line TRN010\n  train_batch_sise'),
      'all.yaml': bad.replace('  train_batch_sise', '  # trinity-disable-next-line\n  train_batch_sise'),
      'other.yaml': bad.replace('  train_batch_sise', '  # trinity-disable-next-line TRN011\n  train_batch_sise'),
      'above.yaml': bad.replace('buffer:', '# trinity-disable-next-line TRN010\nmodel_x: 1\nbuffer:'),
      'data/sft.jsonl': SFT_ROW,
    });
    for (const file of ['named.yaml', 'all.yaml']) {
      const r = await run(['check', file], { cwd: dir });
      assert.equal(r.code, 0, `${file}: ${r.stdout}${r.stderr}`);
      assert.doesNotMatch(r.stdout, /TRN010/);
      const json = JSON.parse((await run(['check', '--format', 'json', file], { cwd: dir })).stdout) as {
        diagnostics: { code: string }[];
      }[];
      assert.deepEqual(
        json[0].diagnostics.filter((d) => d.code === 'TRN010'),
        [],
        file,
      );
    }
    // Another code, or a comment that is not on the line just above, silences nothing of TRN010.
    const other = await run(['check', 'other.yaml'], { cwd: dir });
    assert.equal(other.code, 1);
    assert.match(other.stdout, /^other\.yaml:14:3 error TRN010 Unknown key `train_batch_sise`/m);
    const above = await run(['check', 'above.yaml'], { cwd: dir });
    assert.equal(above.code, 1);
    assert.match(above.stdout, /^above\.yaml:15:3 error TRN010 Unknown key `train_batch_sise`/m);
    assert.doesNotMatch(above.stdout, /TRN010 Unknown key `model_x`/, 'the comment above model_x silences it');
  });

  test('a serve config bound beyond loopback: TRN263 warning at listen_address', async () => {
    const serve =
      GOOD.replace('mode: train', 'mode: serve').replace('algorithm_type: sft', 'algorithm_type: grpo') +
      'explorer:\n  listen_address: 0.0.0.0\n';
    const dir = workspace({ 'serve.yaml': serve, 'data/sft.jsonl': SFT_ROW });
    const r = await run(['check', 'serve.yaml'], { cwd: dir });
    const line = r.stdout.split('\n').find((l) => l.includes('TRN263'));
    assert.ok(line, r.stdout + r.stderr);
    assert.match(
      line,
      /^serve\.yaml:22:3 warning TRN263 `explorer\.listen_address` `0\.0\.0\.0` exposes .*`\/commit`.*Authorization: Bearer <key>/,
    );
  });

  test('--format json prints exactly the documented shape', async () => {
    const dir = workspace({
      'bad.yaml': GOOD.replace('gpu_per_node: 2', 'gpu_per_node: 3'),
      'data/sft.jsonl': SFT_ROW,
    });
    const r = await run(['check', '--format', 'json', 'bad.yaml'], { cwd: dir });
    assert.equal(r.code, 1);
    const out = JSON.parse(r.stdout);
    assert.equal(out.length, 1);
    assert.deepEqual(Object.keys(out[0]), ['file', 'version', 'diagnostics']);
    assert.equal(out[0].file, 'bad.yaml');
    assert.equal(out[0].version, 'v0.5.2');
    const d = out[0].diagnostics.find((x: { code: string }) => x.code === 'TRN221');
    assert.deepEqual(Object.keys(d), ['line', 'column', 'endLine', 'endColumn', 'severity', 'code', 'message']);
    assert.deepEqual([d.line, d.column, d.endLine, d.endColumn, d.severity], [12, 3, 12, 19, 'error']);
    assert.match(d.message, /The batch size \(8\) must be divisible by the number of GPUs \(3\)/);
  });

  test('--trinity-version overrides the comment; auto reads it', async () => {
    const dir = workspace({ 'f.yaml': '# trinity-version: 0.3.1\nexplorer:\n  proxy_port: 1\n' });
    const auto = JSON.parse((await run(['check', '--format', 'json', 'f.yaml'], { cwd: dir })).stdout);
    assert.equal(auto[0].version, 'v0.3.1');
    assert.ok(
      auto[0].diagnostics.some((d: { code: string }) => d.code === 'TRN011'),
      'proxy_port came in v0.4.0',
    );
    const main = JSON.parse(
      (await run(['check', '--format', 'json', '--trinity-version', 'main', 'f.yaml'], { cwd: dir })).stdout,
    );
    assert.equal(main[0].version, 'main');
    assert.ok(!main[0].diagnostics.some((d: { code: string }) => d.code === 'TRN011'));
  });

  test('${oc.env:...} reads the environment and a .env file in the current directory', async () => {
    const cfg =
      'mode: explore\nmodel:\n  model_path: ${oc.env:MODEL}\n  max_model_len: 64\nbuffer:\n  explorer_input:\n    taskset:\n      path: ${oc.env:TASKS}\n';
    const dir = workspace({ 'c.yaml': cfg, '.env': 'MODEL=/models/x\n# comment\nexport TASKS="openai/gsm8k"\n' });
    const r = await run(['check', '--format', 'json', 'c.yaml'], { cwd: dir });
    const codes = JSON.parse(r.stdout)[0].diagnostics.map((d: { code: string }) => d.code);
    assert.ok(!codes.includes('TRN102'), r.stdout);
    const r2 = await run(['check', 'c.yaml'], { cwd: workspace({ 'c.yaml': cfg }) });
    assert.equal(r2.code, 1);
    assert.match(r2.stdout, /c\.yaml:3:15 error TRN102 .*MODEL/);
  });

  test('--plugin-dir makes names a plugin registers known', async () => {
    const cfg =
      'mode: explore\nmodel:\n  model_path: m\n  max_model_len: 64\nbuffer:\n  explorer_input:\n    taskset:\n      path: openai/gsm8k\n      default_workflow_type: my_workflow\n';
    const plugin = '@WORKFLOWS.register_module("my_workflow")\nclass MyWorkflow(Workflow):\n    pass\n';
    const dir = workspace({ 'c.yaml': cfg, 'plugins/wf.py': plugin });
    assert.equal((await run(['check', 'c.yaml'], { cwd: dir })).code, 1);
    assert.equal((await run(['check', '--plugin-dir', 'plugins', 'c.yaml'], { cwd: dir })).code, 0);
    assert.equal(
      (await run(['check', 'c.yaml'], { cwd: dir, env: { TRINITY_PLUGIN_DIRS: join(dir, 'plugins') } })).code,
      0,
    );
  });

  test('--plugin-dir knows the names a JavaScript runtime plugin exports, read from its text (the shipped plugin example checks clean)', async () => {
    const cfg =
      'mode: explore\nmodel:\n  model_path: m\n  max_model_len: 64\nbuffer:\n  explorer_input:\n    taskset:\n      path: openai/gsm8k\n      default_workflow_type: js_flow\n';
    const plugin = [
      '// workflows: { not_this: 1 }',
      "export const workflows = { js_flow: (ctx) => ({ run: async () => [{ text: 'a, b: c' }] }), ...others };",
      "export const rewards = { 'quoted-reward'(ctx) { return 1; } };",
    ].join('\n');
    const dir = workspace({ 'c.yaml': cfg, 'plugins/wf.mjs': plugin, 'nested/sub/wf.mjs': plugin });
    const without = await run(['check', 'c.yaml'], { cwd: dir });
    assert.equal(without.code, 1);
    assert.match(without.stdout, /TRN307/);
    assert.equal((await run(['check', '--plugin-dir', 'plugins', 'c.yaml'], { cwd: dir })).code, 0);
    // Only files directly in a plugin directory load at run time, so only they count.
    assert.equal((await run(['check', '--plugin-dir', 'nested', 'c.yaml'], { cwd: dir })).code, 1);
    const example = resolve('examples', 'agents-plugin');
    const r = await run(['check', '--plugin-dir', 'plugins', 'step-wise-lake.trinity.yaml'], { cwd: example });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.doesNotMatch(r.stdout, /TRN307/);
    // Its workflow reads its own row keys (size, p, seed), never ctx.task.taskDesc / truth: no prompt or answer
    // column is asked for. The same rows under a workflow that reads ctx.task.taskDesc still get the warning.
    assert.doesNotMatch(r.stdout, /TRN305/);
    const reader = workspace({
      'plugins/reader.mjs':
        'export const workflows = { step_wise_lake: (ctx) => ({ run: async () => ctx.task.taskDesc }) };',
    });
    const withReader = await run(['check', '--plugin-dir', join(reader, 'plugins'), 'step-wise-lake.trinity.yaml'], {
      cwd: example,
    });
    assert.match(
      withReader.stdout,
      /warning TRN305 .*prompt_key` is `prompt`.*empty prompt if `step_wise_lake` reads it/,
    );
    assert.doesNotMatch(withReader.stdout, /TRN305 .*response_key/);
  });

  test("a plugin's workflowReads: the example checks with no warning; declared columns and workflow_args are checked, taskDesc: true asks for the prompt column", async () => {
    const example = resolve('examples', 'agents-plugin');
    const clean = await run(['check', '--plugin-dir', 'plugins', 'step-wise-lake.trinity.yaml'], { cwd: example });
    assert.equal(clean.code, 0, clean.stdout + clean.stderr);
    assert.doesNotMatch(clean.stdout, / (warning|error) TRN/);
    assert.match(clean.stderr + clean.stdout, /0 error\(s\), 0 warning\(s\)/);

    const yaml = readFileSync(join(example, 'step-wise-lake.trinity.yaml'), 'utf8');
    const rows = readFileSync(join(example, 'data', 'lake.jsonl'), 'utf8');
    const plugin = readFileSync(join(example, 'plugins', 'step-wise-lake.mjs'), 'utf8');
    const dir = workspace({
      'c.yaml': yaml.replace(
        '        max_tokens: 8\n',
        '        max_tokens: 8\n      workflow_args:\n        max_step: 3\n',
      ),
      'data/lake.jsonl': rows.replace('"seed": 11, "size": 3, ', '"seed": 11, '),
      'plugins/step-wise-lake.mjs': plugin,
      'prompted/step-wise-lake.mjs': plugin.replace('taskDesc: false', 'taskDesc: true'),
    });
    const r = await run(['check', '--plugin-dir', 'plugins', 'c.yaml'], { cwd: dir });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const found = r.stdout.split('\n').filter((l) => / (warning|error) /.test(l));
    assert.deepEqual(
      found.map((l) => / (warning|error) (TRN\d+)/.exec(l)?.slice(1).join(' ')),
      ['warning TRN317', 'warning TRN316'],
      r.stdout,
    );
    assert.match(
      found[0],
      /1 of the first 3 rows .* lack `size`, which `step_wise_lake` reads from each task row \(declared in plugins\/step-wise-lake\.mjs\)/,
    );
    assert.match(found[1], /Did you mean `max_steps`\?/);
    const prompted = await run(['check', '--plugin-dir', 'prompted', 'c.yaml'], { cwd: dir });
    assert.equal(prompted.code, 1, prompted.stdout);
    assert.match(
      prompted.stdout,
      /error TRN305 `buffer\.explorer_input\.taskset\.format\.prompt_key` is `prompt`, .*every task would get an empty prompt \(`step_wise_lake` reads `ctx\.task\.taskDesc`, declared in prompted\/step-wise-lake\.mjs\)\./,
    );
    assert.doesNotMatch(prompted.stdout, /TRN305 .*response_key/);
  });

  test('several files: each reported, exit 1 if any has an error', async () => {
    const dir = workspace({ 'a.yaml': 'mode: both\n', 'b.yaml': 'mode: nope\n' });
    const r = await run(['check', '--format', 'json', 'a.yaml', 'b.yaml'], { cwd: dir });
    assert.equal(r.code, 1);
    const out = JSON.parse(r.stdout);
    assert.deepEqual(
      out.map((f: { file: string }) => f.file),
      ['a.yaml', 'b.yaml'],
    );
    assert.ok(out[1].diagnostics.some((d: { code: string }) => d.code === 'TRN200'));
  });

  test('--min-severity hides less severe problems', async () => {
    const dir = workspace({ 'a.yaml': 'mode: both\nalgorithm:\n  algorithm_type: grpo\n  repeat_times: 1\n' });
    const all = (await run(['check', 'a.yaml'], { cwd: dir })).stdout;
    assert.match(all, / information /);
    const warnings = (await run(['check', '--min-severity', 'warning', 'a.yaml'], { cwd: dir })).stdout;
    assert.doesNotMatch(warnings, / information /);
    assert.match(warnings, / warning TRN303 /);
    const errors = (await run(['check', '--min-severity', 'error', 'a.yaml'], { cwd: dir })).stdout;
    assert.doesNotMatch(errors, / warning /);
  });

  test('a directory checks the Trinity configs in it and skips other YAML', async () => {
    const dir = workspace({
      'cfg/a.yaml': GOOD,
      'cfg/data/sft.jsonl': SFT_ROW,
      'cfg/ci.yml': 'on: [push]\njobs: {}\n',
      'cfg/sub/b.trinity.yaml': 'mode: both\nbuffer:\n  batch_size: x\nalgorithm:\n  algorithm_type: grpo\n',
    });
    const r = await run(['check', '--format', 'json', 'cfg'], { cwd: dir });
    const files = JSON.parse(r.stdout).map((f: { file: string }) => f.file);
    assert.deepEqual(files, ['cfg/a.yaml', 'cfg/sub/b.trinity.yaml']);
    assert.equal(r.code, 1, 'b.trinity.yaml has a type error');
  });

  test('bad usage exits 2 with a message', async () => {
    const dir = workspace({ 'a.yaml': 'mode: both\n' });
    for (const args of [
      ['check'],
      ['check', '--format', 'xml', 'a.yaml'],
      ['check', '--trinity-version', '0.2.0', 'a.yaml'],
      ['check', '--bogus', 'a.yaml'],
      ['check', '--min-severity', 'loud', 'a.yaml'],
      ['check', '--gpu', 'V100', 'a.yaml'],
      ['check', 'missing.yaml'],
      ['frobnicate'],
    ]) {
      const r = await run(args, { cwd: dir });
      assert.equal(r.code, 2, `${args.join(' ')} -> ${r.code}`);
      assert.ok(r.stderr.length > 0);
      assert.equal(r.stdout, '');
    }
  });

  test("--gpu sets the card the memory checks are for and prints each file's estimate", async () => {
    const dir = workspace({
      'sft.yaml': GOOD.replace('model_path: m', 'model_path: Qwen/Qwen2.5-32B-Instruct'),
      'data/sft.jsonl': '{"messages": [{"role": "user", "content": "hi"}]}\n',
    });
    const small = await run(['check', '--gpu', 'A100-40G', 'sft.yaml'], { cwd: dir });
    assert.equal(small.code, 1, small.stdout + small.stderr);
    assert.match(
      small.stdout,
      /^sft\.yaml:\d+:\d+ error TRN274 actor ≈ \d+\.\d GiB of 39\.4 peak, \d+ % \(A100-40G\)/m,
    );
    assert.match(
      small.stdout,
      /^sft\.yaml: GPU memory:\n {2}GPU: A100-40G \(39\.4 GiB as CUDA reports it\)\n {2}trainer actor ≈/m,
    );
    assert.match(small.stdout, /model shape: published config\.json of Qwen\/Qwen2\.5-32B/);

    const large = await run(['check', '--gpu', '4000', 'sft.yaml'], { cwd: dir });
    assert.equal(large.code, 0, large.stdout + large.stderr);
    assert.doesNotMatch(large.stdout, /TRN27[34]/);
    assert.match(large.stdout, /GPU: 4000 GiB/);

    const json = JSON.parse(
      (await run(['check', '--gpu', 'h200', '--format', 'json', 'sft.yaml'], { cwd: dir })).stdout,
    );
    assert.equal(json[0].gpuMemory[0].gpu.name, 'H200-141G');
    assert.equal(json[0].gpuMemory[0].trainer.modules[0].module, 'actor');
    // Without --gpu the estimate runs for the default card but is not printed.
    const plain = JSON.parse((await run(['check', '--format', 'json', 'sft.yaml'], { cwd: dir })).stdout);
    assert.equal(plain[0].gpuMemory, undefined);
    assert.ok(plain[0].diagnostics.some((d: { code: string }) => d.code === 'TRN274'));
  });

  test('--version prints the package version', async () => {
    const r = await run(['--version']);
    assert.equal(r.code, 0);
    assert.equal(r.stdout.trim(), require(resolve(__dirname, '..', '..', 'package.json')).version);
  });

  test('--help documents the options', async () => {
    const r = await run(['check', '--help']);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /--trinity-version/);
    assert.match(r.stdout, /--format/);
    assert.match(r.stdout, /--gpu/);
  });
});
