// Packages the extension as a linux-x64 platform VSIX with @vscode/vsce, from what `npm run build` left in dist/.
// What goes in is the allowlist in .vscodeignore: the bundles, schemas, grammars, media, and the runtime's external
// packages (tfjs, better-sqlite3, webgpu) with only the files Node loads, plus the OpenBLAS addon. vsce collects
// node_modules through `npm list --production` and the allowlist filters it: `vsce --no-dependencies` would leave
// node_modules out entirely, and the runtime cannot start without tfjs.
//
//   node package-vsix.mjs [--out DIR]      (default dist-vsix/; `npm run package` builds dist/ first)
//
// Prints the VSIX's path as the last line of stdout.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(fileURLToPath(import.meta.url));
const TARGET = 'linux-x64';

function fail(message) {
  console.error(`package-vsix: ${message}`);
  process.exit(1);
}

const args = process.argv.slice(2);
let outDir = join(root, 'dist-vsix');
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--out' && args[i + 1]) outDir = resolve(args[++i]);
  else fail(`unknown argument ${args[i]} (usage: node package-vsix.mjs [--out DIR])`);
}

// The native addons in the VSIX are this machine's builds, so only a linux-x64 machine can package linux-x64.
const host = `${process.platform}-${process.arch}`;
if (host !== TARGET) fail(`this packages the addons built here (${host}) as a ${TARGET} VSIX; package on ${TARGET}`);

const required = [
  ...['extension', 'server', 'cli', 'explorer-worker', 'prompt-tokens-worker'].map((n) => [
    `dist/${n}.js`,
    'run `npm run build` (or `npm run package`, which builds first)',
  ]),
  ['node_modules/@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm', 'run `npm ci`'],
  [
    'node_modules/better-sqlite3/build/Release/better_sqlite3.node',
    'run `npm rebuild better-sqlite3` (needs python3, make, g++)',
  ],
  [
    'native/blas-matmul/build/Release/blas_matmul.node',
    'run `npm run build:native -- --strict` (needs libopenblas-dev)',
  ],
];
for (const [file, fix] of required) if (!existsSync(join(root, file))) fail(`${file} is missing: ${fix}`);

const { name, version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
mkdirSync(outDir, { recursive: true });
const vsix = join(outDir, `${name}-${TARGET}-${version}.vsix`);
const vsce = join(root, 'node_modules', '@vscode', 'vsce', 'vsce');
// No repository URL is published yet: --allow-missing-repository, and README links stay relative.
const r = spawnSync(
  process.execPath,
  [vsce, 'package', '--target', TARGET, '--allow-missing-repository', '--no-rewrite-relative-links', '--out', vsix],
  {
    cwd: root,
    stdio: ['ignore', 'inherit', 'inherit'],
  },
);
if (r.status !== 0) fail(`vsce package failed (exit ${r.status ?? r.signal})`);
console.log(vsix);
