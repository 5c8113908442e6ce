/**
 * package.json as VS Code reads it: every command the extension registers is contributed (and nothing else is),
 * every setting says what it does, every menu names a contributed command with a `when` clause, and the `$trinity`
 * problem matcher reads what `trinity-workbench check` prints (the real CLI on a config with errors).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { COMMANDS } from '../../client/command-ids';
import { DEFAULT_HEALTH_THRESHOLDS } from '../../runtime/config/runs/run-health';
import { DEFAULT_GPU, GPU_CARDS } from '../../runtime/config/gpu-memory/gpu-cards';

const ROOT = resolve(__dirname, '..', '..');
const pkg = require(join(ROOT, 'package.json'));
const contributes = pkg.contributes;

describe('the extension manifest', () => {
  test('the registered commands are exactly the contributed ones (plus Show Resolved Config, registered with its provider)', () => {
    const contributed = (contributes.commands as { command: string; title: string; category: string }[])
      .map((c) => c.command)
      .sort();
    assert.deepEqual(contributed, [...COMMANDS, 'trinityWorkbench.showResolvedConfig'].sort());
    for (const c of contributes.commands) assert.equal(c.category, 'Trinity', c.command);
  });

  test('every setting has a description, and those a workspace could abuse are restricted in untrusted workspaces', () => {
    for (const [key, p] of Object.entries(
      contributes.configuration.properties as Record<string, { markdownDescription?: string; description?: string }>,
    )) {
      assert.ok(key.startsWith('trinityWorkbench.'), key);
      assert.ok((p.markdownDescription ?? p.description ?? '').length > 20, `${key} has no description`);
    }
    const restricted = pkg.capabilities.untrustedWorkspaces.restrictedConfigurations as string[];
    for (const k of ['trinityWorkbench.pythonPath', 'trinityWorkbench.nodePath', 'trinityWorkbench.pluginDirs'])
      assert.ok(restricted.includes(k), k);
    assert.equal(pkg.capabilities.untrustedWorkspaces.supported, 'limited');
  });

  test("the run health settings are the rules' thresholds, with the same defaults", () => {
    const props = contributes.configuration.properties as Record<string, { default: unknown }>;
    const given = Object.keys(props)
      .filter((k) => k.startsWith('trinityWorkbench.runHealth.'))
      .map((k) => k.slice('trinityWorkbench.runHealth.'.length));
    assert.deepEqual(given.sort(), ['enabled', ...Object.keys(DEFAULT_HEALTH_THRESHOLDS)].sort());
    for (const [k, v] of Object.entries(DEFAULT_HEALTH_THRESHOLDS))
      assert.equal(props[`trinityWorkbench.runHealth.${k}`].default, v, k);
  });

  test('trinityWorkbench.gpu offers the cards the memory estimates know, and defaults to the default card', () => {
    const gpu = contributes.configuration.properties['trinityWorkbench.gpu'];
    assert.equal(gpu.default, DEFAULT_GPU);
    assert.deepEqual(gpu.examples.filter((e: unknown) => typeof e === 'string').sort(), Object.keys(GPU_CARDS).sort());
    for (const card of Object.keys(GPU_CARDS)) assert.ok(gpu.markdownDescription.includes(card), card);
  });

  test('menus name contributed commands, each with a when clause', () => {
    const known = new Set((contributes.commands as { command: string }[]).map((c) => c.command));
    for (const [menu, items] of Object.entries(
      contributes.menus as Record<string, { command: string; when?: string }[]>,
    )) {
      for (const item of items) {
        assert.ok(known.has(item.command), `${menu}: ${item.command}`);
        assert.ok(item.when, `${menu}: ${item.command} has no when clause`);
      }
    }
    const title = contributes.menus['editor/title'].map((m: { command: string }) => m.command);
    assert.ok(title.includes('trinityWorkbench.run') && title.includes('trinityWorkbench.stop'));
  });

  test('the $trinity problem matcher reads `trinity-workbench check` output: file, line, column, severity, code, message', () => {
    const matcher = contributes.problemMatchers.find((m: { name: string }) => m.name === 'trinity');
    const re = new RegExp(matcher.pattern.regexp);
    const dir = mkdtempSync(join(tmpdir(), 'twb-matcher-'));
    const file = join(dir, 'bad.trinity.yaml');
    writeFileSync(
      file,
      '# trinity-version: main\nmode: both\nalgorithm:\n  algorithm_type: grpo\n  repeat_time: 8\nbuffer:\n  batch_size: 4\n',
    );
    const r = spawnSync(process.execPath, [join(ROOT, 'dist', 'cli.js'), 'check', file], { encoding: 'utf8' });
    assert.equal(r.status, 1, r.stderr);
    const problems = r.stdout.split('\n').flatMap((l) => {
      const m = re.exec(l);
      return m
        ? [
            {
              file: m[matcher.pattern.file],
              line: Number(m[matcher.pattern.line]),
              col: Number(m[matcher.pattern.column]),
              severity: m[matcher.pattern.severity],
              code: m[matcher.pattern.code],
              message: m[matcher.pattern.message],
            },
          ]
        : [];
    });
    const typo = problems.find((p) => p.code === 'TRN010');
    assert.deepEqual(typo && { file: typo.file, line: typo.line, col: typo.col, severity: typo.severity }, {
      file,
      line: 5,
      col: 3,
      severity: 'error',
    });
    assert.match(typo!.message, /repeat_times/);
    // Every problem line is matched, and severities are ones VS Code knows (error, warning, info).
    const lines = r.stdout.split('\n').filter((l) => / TRN\d{3} /.test(l));
    assert.equal(problems.length, lines.length);
    for (const p of problems) assert.ok(['error', 'warning', 'info'].includes(p.severity), p.severity);
  });
});
