/**
 * Quick fixes and the migration action as golden files: each `test/fixtures/quickfix/NAME.yaml` names the action
 * it wants on its first line (`# fix: <title>`); applying that action through the language server must give
 * `NAME.golden.yaml` exactly, and the result must no longer have the fixed problem.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { TextDocument } from 'vscode-languageserver-textdocument';
import type { CodeAction, Diagnostic, TextEdit } from 'vscode-languageserver-types';
import { migrate } from '../../runtime/config/migrate';
import { checkConfig } from '../../runtime/config/check-config';
import { corpusConfigs, TRINITY_ENV } from '../helpers/corpus';
import { startInProcess, type TestClient } from '../helpers/lsp';

const DIR = join(__dirname, '..', 'fixtures', 'quickfix');

function apply(text: string, edits: TextEdit[]): string {
  const doc = TextDocument.create('file:///x', 'yaml', 1, text);
  return TextDocument.applyEdits(doc, edits);
}

describe('quick fixes (golden files)', () => {
  let c: TestClient;
  before(async () => {
    c = await startInProcess();
  });
  after(() => c.close());

  const fixtures = readdirSync(DIR).filter((f) => f.endsWith('.yaml') && !f.endsWith('.golden.yaml'));
  // A data-driven test registers nothing when its folder is empty or moved: that must fail, not pass silently.
  test('the quick-fix fixtures are there', () =>
    assert.ok(fixtures.length >= 9, `${fixtures.length} fixtures in ${DIR}`));
  for (const name of fixtures) {
    test(name, async () => {
      const text = readFileSync(join(DIR, name), 'utf8');
      const want = /^# fix: (.+)$/m.exec(text)?.[1];
      assert.ok(want, 'fixture needs a `# fix:` line');
      const uri = `file:///fixtures/${name}`;
      const diagnostics: Diagnostic[] = await c.open(uri, text);
      const actions = await c.request<CodeAction[]>('textDocument/codeAction', {
        textDocument: { uri },
        range: { start: { line: 0, character: 0 }, end: { line: text.split('\n').length, character: 0 } },
        context: { diagnostics },
      });
      const action = actions.find((a) => a.title === want);
      assert.ok(action, `no action "${want}"; got: ${actions.map((a) => a.title).join(' | ')}`);
      const fixed = apply(text, action.edit!.changes![uri]);
      assert.equal(fixed, readFileSync(join(DIR, name.replace(/\.yaml$/, '.golden.yaml')), 'utf8'));
      const fixedDiags = await c.change(uri, fixed);
      for (const d of action.diagnostics ?? []) {
        assert.ok(
          !fixedDiags.some((x) => x.code === d.code && x.range.start.line === d.range.start.line),
          `${d.code} is still reported after the fix`,
        );
      }
      // Source actions (migration) name no diagnostic: the file as a whole must come out with fewer problems.
      if (!action.diagnostics?.length)
        assert.ok(
          fixedDiags.length < diagnostics.length,
          `${name}: ${diagnostics.length} problems before the fix, ${fixedDiags.length} after`,
        );
    });
  }
});

describe('migrating real configs', () => {
  /** Problems the v0.3.1 originals already have, which no migration can fix (see corpus.test.ts). */
  const INHERENT = new Map([
    ['benchmark/config/countdown-template.yaml', ['TRN250']],
    ['examples/RAFT_alfworld/RAFT_alfworld_7B.yaml', ['TRN310']],
    ['examples/RAFT_alfworld/RAFT_reflect_alfworld_7B.yaml', ['TRN310']],
    ['examples/grpo_math/math.yaml', ['TRN307']],
    // Its veRL settings live in a separate file next to it, which is not part of the corpus; Trinity's tests set its
    // taskset's workflow before launching.
    ['tests/template/config.yaml', ['TRN272', 'TRN307']],
  ]);

  test('every v0.3.1 corpus config migrated to main checks with zero errors under main', async () => {
    const failures: string[] = [];
    let changed = 0;
    for (const { abs, rel } of corpusConfigs('v0.3.1')) {
      const m = migrate(readFileSync(abs, 'utf8'), 'v0.3.1', 'main');
      if (m.changes.length) changed++;
      const r = await checkConfig(m.text, { release: 'main', env: TRINITY_ENV, datasets: false });
      for (const d of r.diagnostics.filter((x) => x.severity === 'error')) {
        if (!INHERENT.get(rel)?.includes(d.code)) failures.push(`${rel}: ${d.code} ${d.message}`);
      }
    }
    assert.deepEqual(failures, []);
    assert.ok(changed >= 10, `only ${changed} files needed changes`);
  });
});
