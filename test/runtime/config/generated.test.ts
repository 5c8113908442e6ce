/** The committed schemas, runtime types and reference docs are exactly what the config model generates. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { generatedFiles } from '../../../runtime/config/codegen/generated-files';

const root = join(__dirname, '..', '..', '..');

const files = generatedFiles(root);
// Per release: a JSON Schema; once: the runtime types, the config paths and the two reference docs. None may drop out unnoticed.
test('every generated file is compared', () => {
  const names = [...files.keys()].map((p) => p.slice(root.length + 1));
  for (const want of [
    'runtime/config/types.generated.ts',
    'runtime/config/paths.generated.ts',
    'docs/config-reference.md',
    'docs/diagnostics.md',
    'schemas/trinity-main.schema.json',
  ]) {
    assert.ok(names.includes(want), `${want} is not among ${names.join(', ')}`);
  }
});

for (const [path, content] of files) {
  test(`${path.slice(root.length + 1)} is up to date (run \`npm run gen\`)`, () => {
    assert.equal(readFileSync(path, 'utf8'), content);
  });
}
