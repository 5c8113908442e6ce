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
    process.env.npm_execpath &&
      join(dirname(process.env.npm_execpath), '..', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
    join(
      dirname(process.execPath),
      '..',
      'lib',
      'node_modules',
      'npm',
      'node_modules',
      'node-gyp',
      'bin',
      'node-gyp.js',
    ),
  ];
  return candidates.find((p) => p && existsSync(p));
}

/** Without --strict (npm's postinstall) one line says the matmul is off and why; with it (CI), an error. */
function fail(msg, detail = '') {
  if (strict) {
    console.error(
      `${detail}error: native/blas-matmul: ${msg}\n  To build it: apt-get install libopenblas-dev (plus gcc, make, python3), then npm run build:native.`,
    );
    process.exit(1);
  }
  console.warn(
    `native/blas-matmul: off (${msg}); the engine runs on plain wasm, 1.4–2.4x slower training. Fix: apt-get install libopenblas-dev, then npm run build:native`,
  );
  process.exit(0);
}

const hasCblas = spawnSync('cc', ['-E', '-x', 'c', '-'], {
  input: '#include <cblas.h>\n',
  stdio: ['pipe', 'ignore', 'ignore'],
});
if (hasCblas.error)
  fail(
    hasCblas.error.code === 'ENOENT'
      ? 'no C compiler (cc) found'
      : `cc did not run: ${hasCblas.error.code ?? hasCblas.error.message}`,
  );
if (hasCblas.status !== 0) fail('cblas.h not found: OpenBLAS is not installed');

const gyp = nodeGyp();
if (!gyp) fail("npm's node-gyp was not found");
const args = [gyp, 'rebuild', '--release'];
const prefix = join(dirname(process.execPath), '..');
if (!process.env.npm_config_nodedir && existsSync(join(prefix, 'include', 'node', 'node_api.h')))
  args.push(`--nodedir=${prefix}`);
// node-gyp's output is shown only when it fails under --strict (a postinstall warning stays one line).
const r = spawnSync(process.execPath, args, { cwd: here, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
if (r.error) fail(`node-gyp did not run: ${r.error.message}`);
if (r.status !== 0) fail(`node-gyp rebuild failed (exit ${r.status})`, `${r.stdout}${r.stderr}`);
const out = join(here, 'build', 'Release', 'blas_matmul.node');
if (!existsSync(out)) fail(`node-gyp succeeded but ${out} is missing`);
// Load it once here, so a missing libopenblas.so.0 shows now rather than as a silent fallback later.
const check = spawnSync(
  process.execPath,
  ['-e', `const m = require(${JSON.stringify(out)}); m.setThreads(1); process.stdout.write(m.config())`],
  { encoding: 'utf8' },
);
if (check.status !== 0) fail(`built, but it does not load: ${(check.stderr || '').trim().split('\n')[0]}`);
console.log(`native/blas-matmul: built ${out} (${check.stdout.trim()})`);
