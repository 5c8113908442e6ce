/**
 * Writes (--write) or verifies (--check) everything generated from the config model: schemas/, the runtime's
 * TypeScript types, the config path union and the reference docs. `npm run gen` / `npm run gen:check`.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { generateConfigReference, generateDiagnosticsReference } from './docs-gen';
import { NEWEST_RELEASE, RELEASES } from '../releases';
import { generateSchema } from './schema-gen';
import { generateTypes } from './types-gen';
import { generatePaths } from './paths-gen';

export function generatedFiles(root: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const r of RELEASES)
    files.set(join(root, 'schemas', `trinity-${r}.schema.json`), `${JSON.stringify(generateSchema(r), null, 2)}\n`);
  files.set(join(root, 'runtime', 'config', 'types.generated.ts'), generateTypes(NEWEST_RELEASE));
  files.set(join(root, 'runtime', 'config', 'paths.generated.ts'), generatePaths());
  files.set(join(root, 'docs', 'config-reference.md'), generateConfigReference(NEWEST_RELEASE));
  files.set(join(root, 'docs', 'diagnostics.md'), generateDiagnosticsReference());
  return files;
}

/** The generated files whose committed content differs from what the model generates now. */
export function staleFiles(root: string): string[] {
  const stale: string[] = [];
  for (const [path, content] of generatedFiles(root)) {
    let current: string | undefined;
    try {
      current = readFileSync(path, 'utf8');
    } catch {
      current = undefined;
    }
    if (current !== content) stale.push(path);
  }
  return stale;
}

if (require.main === module) {
  const root = join(__dirname, '..', '..', '..');
  const mode = process.argv[2];
  if (mode === '--write') {
    for (const [path, content] of generatedFiles(root)) {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, content);
    }
    console.log(`wrote ${generatedFiles(root).size} files`);
  } else if (mode === '--check') {
    const stale = staleFiles(root);
    if (stale.length) {
      console.error(`stale generated files (run \`npm run gen\`):\n${stale.join('\n')}`);
      process.exit(1);
    }
    console.log('generated files are up to date');
  } else {
    console.error('usage: generated-files.ts --write | --check');
    process.exit(2);
  }
}
