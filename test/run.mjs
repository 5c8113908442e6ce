// Runs every *.test.ts under test/ with Node's own test runner (TypeScript through tsx).
// Node 20's --test does not expand globs, so the file list is built here.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { locateCorpus } from './setup/corpus-source.mjs';

function collect(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...collect(p));
    else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

const filter = process.argv.slice(2);
const files = collect('test').filter((f) => filter.length === 0 || filter.some((s) => f.includes(s)));
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
const r = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', ...files], {
  stdio: 'inherit',
  env: {
    ...process.env,
    TRINITY_CORPUS_DIR: locateCorpus(process.cwd()) ?? process.env.TRINITY_CORPUS_DIR ?? '../shared/corpus',
  },
});
process.exit(r.status ?? 1);
