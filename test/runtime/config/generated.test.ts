/** The committed schemas, runtime types and reference docs are exactly what the config model generates. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { generatedFiles } from '../../../runtime/config/generate';

const root = join(__dirname, '..', '..', '..');

for (const [path, content] of generatedFiles(root)) {
  test(`${path.slice(root.length + 1)} is up to date (run \`npm run gen\`)`, () => {
    assert.equal(readFileSync(path, 'utf8'), content);
  });
}
