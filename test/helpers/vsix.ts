/**
 * The platform VSIX as `npm run package` makes it, built once per test run from what `npm run build` left in dist/
 * (`package-vsix.mjs --out <temp dir>`, so a developer's dist-vsix/ is never touched). Test files run in separate
 * processes of one `node --test`, so the cache is a temp folder named by that runner's pid and a hash of every
 * input (bundles, manifest, allowlist, lock file, native addons): a changed input packages again.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { alive } from './process';

export const ROOT = resolve(__dirname, '..', '..');
const PREFIX = 'trinity-workbench-vsix-';

const INPUTS = [
  'dist/extension.js',
  'dist/server.js',
  'dist/cli.js',
  'dist/explorer-worker.js',
  'dist/prompt-tokens-worker.js',
  'dist/media/dashboard.js',
  'dist/media/dashboard.css',
  'package.json',
  'package-lock.json',
  '.vscodeignore',
  'package-vsix.mjs',
  'README.md',
  'LICENSE',
  'native/blas-matmul/build/Release/blas_matmul.node',
  'node_modules/better-sqlite3/build/Release/better_sqlite3.node',
];

function inputsHash(): string {
  const h = createHash('sha256');
  for (const f of INPUTS) {
    const p = join(ROOT, f);
    h.update(f).update(existsSync(p) ? new Uint8Array(readFileSync(p)) : 'missing');
  }
  for (const dir of ['schemas', 'syntaxes', 'media']) {
    if (!existsSync(join(ROOT, dir))) continue;
    for (const f of readdirSync(join(ROOT, dir), { recursive: true }).map(String).sort()) {
      const p = join(ROOT, dir, f);
      try {
        h.update(`${dir}/${f}`).update(new Uint8Array(readFileSync(p)));
      } catch {
        // a folder
      }
    }
  }
  return h.digest('hex').slice(0, 16);
}

/** Removes caches of test runs that have ended. */
function sweep(): void {
  for (const name of readdirSync(tmpdir())) {
    const pid = Number(name.startsWith(PREFIX) ? name.slice(PREFIX.length).split('-')[0] : NaN);
    if (Number.isInteger(pid) && pid !== process.ppid && !alive(pid))
      rmSync(join(tmpdir(), name), { recursive: true, force: true });
  }
}

export interface BuiltVsix {
  /** Absolute path of the .vsix file (outside the repository). */
  path: string;
  /** Seconds `package-vsix.mjs` took, or 0 when this run had already built it. */
  seconds: number;
}

let built: BuiltVsix | undefined;

/** Packages the VSIX (or reuses this test run's); throws with vsce's output when packaging fails. */
export function buildVsix(): BuiltVsix {
  if (built && existsSync(built.path)) return built;
  sweep();
  const cache = join(tmpdir(), `${PREFIX}${process.ppid}-${inputsHash()}`);
  const { name, version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    name: string;
    version: string;
  };
  const file = `${name}-linux-x64-${version}.vsix`;
  if (!existsSync(join(cache, file))) {
    const work = mkdtempSync(join(tmpdir(), `${PREFIX}build-`));
    const t0 = performance.now();
    const r = spawnSync(process.execPath, [join(ROOT, 'package-vsix.mjs'), '--out', work], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    if (r.status !== 0) throw new Error(`package-vsix.mjs failed (${r.status ?? r.signal}):\n${r.stdout}\n${r.stderr}`);
    const seconds = (performance.now() - t0) / 1000;
    // Another test file of this run may have finished first: then its copy stands, and this one is dropped.
    try {
      renameSync(work, cache);
    } catch {
      rmSync(work, { recursive: true, force: true });
    }
    built = { path: join(cache, file), seconds };
  } else {
    built = { path: join(cache, file), seconds: 0 };
  }
  return built;
}
