// Builds the native BLAS matmul addon (build/Release/blas_matmul.node) with node-gyp, offline.
//
//   node native/blas-matmul/build.mjs            (npm run build:native; npm's postinstall)
//   node native/blas-matmul/build.mjs --strict   (CI: a failed build is an error)
//
// node-gyp is npm's own copy (no download). The Node headers come from $npm_config_nodedir when set, else from
// <node prefix>/include/node when present (Debian's nodejs and the official tarballs ship them), else node-gyp
// fetches them. Needs a C compiler, make, python3 and OpenBLAS with cblas.h (Debian: apt-get install
// libopenblas-dev). Without --strict a failed build only warns: the engine then runs on plain wasm.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const strict = process.argv.includes('--strict');

function nodeGyp() {
  const candidates = [
    process.env.npm_config_node_gyp,
    process.env.npm_execpath && join(dirname(process.env.npm_execpath), '..', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
    join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
  ];
  return candidates.find((p) => p && existsSync(p));
}

function fail(msg) {
  const text = `native/blas-matmul: ${msg}\n  The engine will run without the OpenBLAS matmul (plain wasm, 1.4–2.4x slower training).\n  To build it: apt-get install libopenblas-dev (plus gcc, make, python3), then npm run build:native.`;
  if (strict) {
    console.error(`error: ${text}`);
    process.exit(1);
  }
  console.warn(`warning: ${text}`);
  process.exit(0);
}

const gyp = nodeGyp();
if (!gyp) fail("npm's node-gyp was not found");
const args = [gyp, 'rebuild', '--release'];
const prefix = join(dirname(process.execPath), '..');
if (!process.env.npm_config_nodedir && existsSync(join(prefix, 'include', 'node', 'node_api.h'))) args.push(`--nodedir=${prefix}`);
const r = spawnSync(process.execPath, args, { cwd: here, stdio: ['ignore', 'inherit', 'inherit'] });
if (r.error) fail(`node-gyp did not run: ${r.error.message}`);
if (r.status !== 0) fail(`node-gyp rebuild failed (exit ${r.status}); its output is above`);
const out = join(here, 'build', 'Release', 'blas_matmul.node');
if (!existsSync(out)) fail(`node-gyp succeeded but ${out} is missing`);
// Load it once here, so a missing libopenblas.so.0 shows now rather than as a silent fallback later.
const check = spawnSync(process.execPath, ['-e', `const m = require(${JSON.stringify(out)}); m.setThreads(1); process.stdout.write(m.config())`], { encoding: 'utf8' });
if (check.status !== 0) fail(`built, but it does not load: ${(check.stderr || '').trim().split('\n')[0]}`);
console.log(`native/blas-matmul: built ${out} (${check.stdout.trim()})`);
