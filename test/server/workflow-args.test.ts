/**
 * Workflow-aware `workflow_args` through the language server over JSON-RPC: hover and completion name what the
 * taskset's workflow reads (Trinity's frozen_lake and ALFWorld workflows), unknown keys get a did-you-mean and its
 * quick fix, values outside a domain are errors, and step-wise workflows ask for the rollout model's history.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { CodeAction, CompletionList, Diagnostic, Hover } from 'vscode-languageserver-types';
import { startInProcess, withCursor, type TestClient } from '../helpers/lsp';

/** Trinity's examples/grpo_frozen_lake/frozen_lake.yaml, cut to what the checks need. */
const FROZEN_LAKE = `mode: both
algorithm:
  algorithm_type: grpo
  repeat_times: 8
model:
  model_path: Qwen/Qwen2.5-3B-Instruct
  max_response_tokens: 10240
  max_model_len: 14436
cluster:
  node_num: 1
  gpu_per_node: 8
buffer:
  batch_size: 64
  explorer_input:
    taskset:
      name: frozenlake
      path: data/frozenlake
      workflow_args:
        env_max_steps: 8
        agent_max_steps: 10
    default_workflow_type: frozen_lake_workflow
`;

const lineOf = (text: string, needle: string) => text.split('\n').findIndex((l) => l.includes(needle));
const ours = (ds: Diagnostic[], code: string) => ds.filter((d) => d.code === code);

describe('workflow_args of the taskset workflow (language server)', () => {
  let c: TestClient;
  before(async () => {
    c = await startInProcess();
  });
  after(() => c.close());

  test('the example as Trinity ships it has no workflow findings', async () => {
    const ds = await c.open('file:///w/fl-clean.yaml', FROZEN_LAKE);
    assert.deepEqual(
      ds.filter((d) => ['TRN313', 'TRN316'].includes(String(d.code))),
      [],
    );
  });

  test('hover on an argument gives its meaning, type, default and source', async () => {
    const { text, position } = withCursor(FROZEN_LAKE.replace('agent_max_steps: 10', 'agent_max|_steps: 10'));
    await c.open('file:///w/fl-hover.yaml', text);
    const h = await c.request<Hover>('textDocument/hover', {
      textDocument: { uri: 'file:///w/fl-hover.yaml' },
      position,
    });
    const md = (h.contents as { value: string }).value;
    assert.match(md, /\*\*`agent_max_steps`\*\* · integer ≥ 1/);
    assert.match(md, /Turns the model gets per episode/);
    assert.match(md, /Default: `10`/);
    assert.match(md, /envs\/frozen_lake\/workflow\.py @8b7fce3/);
  });

  test('completion inside workflow_args offers the arguments not yet written, with docs', async () => {
    const { text, position } = withCursor(
      FROZEN_LAKE.replace('        agent_max_steps: 10\n', '        agent_max_steps: 10\n        |\n'),
    );
    await c.open('file:///w/fl-comp.yaml', text);
    const list = await c.request<CompletionList>('textDocument/completion', {
      textDocument: { uri: 'file:///w/fl-comp.yaml' },
      position,
    });
    const labels = list.items.map((i) => i.label);
    for (const k of ['is_slippery', 'desc', 'reward_fn_type']) assert.ok(labels.includes(k), labels.join(', '));
    assert.ok(!labels.includes('agent_max_steps') && !labels.includes('env_max_steps'), 'already written');
    const slippery = list.items.find((i) => i.label === 'is_slippery')!;
    assert.equal(slippery.detail, 'boolean = false');
    assert.match((slippery.documentation as { value: string }).value, /probability 1\/3/);
    // A different workflow gets its own arguments.
    const alf = withCursor(
      FROZEN_LAKE.replace('frozen_lake_workflow', 'alfworld_workflow').replace(
        '        agent_max_steps: 10\n',
        '        agent_max_steps: 10\n        |\n',
      ),
    );
    await c.open('file:///w/alf-comp.yaml', alf.text);
    const alfList = await c.request<CompletionList>('textDocument/completion', {
      textDocument: { uri: 'file:///w/alf-comp.yaml' },
      position: alf.position,
    });
    assert.deepEqual(
      alfList.items.map((i) => i.label).filter((l) => ['max_env_steps', 'is_slippery'].includes(String(l))),
      ['max_env_steps'],
    );
  });

  test('an argument the workflow does not read is flagged with a did-you-mean that its quick fix applies', async () => {
    const uri = 'file:///w/fl-typo.yaml';
    const text = FROZEN_LAKE.replace('agent_max_steps: 10', 'agent_max_step: 10');
    const ds = await c.open(uri, text);
    const [d] = ours(ds, 'TRN316');
    assert.ok(d, JSON.stringify(ds.map((x) => x.code)));
    assert.equal(d.severity, 2);
    assert.equal(d.range.start.line, lineOf(text, 'agent_max_step:'));
    assert.match(d.message, /does not read `workflow_args\.agent_max_step`.*Did you mean `agent_max_steps`\?/);
    const actions = await c.request<CodeAction[]>('textDocument/codeAction', {
      textDocument: { uri },
      range: d.range,
      context: { diagnostics: [d] },
    });
    const fix = actions.find((a) => a.title === 'Change to `agent_max_steps`');
    assert.ok(fix, actions.map((a) => a.title).join(' | '));
    const edit = fix.edit!.changes![uri][0];
    assert.equal(edit.newText, 'agent_max_steps');
    assert.deepEqual(edit.range, d.range);
  });

  test('values outside a domain are errors at the value that say what Trinity would do', async () => {
    const text = FROZEN_LAKE.replace(
      '        agent_max_steps: 10\n',
      '        agent_max_steps: "10"\n        is_slippery: "false"\n        desc: ["SFFF", "FHG"]\n',
    );
    const ds = ours(await c.open('file:///w/fl-values.yaml', text), 'TRN313');
    const at = (needle: string) => ds.find((d) => d.range.start.line === lineOf(text, needle));
    assert.match(at('agent_max_steps:')!.message, /is "10", not an integer/);
    assert.match(at('is_slippery:')!.message, /the string "false" too\) as true/);
    assert.match(at('desc:')!.message, /rows of different lengths/);
    assert.equal(ds.length, 3);
  });

  test('unknown keys are flagged only at releases whose workflow source was read; types at every release', async () => {
    const text =
      '# trinity-version: 0.5.2\n' +
      FROZEN_LAKE.replace('agent_max_steps: 10', 'agent_max_step: -1\n        env_max_steps: -1').replace(
        '        env_max_steps: 8\n',
        '',
      );
    const ds = await c.open('file:///w/fl-052.yaml', text);
    assert.deepEqual(ours(ds, 'TRN316'), []);
    assert.deepEqual(
      ours(ds, 'TRN313').map((d) => d.range.start.line),
      [lineOf(text, 'env_max_steps:')],
    );
  });

  test('a step-wise workflow without the rollout history is an error with the fix', async () => {
    const uri = 'file:///w/stepwise.yaml';
    const text = FROZEN_LAKE.replace('frozen_lake_workflow', 'step_wise_alfworld_workflow').replace(
      /      workflow_args:\n.*\n.*\n/,
      '      workflow_args:\n        max_env_steps: 30\n',
    );
    const [d] = ours(await c.open(uri, text), 'TRN313');
    assert.ok(d);
    assert.equal(d.range.start.line, lineOf(text, 'default_workflow_type'));
    assert.match(d.message, /RewardPropagationWorkflow.*asserts `explorer\.rollout_model\.enable_history`/);
    const actions = await c.request<CodeAction[]>('textDocument/codeAction', {
      textDocument: { uri },
      range: d.range,
      context: { diagnostics: [d] },
    });
    assert.ok(
      actions.some((a) => a.title === 'Set `enable_history` to `true`'),
      actions.map((a) => a.title).join(' | '),
    );
    const fixed = text + 'explorer:\n  rollout_model:\n    enable_history: true\n';
    assert.deepEqual(ours(await c.change(uri, fixed), 'TRN313'), []);
  });
});
