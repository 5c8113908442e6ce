/**
 * test/run.mjs runs a folder's test files in one process (process-groups.mjs): which files share one, and that a
 * group runs each file in a suite of its own, its top-level hooks applying to its tests only.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
// @ts-expect-error: a plain .mjs module of the test runner, no declaration file
import { groupEntry, processGroups } from '../process-groups.mjs';

test('a folder’s files share a process by the backend they ask for; a file that changes the process’s state runs alone', () => {
  const texts: Record<string, string> = {
    'test/a/one.test.ts': "test('x', () => {});",
    'test/a/env.test.ts': "process.env.TRINITY_WORKBENCH_BACKEND = 'cpu';",
    'test/a/two.test.ts': "before(() => tf.ready()); test('y', () => {});",
    'test/b/cwd.test.ts': "process.chdir('/tmp');",
    'test/b/three.test.ts': "test('z', () => {});",
    'test/b/plugin.test.ts': 'await runJob(config, { pluginDirs: [dir] });',
    'test/b/loaded.test.ts': 'const loaded = await loadRuntimePlugins([dir]);',
    'test/a/cpu.test.ts': "before(() => tf.setBackend('cpu'));",
    'test/a/wasm.test.ts': "before(() => initBackend({ prefer: 'wasm' }));",
    'test/a/cpu-too.test.ts': "before(async () => {\n  await tf.setBackend('cpu');\n});",
    'test/a/auto.test.ts': 'before(() => initBackend());',
    'test/a/both.test.ts': "tf.setBackend('cpu'); startWebgpuGuarded();",
    'test/e2e/one.test.ts': "test('w', () => {});",
    'test/e2e/two.test.ts': "test('v', () => {});",
  };
  assert.deepEqual(
    processGroups(Object.keys(texts), (f: string) => texts[f]),
    [
      ['test/a/one.test.ts', 'test/a/two.test.ts'],
      ['test/a/env.test.ts'],
      ['test/b/cwd.test.ts'],
      ['test/b/three.test.ts'],
      ['test/b/plugin.test.ts'],
      ['test/b/loaded.test.ts'],
      ['test/a/cpu.test.ts', 'test/a/cpu-too.test.ts'],
      ['test/a/wasm.test.ts'],
      ['test/a/auto.test.ts'],
      ['test/a/both.test.ts'],
      ['test/e2e/one.test.ts'],
      ['test/e2e/two.test.ts'],
    ],
  );
});

test('a group runs each file in its own suite: one file’s top-level hooks stay its own', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tw-groups-'));
  try {
    const counted = join(dir, 'counted.test.ts');
    const plain = join(dir, 'plain.test.ts');
    writeFileSync(
      counted,
      [
        "import assert from 'node:assert/strict';",
        "import { after, beforeEach, test } from 'node:test';",
        'let n = 0;',
        'beforeEach(() => void n++);',
        "after(() => console.log('counted after ran: ' + n));",
        "test('counted one', () => assert.equal(n, 1));",
        "test('counted two', () => assert.equal(n, 2));",
      ].join('\n'),
    );
    writeFileSync(
      plain,
      [
        "import assert from 'node:assert/strict';",
        "import { test } from 'node:test';",
        'let calls = 0;',
        "test('plain one', () => assert.equal(++calls, 1));",
        "test('plain two', (t) => assert.equal(t.name, 'plain two'));",
      ].join('\n'),
    );
    const entry = join(dir, 'group.test.cjs');
    writeFileSync(entry, groupEntry([counted, plain], ['test/x/counted.test.ts', 'test/x/plain.test.ts']));
    // Without this runner's NODE_TEST_CONTEXT, which would make the child report to it instead of printing.
    const { NODE_TEST_CONTEXT: _, ...env } = process.env;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', entry], {
      encoding: 'utf8',
      env,
    });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^✔ test\/x\/counted\.test\.ts/m);
    assert.match(r.stdout, /^✔ test\/x\/plain\.test\.ts/m);
    assert.match(r.stdout, /ℹ tests 4\n/);
    // Its beforeEach ran before its own two tests, not before the other file's.
    assert.match(r.stdout, /counted after ran: 2\n/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
