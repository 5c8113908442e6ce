import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jsExportsIn, jsPluginReadsIn, jsTaskColumnsIn } from '../../../runtime/config/environment/plugin-names';
import { declarationsIn } from '../../../runtime/config/environment/plugin-declarations';
import { loadRuntimePlugins, PluginError } from '../../../runtime/rft/plugins';

test("a JavaScript plugin's workflow and reward names are the top-level keys of its exported maps", () => {
  const source = [
    '// export const workflows = { in_a_comment: 1 };',
    'const helper = { not_exported: 1 };',
    'export const workflows = {',
    "  plain: (ctx) => ({ run: async () => [{ text: 'a, b: c', n: f(1, 2) }] }),",
    "  'quoted-name': () => null,",
    '  /* a, comment: here */ method(ctx) { return { inner: 1 }; },',
    '  async later(ctx) {},',
    '  shorthand,',
    '  ...spread,',
    '  `template`: 1,',
    '};',
    'module.exports.rewards = { "double-quoted": () => 1, get got() { return 1; } };',
  ].join('\n');
  assert.deepEqual(jsExportsIn(source), {
    workflow: ['plain', 'quoted-name', 'method', 'later', 'shorthand'],
    reward_fn: ['double-quoted', 'got'],
  });
  assert.deepEqual(jsExportsIn('export const workflows = makeWorkflows();'), {});
});

test('unfinished text (an open comment, string or map) ends the scan without hanging', () => {
  assert.deepEqual(jsExportsIn('export const workflows = { a: 1, /* open'), { workflow: ['a'] });
  assert.deepEqual(jsExportsIn("export const workflows = { b: 'open"), { workflow: ['b'] });
  assert.deepEqual(jsExportsIn('export const rewards = { c'), {});
});

test('a JavaScript plugin reads the prompt column only through ctx.task.taskDesc and the answer only through ctx.task.truth', () => {
  // Its own row keys, and the names in a comment, read neither.
  const own = '// not ctx.task.taskDesc or truth\nconst { size, seed } = ctx.task.raw;\nconst truthy = 1;';
  assert.deepEqual(jsTaskColumnsIn(own), { prompt: false, response: false });
  assert.deepEqual(jsTaskColumnsIn('const { taskDesc } = ctx.task;'), { prompt: true, response: false });
  assert.deepEqual(jsTaskColumnsIn("reward(out, ctx.task['truth'])"), { prompt: false, response: true });
});

test("a plugin's workflowReads literal is read from its text: columns, taskDesc/truth, workflow_args; else why not", () => {
  const source = [
    '// export const workflowReads = { commented: {} };',
    'export const workflowReads = {',
    "  lake: { columns: ['size', \"seed\", `p`], taskDesc: true, workflowArgs: { n: { type: 'int', default: 2, min: 1 }, }, },",
    '};',
    'export const workflows = { lake: (ctx) => ({ run: async () => ctx.task.truth }), other: () => ({}) };',
  ].join('\n');
  const reads = jsPluginReadsIn(source, ['lake', 'other'], 'plugins/p.mjs');
  assert.deepEqual(reads.columns.lake, { prompt: true, response: false, declaredIn: 'plugins/p.mjs' });
  // The undeclared workflow of the same file keeps the inference from the text (it names `truth`).
  assert.deepEqual(reads.columns.other, { prompt: false, response: true });
  assert.deepEqual(
    reads.specs.lake.rowKeys?.map((k) => k.key),
    ['size', 'seed', 'p'],
  );
  assert.deepEqual(
    reads.specs.lake.args.map((a) => [a.name, a.type, a.default, a.min]),
    [['n', 'int', 2, 1]],
  );
  assert.equal(reads.specs.other, undefined);

  const computed = declarationsIn('export const workflowReads = { lake: { columns: COLUMNS } };');
  assert.deepEqual(computed, {
    ok: false,
    message:
      '`workflowReads` (line 1): `COLUMNS` is not a plain value (write strings, numbers, true, false, null, [ ] and { } only)',
  });
  assert.deepEqual(declarationsIn('export const workflowReads = { lake: { colums: [] } };'), {
    ok: false,
    message: '`workflowReads.lake.colums` is not one of columns, taskDesc, truth, workflowArgs',
  });
  assert.deepEqual(
    declarationsIn("export const workflowReads = { lake: { workflowArgs: { n: { type: 'integer' } } } };"),
    {
      ok: false,
      message: '`workflowReads.lake.workflowArgs.n.type` is not one of int, number, bool, string, dict',
    },
  );
  assert.equal(declarationsIn('export const workflows = {};'), undefined);
});

test('run refuses a plugin whose exported workflowReads the checker would read otherwise, naming file and key', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tw-plugin-decl-'));
  const wf = 'export const workflows = { lake: () => ({ run: async () => [] }) };\n';
  const cases: [string, RegExp][] = [
    [
      "const cols = ['size'];\nexport const workflowReads = { lake: { columns: cols } };\n",
      /a\.mjs: `workflowReads` \(line 3\): `cols` is not a plain value/,
    ],
    [
      "export const workflowReads = { lake: { columns: ['size'] } };\nworkflowReads.lake.columns.push('p');\n",
      /b\.mjs: the exported `workflowReads` differs from its literal/,
    ],
    [
      "export const workflowReads = { laek: { columns: ['size'] } };\n",
      /c\.mjs: `workflowReads\.laek` declares a workflow the file's `workflows` map does not have \(it has `lake`\)/,
    ],
    [
      "export const workflowReads = { lake: { truth: 'yes' } };\n",
      /d\.mjs: `workflowReads\.lake\.truth` is not true or false/,
    ],
  ];
  try {
    for (const [i, [body, expected]] of cases.entries()) {
      const sub = join(dir, String(i));
      mkdirSync(sub);
      writeFileSync(join(sub, `${'abcd'[i]}.mjs`), wf + body);
      await assert.rejects(
        loadRuntimePlugins([sub]),
        (e: Error) => e instanceof PluginError && expected.test(e.message),
      );
    }
    const good = join(dir, 'good');
    mkdirSync(good);
    writeFileSync(join(good, 'g.mjs'), wf + "export const workflowReads = { lake: { columns: ['size'] } };\n");
    const loaded = await loadRuntimePlugins([good]);
    assert.deepEqual(loaded.taskColumns.lake, { prompt: false, response: false, declaredIn: 'good/g.mjs' });
    assert.deepEqual(
      loaded.workflowSpecs.lake.rowKeys?.map((k) => k.key),
      ['size'],
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
