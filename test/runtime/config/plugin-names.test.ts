import assert from 'node:assert/strict';
import { test } from 'node:test';
import { jsExportsIn, jsTaskColumnsIn } from '../../../runtime/config/environment/plugin-names';

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
