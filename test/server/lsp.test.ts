/** The language server over real JSON-RPC: what a user sees in the editor, feature by feature. */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import {
  DiagnosticSeverity,
  type CompletionList,
  type Diagnostic,
  type Hover,
  type Location,
} from 'vscode-languageserver-types';
import { startChildProcess, startInProcess, withCursor, type TestClient } from '../helpers/lsp';
import { SHRUNK_MODEL_JSON } from '../helpers/shrunk-model-json';
import { TextDocument } from 'vscode-languageserver-textdocument';
// The cache our server primes for completion (the deep import server/service/yaml-service.ts uses).
import { yamlDocumentsCache } from 'yaml-language-server/out/server/src/languageservice/parser/yaml-documents';
import { RESOLVED_CONFIG_REQUEST, type ResolvedConfigResponse } from '../../server/lsp-messages';

const GRPO = `# trinity-version: 0.5.2
mode: both
algorithm:
  algorithm_type: grpo
  repeat_times: 8
model:
  model_path: Qwen/Qwen2.5-1.5B-Instruct
  max_model_len: 2048
  max_response_tokens: 1024
cluster:
  node_num: 1
  gpu_per_node: 5
buffer:
  batch_size: 16
  explorer_input:
    taskset:
      path: openai/gsm8k
      format:
        prompt_key: question
        response_key: answer
    default_workflow_type: math_workflow
explorer:
  rollout_model:
    engine_num: 1
`;

const codes = (ds: Diagnostic[]) => ds.map((d) => `${d.range.start.line + 1}:${d.code}`);

describe('language server (in process)', () => {
  let c: TestClient;
  before(async () => {
    c = await startInProcess();
  });
  after(() => c.close());

  test('a clean config has no errors, and the client learns its release', async () => {
    const ds = await c.open('file:///w/clean.yaml', GRPO);
    assert.deepEqual(
      ds.filter((d) => d.severity === 1),
      [],
    );
    assert.deepEqual(c.releaseOf('file:///w/clean.yaml'), {
      uri: 'file:///w/clean.yaml',
      release: 'v0.5.2',
      source: 'comment',
    });
  });

  test('diagnostics follow edits, with codes that link to docs and data for fixes', async () => {
    const uri = 'file:///w/edit.yaml';
    await c.open(uri, GRPO);
    const ds = await c.change(
      uri,
      GRPO.replace('gpu_per_node: 5', 'gpu_per_node: 6').replace('  repeat_times: 8', '  repeat_tims: 8'),
    );
    assert.ok(codes(ds).includes('5:TRN010'), codes(ds).join(' '));
    const bad = ds.find((d) => d.code === 'TRN010')!;
    assert.equal(bad.source, 'trinity');
    assert.match(bad.codeDescription!.href, /diagnostics\.md#trn010/);
    assert.deepEqual((bad.data as { suggestion?: string }).suggestion, 'repeat_times');
    const fixed = await c.change(uri, GRPO);
    assert.ok(!codes(fixed).some((x) => x.endsWith('TRN010')));
  });

  test('no false type errors on ${...} values: they take the resolved value type', async () => {
    const ds = await c.open('file:///w/interp.yaml', GRPO.replace('  batch_size: 16', '  batch_size: ${oc.env:BS,16}'));
    assert.ok(!ds.some((d) => d.severity === 1), codes(ds).join(' '));
  });

  test('# trinity-disable-next-line silences a code on the next line only', async () => {
    const text = GRPO.replace('  repeat_times: 8', '  # trinity-disable-next-line TRN303\n  repeat_times: 1');
    const ds = await c.open('file:///w/disable.yaml', text);
    assert.ok(!ds.some((d) => d.code === 'TRN303'));
    const ds2 = await c.open('file:///w/disable2.yaml', GRPO.replace('  repeat_times: 8', '  repeat_times: 1'));
    assert.ok(ds2.some((d) => d.code === 'TRN303'));
  });

  test('hover on a key explains it: type, default, release', async () => {
    const { text, position } = withCursor(GRPO.replace('  repeat_times: 8', '  repeat_ti|mes: 8'));
    await c.open('file:///w/hover.yaml', text);
    const h = await c.request<Hover>('textDocument/hover', { textDocument: { uri: 'file:///w/hover.yaml' }, position });
    const md = (h.contents as { value: string }).value;
    assert.match(md, /\*\*`repeat_times`\*\* · integer/);
    assert.match(md, /Default: `1`/);
    assert.match(md, /Since Trinity v0\.3\.0/);
  });

  test('hover on an algorithm type says what it brings', async () => {
    const { text, position } = withCursor(GRPO.replace('algorithm_type: grpo', 'algorithm_type: gr|po'));
    await c.open('file:///w/hover2.yaml', text);
    const h = await c.request<Hover>('textDocument/hover', {
      textDocument: { uri: 'file:///w/hover2.yaml' },
      position,
    });
    const md = (h.contents as { value: string }).value;
    assert.match(md, /Defaults: advantage `grpo`, policy loss `ppo`, KL loss `k2`/);
    assert.match(md, /Needs a reference model/);
  });

  test('hover on a derived value shows what Trinity computes and how', async () => {
    const text2 = withCursor(GRPO.replace('  batch_size: 16', '  batch_si|ze: 16'));
    await c.open('file:///w/hover4.yaml', text2.text);
    const h2 = await c.request<Hover>('textDocument/hover', {
      textDocument: { uri: 'file:///w/hover4.yaml' },
      position: text2.position,
    });
    assert.match(
      (h2.contents as { value: string }).value,
      /Trinity derives from this:\*\*\n- `buffer\.train_batch_size` = `batch_size` × `repeat_times` = 16 × 8 = 128/,
    );
  });

  test('hover on an interpolation shows its resolved value and source', async () => {
    const marked = GRPO.replace(
      '  max_response_tokens: 1024',
      '  max_response_tokens: 1024\n  max_prompt_tokens: ${model.max_resp|onse_tokens}',
    );
    const { text, position } = withCursor(marked);
    await c.open('file:///w/hover5.yaml', text);
    const h = await c.request<Hover>('textDocument/hover', {
      textDocument: { uri: 'file:///w/hover5.yaml' },
      position,
    });
    const md = (h.contents as { value: string }).value;
    assert.match(md, /\*\*Resolves to:\*\* `1024`/);
    assert.match(md, /from `model\.max_response_tokens` = `1024`/);
  });

  test('completion of keys comes from the release schema with docs', async () => {
    const { text, position } = withCursor(GRPO.replace('  repeat_times: 8', '  repeat_times: 8\n  |'));
    await c.open('file:///w/comp.yaml', text);
    const list = await c.request<CompletionList>('textDocument/completion', {
      textDocument: { uri: 'file:///w/comp.yaml' },
      position,
    });
    const labels = list.items.map((i) => i.label);
    for (const k of ['advantage_fn', 'policy_loss_fn', 'kl_loss_fn', 'optimizer'])
      assert.ok(labels.includes(k), `${k} missing from ${labels.join(', ')}`);
    assert.ok(!labels.includes('repeat_times'), 'already written');
  });

  test("completion answers alike from the document copy made after an edit and from a fresh one, and no request sees another's edits", async () => {
    // `monitor:` over a half-typed key reads as `monitor: mon`; completion rewrites it to `monitor: {mon: null}` in its copy.
    const marked = GRPO.replace('  max_model_len: 2048', '  max_model_len: 2048\n  ') + 'monitor:\n  mon|';
    const { text, position: typing } = withCursor(marked);
    const blank = { line: text.split('\n').indexOf('  max_model_len: 2048') + 1, character: 2 };
    const ask = (uri: string, position: { line: number; character: number }) =>
      c.request<CompletionList>('textDocument/completion', { textDocument: { uri }, position });
    await c.open('file:///w/copy-a.yaml', text);
    const first = await ask('file:///w/copy-a.yaml', typing);
    assert.ok(
      first.items.some((i) => i.label === 'monitor_type'),
      first.items.map((i) => i.label).join(', '),
    );
    assert.deepEqual(await ask('file:///w/copy-a.yaml', typing), first);
    const blankAfter = await ask('file:///w/copy-a.yaml', blank);
    await c.open('file:///w/copy-b.yaml', text);
    const blankFirst = await ask('file:///w/copy-b.yaml', blank);
    assert.ok(
      blankFirst.items.some((i) => i.label === 'temperature'),
      blankFirst.items.map((i) => i.label).join(', '),
    );
    assert.deepEqual(blankAfter, blankFirst);
    // copy-b took over the spare copies; copy-a's requests copy as they go.
    assert.deepEqual(await ask('file:///w/copy-a.yaml', typing), first);
  });

  test("inside trainer.trainer_config, keys come from veRL's schema (Trinity checks them against it at launch)", async () => {
    const marked =
      GRPO + 'trainer:\n  trainer_config:\n    actor_rollout_ref:\n      actor:\n        ppo_epochs: 2\n        |';
    const { text, position } = withCursor(marked);
    await c.open('file:///w/verl.yaml', text);
    const list = await c.request<CompletionList>('textDocument/completion', {
      textDocument: { uri: 'file:///w/verl.yaml' },
      position,
    });
    const labels = list.items.map((i) => i.label);
    for (const k of ['ppo_mini_batch_size', 'use_dynamic_bsz', 'optim'])
      assert.ok(labels.includes(k), `${k} missing from ${labels.join(', ')}`);
    const h = await c.request<Hover>('textDocument/hover', {
      textDocument: { uri: 'file:///w/verl.yaml' },
      position: { line: position.line - 1, character: 10 },
    });
    assert.match((h.contents as { value: string }).value, /\*\*`ppo_epochs`\*\* · integer[\s\S]*Default: `1`/);
  });

  test('completion of algorithm_type lists the registry with what each brings', async () => {
    const { text, position } = withCursor(GRPO.replace('  algorithm_type: grpo', '  algorithm_type: |'));
    await c.open('file:///w/comp2.yaml', text);
    const list = await c.request<CompletionList>('textDocument/completion', {
      textDocument: { uri: 'file:///w/comp2.yaml' },
      position,
    });
    const grpo = list.items.find((i) => i.label === 'grpo');
    assert.ok(grpo, list.items.map((i) => i.label).join(', '));
    const doc = typeof grpo.documentation === 'string' ? grpo.documentation : grpo.documentation?.value;
    assert.match(String(doc), /Needs a reference model/);
    assert.ok(list.items.some((i) => i.label === 'dpo'));
  });

  test('completion after ${ offers config paths, and after oc.env: environment variables', async () => {
    const { text, position } = withCursor(
      GRPO.replace('  max_response_tokens: 1024', '  max_response_tokens: 1024\n  max_prompt_tokens: ${model.|'),
    );
    await c.open('file:///w/comp3.yaml', text);
    const list = await c.request<CompletionList>('textDocument/completion', {
      textDocument: { uri: 'file:///w/comp3.yaml' },
      position,
    });
    const item = list.items.find((i) => i.label === 'max_model_len');
    assert.ok(item);
    assert.equal(item.detail, '= 2048');
    const env = withCursor(
      GRPO.replace('  model_path: Qwen/Qwen2.5-1.5B-Instruct', '  model_path: ${oc.env:TRINITY_MO|'),
    );
    await c.open('file:///w/comp4.yaml', env.text);
    const list2 = await c.request<CompletionList>('textDocument/completion', {
      textDocument: { uri: 'file:///w/comp4.yaml' },
      position: env.position,
    });
    assert.ok(list2.items.some((i) => i.label === 'TRINITY_MODEL_PATH'));
  });

  test('go to definition jumps from ${a.b} to the key', async () => {
    const marked = GRPO.replace(
      '  max_response_tokens: 1024',
      '  max_response_tokens: 1024\n  max_prompt_tokens: ${model.max_mo|del_len}',
    );
    const { text, position } = withCursor(marked);
    await c.open('file:///w/def.yaml', text);
    const locs = await c.request<Location[]>('textDocument/definition', {
      textDocument: { uri: 'file:///w/def.yaml' },
      position,
    });
    assert.equal(locs.length, 1);
    assert.equal(locs[0].range.start.line, 7);
    const refs = await c.request<Location[]>('textDocument/references', {
      textDocument: { uri: 'file:///w/def.yaml' },
      position: { line: 7, character: 4 },
      context: { includeDeclaration: false },
    });
    assert.equal(refs.length, 1);
    assert.equal(refs[0].range.start.line, 9);
  });

  test('the resolved config marks what Trinity fills in, and lists the metrics', async () => {
    await c.open('file:///w/resolved.yaml', GRPO);
    const r = await c.request<ResolvedConfigResponse>(RESOLVED_CONFIG_REQUEST, { uri: 'file:///w/resolved.yaml' });
    assert.equal(r.release, 'v0.5.2');
    assert.match(
      r.runs[0].yaml,
      /train_batch_size: 128 # set by Trinity: `buffer\.train_batch_size` = `batch_size` × `repeat_times` = 16 × 8 = 128/,
    );
    assert.match(r.runs[0].yaml, /max_prompt_tokens: 1024 # set by Trinity/);
    assert.ok(r.runs[0].metrics.explorer.includes('rollout/accuracy/mean'));
    assert.ok(r.runs[0].metrics.explorer.includes('experience_pipeline/group_advantages/reward_mean/mean'));
    assert.ok(r.runs[0].metrics.trainer.includes('actor/pg_loss'));
    assert.ok(r.runs[0].metrics.trainer.includes('actor/kl_loss'));
  });

  test('symbols, folding and formatting that keeps comments', async () => {
    const uri = 'file:///w/fmt.yaml';
    await c.open(uri, 'mode:   both   # keep me\nbuffer:\n    batch_size: 4\n');
    const symbols = await c.request<{ name: string }[]>('textDocument/documentSymbol', { textDocument: { uri } });
    assert.deepEqual(
      symbols.map((s) => s.name),
      ['mode', 'buffer'],
    );
    const folds = await c.request<{ startLine: number; endLine: number }[]>('textDocument/foldingRange', {
      textDocument: { uri },
    });
    assert.deepEqual(
      folds.map((f) => [f.startLine, f.endLine]),
      [[1, 2]],
    );
    const edits = await c.request<{ newText: string }[]>('textDocument/formatting', {
      textDocument: { uri },
      options: { tabSize: 2, insertSpaces: true },
    });
    const out = edits.map((e) => e.newText).join('');
    assert.match(out, /# keep me/);
    assert.match(out, /\n {2}batch_size: 4/);
  });
});

describe('settings', () => {
  test('disabled rules and the release setting come from workspace/configuration', async () => {
    const c = await startInProcess({ configuration: { trinityVersion: '0.3.1', disabledRules: ['TRN010'] } });
    try {
      const text = 'mode: both\nexplorer:\n  proxy_port: 1\nbogus: 1\n';
      const ds = await c.open('file:///w/s.yaml', text);
      assert.equal(c.releaseOf('file:///w/s.yaml')?.release, 'v0.3.1');
      assert.deepEqual(c.releaseOf('file:///w/s.yaml')?.source, 'setting');
      assert.ok(
        ds.some((d) => d.code === 'TRN011'),
        'proxy_port came in v0.4.0',
      );
      assert.ok(!ds.some((d) => d.code === 'TRN010'), 'disabled');
    } finally {
      await c.close();
    }
  });
});

describe('debounce', () => {
  test("completion's YAML parse and document copy are made in the quiet after an edit, before validation's debounce runs out", async () => {
    const c = await startInProcess({ debounceMs: 1000 });
    try {
      const uri = 'file:///w/quiet.yaml';
      await c.open(uri, GRPO);
      const edited = GRPO.replace('  max_model_len: 2048', '  max_model_len: 4096');
      let validated = false;
      const diagnostics = c.change(uri, edited).then((ds) => ((validated = true), ds));
      await new Promise((res) => setTimeout(res, 300));
      assert.equal(validated, false, 'still inside the debounce');
      // A cache hit (not a parse made now) that carries the spare copy completion will take.
      const parsed = yamlDocumentsCache.getYamlDocument(
        TextDocument.create(uri, 'trinity-yaml', 2, edited),
        { customTags: [], yamlVersion: '1.1' },
        true,
      );
      assert.ok(Object.hasOwn(parsed.documents[0], 'clone'), 'version 2 was parsed and copied ahead');
      assert.deepEqual(
        (await diagnostics).filter((d) => d.severity === DiagnosticSeverity.Error),
        [],
        'validated after the debounce',
      );

      // A large file is parsed for completion only with validation, not between keystrokes.
      const large = 'file:///w/quiet-large.yaml';
      const filler = '# a long comment line to make the file large\n'.repeat(400);
      await c.open(large, GRPO + filler);
      const largeDiagnostics = c.change(large, edited + filler);
      await new Promise((res) => setTimeout(res, 300));
      const parsedNow = yamlDocumentsCache.getYamlDocument(
        TextDocument.create(large, 'trinity-yaml', 2, edited + filler),
        { customTags: [], yamlVersion: '1.1' },
        true,
      );
      assert.ok(!Object.hasOwn(parsedNow.documents[0], 'clone'), 'not parsed ahead');
      await largeDiagnostics;
    } finally {
      await c.close();
    }
  });
});

describe('validation as you type (the wait sized from what validating the document costs)', () => {
  const sleep = (ms: number) => new Promise((res) => setTimeout(res, ms));
  /** Eight keystrokes at 8 characters a second (125 ms apart), each appending a digit to `line`'s value. */
  async function type(c: TestClient, uri: string, text: string, line: string): Promise<void> {
    let typed = text;
    for (let i = 1; i <= 8; i++) {
      typed = typed.replace(line, `${line}${i}`);
      line = `${line}${i}`;
      if (i < 8) {
        c.changeNoWait(uri, typed);
        await sleep(125);
      } else await c.change(uri, typed);
    }
  }

  test('a burst of changes that arrive together is validated once, at the last text (even with no wait at all)', async () => {
    for (const debounceMs of ['adaptive', 0] as const) {
      const c = await startInProcess({ debounceMs });
      try {
        const uri = 'file:///w/burst.yaml';
        await c.open(uri, GRPO);
        const texts = Array.from({ length: 200 }, (_, i) => GRPO.replace('  repeat_times: 8', `  repeat_times: ${i}`));
        texts.push(GRPO.replace('  repeat_times: 8', '  repeat_time: 8'));
        const ds = await c.changeBurst(uri, texts);
        assert.deepEqual(c.published(uri), [1, 202], `the open, then only the last of the burst (${debounceMs})`);
        assert.ok(codes(ds).includes('5:TRN010'), 'the last text was validated');
      } finally {
        await c.close();
      }
    }
  });

  test('a fast document is validated after every keystroke at 8 characters a second, a slow one only when the user pauses', async () => {
    const c = await startInProcess({ debounceMs: 'adaptive' });
    try {
      const fast = 'file:///w/fast.yaml';
      await c.open(fast, GRPO);
      // One more validation, so that the cost is not only the first one's (code not yet compiled: slow).
      await c.change(fast, GRPO);
      // A few ms to validate: every keystroke's text is validated before the next one comes.
      await type(c, fast, GRPO, '  max_model_len: 2048');
      assert.deepEqual(c.published(fast), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);

      // 250 stages: well over 100 ms to validate here, so the server waits longer than the keystrokes' gaps.
      const stages = Array.from(
        { length: 250 },
        (_, i) => `  - stage_name: s${i}\n    mode: train\n    algorithm:\n      algorithm_type: sft\n`,
      );
      const slowText = `${GRPO}stages:\n${stages.join('')}`;
      const slow = 'file:///w/slow.yaml';
      await c.open(slow, slowText);
      await type(c, slow, slowText, '  max_model_len: 2048');
      assert.deepEqual(c.published(slow), [1, 9], 'the open, then only the text after the last keystroke');
    } finally {
      await c.close();
    }
  });
});

describe('bundled server (dist/server.js --stdio)', () => {
  test('starts, validates and answers hover', async () => {
    const c = await startChildProcess();
    try {
      const ds = await c.open('file:///w/child.yaml', GRPO.replace('  repeat_times: 8', '  repeat_time: 8'));
      assert.ok(codes(ds).includes('5:TRN010'));
      const h = await c.request<Hover>('textDocument/hover', {
        textDocument: { uri: 'file:///w/child.yaml' },
        position: { line: 3, character: 5 },
      });
      assert.match((h.contents as { value: string }).value, /algorithm_type/);
    } finally {
      await c.close();
    }
  });
});

describe('language server: what the local runtime lacks (TRN312)', () => {
  const TOOL = GRPO.replace('default_workflow_type: math_workflow', 'default_workflow_type: math_rm_workflow');
  const line = TOOL.split('\n').findIndex((l) => l.includes('math_rm_workflow'));

  test('runs are local (the default): information on the key, naming what runs locally and runWith: trinity', async () => {
    const c = await startInProcess();
    try {
      const ds = await c.open('file:///w/tool.yaml', TOOL);
      const info = ds.filter((d) => d.code === 'TRN312');
      assert.equal(info.length, 1, codes(ds).join(' '));
      assert.equal(info[0].severity, DiagnosticSeverity.Information);
      assert.equal(info[0].range.start.line, line);
      assert.match(
        info[0].message,
        /`math_rm_workflow` runs on Trinity-RFT only; the local runtime runs `simple_workflow`/,
      );
      assert.match(info[0].message, /trinityWorkbench\.runWith: trinity/);
      assert.ok(!ds.some((d) => d.severity === DiagnosticSeverity.Error), codes(ds).join(' '));
      const clean = await c.open('file:///w/math.yaml', GRPO);
      assert.ok(!clean.some((d) => d.code === 'TRN312'), codes(clean).join(' '));
    } finally {
      await c.close();
    }
  });

  test('with pluginDirs, a JavaScript plugin workflow runs locally (no TRN312) and a Python one does not', async () => {
    const example = resolve(__dirname, '..', '..', 'examples', 'agents-plugin');
    const py = mkdtempSync(join(tmpdir(), 'tw-py-plugin-'));
    writeFileSync(join(py, 'lake.py'), '@WORKFLOWS.register_module("py_lake")\nclass PyLake: ...\n');
    const c = await startInProcess({ configuration: { pluginDirs: [join(example, 'plugins'), py] } });
    try {
      const text = readFileSync(join(example, 'step-wise-lake.trinity.yaml'), 'utf8');
      const uri = pathToFileURL(join(example, 'step-wise-lake.trinity.yaml')).href;
      const ds = await c.open(uri, text);
      assert.ok(!ds.some((d) => d.code === 'TRN312' || d.code === 'TRN307'), codes(ds).join(' '));
      const pyDs = await c.open(`${uri}.py.yaml`, text.replace('step_wise_lake', 'py_lake'));
      const info = pyDs.filter((d) => d.code === 'TRN312');
      assert.equal(info.length, 1, codes(pyDs).join(' '));
      assert.match(info[0].message, /`py_lake` runs on Trinity-RFT only; the local runtime runs .*`step_wise_lake`/);
    } finally {
      await c.close();
      rmSync(py, { recursive: true, force: true });
    }
  });

  test('runWith: trinity: nothing to say', async () => {
    const c = await startInProcess({ settings: { runWith: 'trinity' } });
    try {
      const ds = await c.open('file:///w/tool.yaml', TOOL);
      assert.ok(!ds.some((d) => d.code === 'TRN312'), codes(ds).join(' '));
    } finally {
      await c.close();
    }
  });
});

describe('language server: settings the local runtime refuses, beyond the rollout model (TRN312)', () => {
  // An auxiliary model's engine setting and a pipeline input store at a database server: `run` refuses both before
  // any work (test/runtime/rft/run/refusals.test.ts); the editor says so at the key, in the same words.
  const AUX = GRPO.replace('gpu_per_node: 5', 'gpu_per_node: 6').concat(
    '  auxiliary_models:\n    - model_path: Qwen/Qwen2.5-7B-Instruct\n      ignore_eos: true\n',
    'data_processor:\n  experience_pipeline:\n    save_input: true\n    input_save_path: mysql://u@db/trinity\n',
  );
  const lines = AUX.split('\n');

  test('runs are local: information at each key, with what it would have done and runWith: trinity', async () => {
    const c = await startInProcess();
    try {
      const ds = await c.open('file:///w/aux.yaml', AUX);
      const errors = ds.filter((d) => d.severity === DiagnosticSeverity.Error);
      assert.deepEqual(errors, [], codes(errors).join(' '));
      const info = ds.filter((d) => d.code === 'TRN312').sort((a, b) => a.range.start.line - b.range.start.line);
      assert.deepEqual(
        info.map((d) => [d.severity, d.range.start.line]),
        [
          [DiagnosticSeverity.Information, lines.indexOf('      ignore_eos: true')],
          [DiagnosticSeverity.Information, lines.indexOf('    input_save_path: mysql://u@db/trinity')],
        ],
        codes(ds).join(' '),
      );
      const [aux, store] = info;
      assert.match(
        aux.message,
        /^`explorer\.auxiliary_models\.0\.ignore_eos`: vLLM would sample past the end-of-sequence token/,
      );
      assert.match(
        store.message,
        /^`data_processor\.experience_pipeline\.input_save_path`: the experience pipeline would keep its input in the MySQL database `mysql:\/\/u@db\/trinity`; the local runtime opens SQLite databases only/,
      );
      for (const d of info) assert.match(d.message, /trinityWorkbench\.runWith: trinity/);
    } finally {
      await c.close();
    }
  });

  test('runWith: trinity: nothing to say (Trinity-RFT honours both)', async () => {
    const c = await startInProcess({ settings: { runWith: 'trinity' } });
    try {
      const ds = await c.open('file:///w/aux.yaml', AUX);
      assert.ok(!ds.some((d) => d.code === 'TRN312'), codes(ds).join(' '));
    } finally {
      await c.close();
    }
  });
});

describe('language server: a monitor the local runtime does not reach (TRN241)', () => {
  const WANDB = `${GRPO}monitor:\n  monitor_type: wandb\n`;
  const line = WANDB.split('\n').indexOf('  monitor_type: wandb');

  test('runs are local (the default): information on the key, naming where the metrics go', async () => {
    const c = await startInProcess();
    try {
      const info = (await c.open('file:///w/wandb.yaml', WANDB)).filter((d) => d.code === 'TRN241');
      assert.deepEqual(
        info.map((d) => [d.severity, d.range.start.line]),
        [[DiagnosticSeverity.Information, line]],
      );
      assert.match(info[0].message, /logs nothing to wandb; its metrics go to `monitor\/metrics\.jsonl`/);
    } finally {
      await c.close();
    }
  });

  test('runWith: trinity: nothing to say (Trinity-RFT logs to wandb)', async () => {
    const c = await startInProcess({ settings: { runWith: 'trinity' } });
    try {
      const ds = await c.open('file:///w/wandb.yaml', WANDB);
      assert.ok(!ds.some((d) => d.code === 'TRN241'), codes(ds).join(' '));
    } finally {
      await c.close();
    }
  });
});

describe('language server: settings about scale a local run does not use (TRN319)', () => {
  const SCALED = GRPO.replace('engine_num: 1', 'engine_num: 2\n    tensor_parallel_size: 2');
  const lines = SCALED.split('\n');

  test('runs are local: information at each key, saying the result is the same', async () => {
    const c = await startInProcess();
    try {
      const ds = await c.open('file:///w/scaled.yaml', SCALED);
      const info = ds.filter((d) => d.code === 'TRN319');
      assert.deepEqual(
        info.map((d) => [d.severity, d.range.start.line]),
        [
          [DiagnosticSeverity.Information, lines.indexOf('    engine_num: 2')],
          [DiagnosticSeverity.Information, lines.indexOf('    tensor_parallel_size: 2')],
        ],
        codes(ds).join(' '),
      );
      assert.match(info[1].message, /a local run does not use this .*; the result is the same/);
    } finally {
      await c.close();
    }
  });

  test('runWith: trinity: nothing to say (Trinity-RFT uses them)', async () => {
    const c = await startInProcess({ settings: { runWith: 'trinity' } });
    try {
      const ds = await c.open('file:///w/scaled.yaml', SCALED);
      assert.ok(!ds.some((d) => d.code === 'TRN319'), codes(ds).join(' '));
    } finally {
      await c.close();
    }
  });
});

describe('language server: a trainer pass that cannot fit the wasm heap (TRN323)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'twb-lsp-heap-'));
  // 128 rows of 8192 tokens on it need far more than 4 GiB.
  writeFileSync(join(dir, 'config.json'), JSON.stringify(SHRUNK_MODEL_JSON));
  const LONG = GRPO.replace(/model_path: .*/, `model_path: ${dir}`).replace(
    /max_model_len: \d+/,
    'max_model_len: 8192',
  );
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('runs are local: an error on max_model_len; runWith: trinity: nothing to say', async () => {
    assert.ok(LONG.includes('max_model_len: 8192') && LONG.includes(dir), 'the edit applied');
    const local = await startInProcess();
    try {
      const ds = await local.open('file:///w/long.yaml', LONG);
      const heap = ds.filter((d) => d.code === 'TRN323');
      assert.deepEqual(
        heap.map((d) => [d.severity, d.range.start.line]),
        [[DiagnosticSeverity.Error, LONG.split('\n').findIndex((l) => l.includes('max_model_len: 8192'))]],
        codes(ds).join(' '),
      );
      assert.match(heap[0].message, /heap must grow to .* it holds 4\.00 GiB at most/);
    } finally {
      await local.close();
    }
    const trinity = await startInProcess({ settings: { runWith: 'trinity' } });
    try {
      const ds = await trinity.open('file:///w/long.yaml', LONG);
      assert.ok(!ds.some((d) => d.code === 'TRN323' || d.code === 'TRN324'), codes(ds).join(' '));
    } finally {
      await trinity.close();
    }
  });
});
