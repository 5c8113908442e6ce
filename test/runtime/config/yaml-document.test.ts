/**
 * Every YAML parse of the project goes through parseYamlDocument: for real configs it is the `yaml` library's
 * parseDocument; a text nested deeper than MAX_NESTING (by flow brackets, by indentation or by a line of block
 * indicators, which the library's lexer and composer follow by recursion) is refused with one error, before anything
 * recurses, however deep it goes.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { parseDocument } from 'yaml';
import { loadConfig } from '../../../runtime/config/load/load-config';
import { MAX_NESTING, parseYamlDocument, TOO_DEEP_MESSAGE } from '../../../runtime/config/load/yaml-document';
import { RELEASES } from '../../../runtime/config/releases';
import { corpusConfigs } from '../../helpers/corpus';

const flow = (n: number) => `a: ${'['.repeat(n)}1${']'.repeat(n)}\n`;
const indented = (n: number) => Array.from({ length: n }, (_, i) => `${' '.repeat(i)}k${i}:`).join('\n') + ' 1\n';
const dashes = (n: number) => `${'- '.repeat(n)}x\n`;

test('real configs: the same document as parseDocument (values, errors, ranges)', () => {
  const files = RELEASES.flatMap((r) => corpusConfigs(r));
  assert.ok(files.length > 50, `only ${files.length} corpus configs`);
  for (const f of files) {
    const text = readFileSync(f.abs, 'utf8');
    const ours = parseYamlDocument(text, { version: '1.1' });
    const theirs = parseDocument(text, { version: '1.1', prettyErrors: false });
    assert.deepEqual(ours.toJS(), theirs.toJS(), f.rel);
    assert.deepEqual(ours.contents?.range, theirs.contents?.range, f.rel);
    assert.deepEqual(
      ours.errors.map((e) => [e.code, e.pos]),
      theirs.errors.map((e) => [e.code, e.pos]),
      f.rel,
    );
  }
});

test('broken and multi-document texts get the library’s errors', () => {
  for (const text of ['a: [1, 2\n', 'a: 1\na: 2\n', 'a: 1\n---\nb: 2\n', '', '# only a comment\n']) {
    const ours = parseYamlDocument(text);
    const theirs = parseDocument(text, { prettyErrors: false });
    assert.deepEqual(
      ours.errors.map((e) => [e.code, e.pos]),
      theirs.errors.map((e) => [e.code, e.pos]),
      JSON.stringify(text),
    );
    assert.deepEqual(ours.toJS(), theirs.toJS());
  }
});

test(`nesting up to ${MAX_NESTING} levels is read; one more is refused at the level past the limit`, () => {
  for (const make of [flow, indented, dashes]) {
    const at = parseYamlDocument(make(MAX_NESTING - 1));
    assert.deepEqual(at.errors, [], make.name);
    const over = parseYamlDocument(make(MAX_NESTING + 1));
    assert.equal(over.contents, null);
    assert.deepEqual(
      over.errors.map((e) => [e.code, e.message]),
      [['RESOURCE_EXHAUSTION', TOO_DEEP_MESSAGE]],
    );
  }
  // The collection past the limit: the top-level map is the first level, so the bracket after `a: ` and
  // MAX_NESTING - 1 others.
  assert.deepEqual(parseYamlDocument(flow(MAX_NESTING + 1)).errors[0].pos, [2 + MAX_NESTING, 3 + MAX_NESTING]);
  // The first `- ` past the limit on its line.
  assert.deepEqual(parseYamlDocument(dashes(MAX_NESTING + 1)).errors[0].pos, [2 * MAX_NESTING, 2 * MAX_NESTING + 1]);
});

test('nesting far past where the library would overflow the stack is refused, not thrown or aborted', () => {
  // The library alone runs the stack out: its lexer throws on a line of 20,000 `- `; its composer, on 20,000
  // brackets, catches the overflow itself (where V8 may have aborted the process first).
  assert.throws(() => parseDocument(dashes(20_000)), RangeError);
  assert.match(parseDocument(flow(20_000)).errors[0].message, /Maximum call stack size exceeded/);
  for (const text of [dashes(200_000), flow(200_000), indented(3_000)]) {
    const doc = parseYamlDocument(text);
    assert.equal(doc.errors[0].code, 'RESOURCE_EXHAUSTION');
  }
});

test('a config that nests too deeply is TRN003 at the level past the limit', () => {
  const c = loadConfig(`project: p\nname: n\nmonitor:\n  extra: ${'['.repeat(50_000)}${']'.repeat(50_000)}\n`, {
    release: 'main',
  });
  assert.deepEqual(
    c.diagnostics.map((d) => [d.code, d.message]),
    [['TRN003', TOO_DEEP_MESSAGE]],
  );
});
