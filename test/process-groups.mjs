// Which test files share a Node process. Each process costs a Node start, tsx's loader and the imports its file
// needs (tfjs, the config model, the server), about 1.7 s of CPU per file on CI's cores; the files of one folder
// run in one process instead, each in a suite named by its path (so its top-level hooks stay its own).
// A file runs alone when it changes what the whole process shares: the environment, the working directory, tfjs's
// flags, kernels, the BLAS threads, the runtime's registries (a workflow, a reward, a plugin folder), mocked timers or
// methods, process listeners, V8's flags, or it measures the process's memory (loading plugins registers their
// workflows). So do the e2e files (each holds a code-server session and its Chromium) and the packaging test.
// The tfjs backend is the process's too (runtime/engine/backend/init.ts initialises it once): a folder's files that
// ask for one backend share a process apart from those that ask for another or none; one that leaves the choice to
// initBackend ('auto'), or asks for two, runs alone.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

const PROCESS_WIDE = new RegExp(
  [
    /process\.chdir/,
    /process\.env(\.\w+|\[[^\]]+\])\s*=[^=]/,
    /delete process\.env/,
    /Object\.assign\(process\.env/,
    /env\(\)\.set\(/,
    /setFlags\(/,
    /registerKernel\(/,
    /setBlasThreads\(/,
    /useNativeMatmul\(/,
    /mock\.(timers|method)/,
    /process\.on\(/,
    /setFlagsFromString|memoryUsage/,
    /\bregister(Workflow|Reward)\(|pluginDirs|loadRuntimePlugins\(/,
  ]
    .map((r) => r.source)
    .join('|'),
);
const BACKEND =
  /setBackend\('(\w+)'\)|initBackend\(\{\s*prefer: '(\w+)'\s*\}\)|initBackend\((\{\s*\})?\)|startWebgpuGuarded/g;
const ALONE_DIRS = ['test/e2e/', 'test/packaging/'];

/** The tfjs backends a file's text asks for ('auto' where it leaves the choice to initBackend). */
function backendsAsked(text) {
  const asked = new Set();
  for (const m of text.matchAll(BACKEND))
    asked.add(m[1] ?? m[2] ?? (m[0].startsWith('startWebgpu') ? 'webgpu' : 'auto'));
  return asked;
}

/** A file's text with that of the test helpers it imports (`./helpers`, `../../helpers/webgpu`: not sources). */
function withHelpers(file, read) {
  const text = read(file);
  const helpers = [...text.matchAll(/from '(\.\.?\/[^']+)'/g)]
    .map((m) => join(dirname(file), `${m[1]}.ts`))
    .filter((p) => p.replaceAll('\\', '/').startsWith('test/') && existsSync(p));
  return [text, ...helpers.map((p) => read(p))].join('\n');
}

/**
 * The process a test file may share, by folder and backend: a key, or undefined when it must run alone (its path,
 * its text with its helpers').
 */
export function processKey(file, text) {
  const path = file.replaceAll('\\', '/');
  if (ALONE_DIRS.some((d) => path.startsWith(d)) || PROCESS_WIDE.test(text)) return undefined;
  const asked = [...backendsAsked(text)];
  if (asked.length > 1 || asked.includes('auto')) return undefined;
  return `${dirname(path)} ${asked[0] ?? ''}`;
}

/**
 * The files in processes, in their given order: the files that share a key form one group (at the place of its first
 * file), every other file a group of its own.
 */
export function processGroups(files, read = (f) => readFileSync(f, 'utf8')) {
  const groups = [];
  const shared = new Map();
  for (const file of files) {
    const key = processKey(file, withHelpers(file, read));
    if (key === undefined) {
      groups.push([file]);
      continue;
    }
    let group = shared.get(key);
    if (!group) shared.set(key, (group = [])) && groups.push(group);
    group.push(file);
  }
  return groups;
}

/** The text of a CommonJS entry that runs `files` (absolute paths; `names` as the report shows them) in one process. */
export function groupEntry(files, names) {
  const lines = ["const { describe } = require('node:test');"];
  files.forEach((f, i) =>
    lines.push(`describe(${JSON.stringify(names[i])}, () => {\n  require(${JSON.stringify(f)});\n});`),
  );
  return lines.join('\n') + '\n';
}
