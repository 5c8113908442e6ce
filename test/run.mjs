// Runs every *.test.ts under test/ with Node's own test runner (TypeScript through tsx).
// Node 20's --test does not expand globs, so the file list is built here; the files of a folder share a process
// where they may (process-groups.mjs), through an entry written to a temp folder.
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { spawnSync } from 'node:child_process';
import { locateCorpus } from './setup/corpus-source.mjs';
import { groupEntry, processGroups } from './process-groups.mjs';

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
const entries = mkdtempSync(join(tmpdir(), 'tw-test-groups-'));
const runs = processGroups(files).map((group, i) => {
  if (group.length === 1) return group[0];
  // The runner sorts its files by path: numbered, the groups keep the given order.
  const entry = join(
    entries,
    `${String(i).padStart(3, '0')}-${group[0].split(/[\\/]/).slice(1, -1).join('-')}.test.cjs`,
  );
  writeFileSync(
    entry,
    groupEntry(
      group.map((f) => resolve(f)),
      group,
    ),
  );
  return entry;
});
const r = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', ...runs], {
  stdio: 'inherit',
  env: {
    ...process.env,
    TRINITY_CORPUS_DIR: locateCorpus(process.cwd()) ?? process.env.TRINITY_CORPUS_DIR ?? '../shared/corpus',
  },
});
rmSync(entries, { recursive: true, force: true });
process.exit(r.status ?? 1);
