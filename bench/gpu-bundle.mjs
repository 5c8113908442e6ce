// `npm run gpu:bundle`: the GPU check (bench/gpu-check.sh) as a folder a machine with nothing but Linux, a GPU
// driver and Python can run: the lent GPU machine has no Node, nothing can be fetched there, and a call carries
// at most 64 MiB. Writes .gpu/ (ignored by git):
//   app.tar.xz   this machine's Node binary, the runtime as the VSIX ships it (dist/cli.js and the worker, the
//                node_modules files .vscodeignore lets in: tfjs with its wasm binaries, Dawn's webgpu addon,
//                better-sqlite3), the checks of bench/gpu-checks.json compiled to plain JavaScript at their own paths
//                (run with Node's own test runner; no tsx there) and the files they read (the PyTorch-reference
//                fixtures, the PyTorch peer), and bench/gpu-check.sh
//   vulkan/*.deb the Vulkan loader and the GL dispatch libraries the NVIDIA ICD needs (Debian's, downloaded once into
//                ~/.cache/trinity-workbench), unpacked there only when the system has no libvulkan.so.1
//   run.sh       the entry: unpack, point Dawn at the NVIDIA ICD, run the check, leave results in $OUT
// The OpenBLAS addon stays out (the GPU machine has no libopenblas): wasm runs on its own kernels there.
//
//   node bench/gpu-bundle.mjs [--out DIR] [--xz-level 0-9]     (npm run gpu:bundle builds dist/ first)
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** What one device call may carry is 64 MiB with the working tree; the bundle keeps to this. */
export const MAX_BUNDLE_BYTES = 50 * 1024 * 1024;
/** The Vulkan loader and what the NVIDIA ICD's libGLX_nvidia loads (the device notes' list). */
const VULKAN_PACKAGES = ['libvulkan1', 'libegl1', 'libglvnd0', 'libopengl0', 'libgl1', 'libglx0', 'libgles2'];

function fail(message) {
  console.error(`gpu-bundle: ${message}`);
  process.exit(1);
}

function parseArgs(argv) {
  const o = { out: join(ROOT, '.gpu'), xzLevel: 6 };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--out' && argv[i + 1]) o.out = resolve(argv[++i]);
    else if (argv[i] === '--xz-level' && /^\d$/.test(argv[i + 1] ?? '')) o.xzLevel = Number(argv[++i]);
    else fail(`unknown argument ${argv[i]} (usage: node bench/gpu-bundle.mjs [--out DIR] [--xz-level 0-9])`);
  }
  return o;
}

/** A .vscodeignore pattern as a regular expression over repository-relative paths. */
function globToRegExp(glob) {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '*' && glob[i + 1] === '*') {
      re += '.*';
      i++;
    } else if (c === '*') re += '[^/]*';
    else re += c.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

function walk(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...walk(p));
    else out.push(p);
  }
  return out;
}

/** The runtime's node_modules files the VSIX ships: .vscodeignore's `!node_modules/...` lines, one source of truth. */
function runtimePackageFiles() {
  const patterns = readFileSync(join(ROOT, '.vscodeignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('!node_modules/'))
    .map((l) => l.slice(1));
  const files = new Set();
  for (const pattern of patterns) {
    // The package folder (node_modules/name or node_modules/@scope/name) holds every file the pattern can match.
    const parts = pattern.split('/');
    const pkg = parts.slice(0, parts[1].startsWith('@') ? 3 : 2).join('/');
    const re = globToRegExp(pattern);
    const matched = walk(join(ROOT, pkg))
      .map((f) => relative(ROOT, f))
      .filter((f) => re.test(f));
    if (matched.length === 0) fail(`.vscodeignore's ${pattern} matches nothing: run npm ci`);
    for (const f of matched) files.add(f);
  }
  return [...files];
}

/**
 * esbuild plugin: each source file's `__dirname` becomes its own folder in the unpacked bundle (the checks find their
 * fixtures and dist/cli.js relative to where their source lives), whichever output file it is bundled into.
 */
function sourceDirname() {
  return {
    name: 'source-dirname',
    setup(b) {
      b.onLoad({ filter: /\.ts$/ }, (args) => {
        const rel = relative(ROOT, dirname(args.path));
        if (rel.startsWith('..') || rel.startsWith('node_modules')) return undefined;
        const contents = readFileSync(args.path, 'utf8').replace(/\b__dirname\b/g, `__twbDir(${JSON.stringify(rel)})`);
        return { contents, loader: 'ts' };
      });
    },
  };
}

/** tfjs stays in node_modules (it loads its wasm files beside itself), but for the gradients, as esbuild.mjs does. */
const tfjsExternal = {
  name: 'tfjs-external',
  setup(b) {
    b.onResolve({ filter: /^@tensorflow\// }, (args) =>
      args.path.includes('register_all_gradients') ? undefined : { path: args.path, external: true },
    );
  },
};

/** A check (test or bench script) compiled to <app>/<its path>.js. */
async function compile(entry, app) {
  const outfile = join(app, entry.replace(/\.ts$/, '.js'));
  const toRoot = relative(dirname(outfile), app) || '.';
  await build({
    entryPoints: [join(ROOT, entry)],
    outfile,
    bundle: true,
    platform: 'node',
    mainFields: ['module', 'main'],
    target: 'node20',
    format: 'cjs',
    banner: {
      js: `const __twbRoot = require("node:path").resolve(__dirname, ${JSON.stringify(toRoot)});\nconst __twbDir = (rel) => require("node:path").join(__twbRoot, rel);`,
    },
    external: ['vscode', 'webgpu', 'better-sqlite3', 'tsx/cjs'],
    plugins: [tfjsExternal, sourceDirname()],
    logLevel: 'warning',
  });
}

/** Debian's Vulkan loader packages (amd64, whatever this machine is), downloaded once into the cache. */
function vulkanDebs() {
  const cache = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'trinity-workbench', 'vulkan-debs');
  const have = () =>
    existsSync(cache) ? readdirSync(cache).filter((f) => VULKAN_PACKAGES.some((p) => f.startsWith(`${p}_`))) : [];
  if (new Set(have().map((f) => f.split('_')[0])).size < VULKAN_PACKAGES.length) {
    mkdirSync(cache, { recursive: true });
    const lists = mkdtempSync(join(tmpdir(), 'apt-amd64-'));
    mkdirSync(join(lists, 'partial'));
    const o = ['-oAPT::Architecture=amd64', '-oAPT::Architectures=amd64', `-oDir::State::Lists=${lists}`];
    // As root, apt would hand the download to its _apt user, who cannot write to these folders.
    if (process.getuid?.() === 0) o.push('-oAPT::Sandbox::User=root');
    console.log(`gpu-bundle: apt-get download ${VULKAN_PACKAGES.join(' ')}`);
    const update = spawnSync('apt-get', [...o, '-qq', 'update'], { stdio: ['ignore', 'ignore', 'inherit'] });
    const dl = spawnSync('apt-get', [...o, 'download', ...VULKAN_PACKAGES], {
      cwd: cache,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    rmSync(lists, { recursive: true, force: true });
    if (update.status !== 0 || dl.status !== 0)
      fail(
        `apt-get could not download the Vulkan loader packages (${VULKAN_PACKAGES.join(' ')}); its messages are above`,
      );
  }
  return have().map((f) => join(cache, f));
}

function sh(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'], ...opts });
  if (r.status !== 0) fail(`${cmd} ${args.join(' ')} failed (exit ${r.status})`);
}

export async function makeBundle({ out, xzLevel }) {
  const checks = JSON.parse(readFileSync(join(ROOT, 'bench', 'gpu-checks.json'), 'utf8'));
  for (const f of ['dist/cli.js', 'dist/explorer-worker.js'])
    if (!existsSync(join(ROOT, f))) fail(`${f} is missing: run npm run build (npm run gpu:bundle does)`);
  const stage = mkdtempSync(join(tmpdir(), 'gpu-bundle-'));
  const app = join(stage, 'app');
  try {
    mkdirSync(join(app, 'bin'), { recursive: true });
    copyFileSync(process.execPath, join(app, 'bin', 'node'));
    chmodSync(join(app, 'bin', 'node'), 0o755);
    for (const f of ['dist/cli.js', 'dist/explorer-worker.js', ...runtimePackageFiles()]) {
      mkdirSync(dirname(join(app, f)), { recursive: true });
      copyFileSync(join(ROOT, f), join(app, f));
    }
    for (const entry of [...checks.tests, ...checks.scripts]) await compile(entry, app);
    for (const f of checks.files) cpSync(join(ROOT, f), join(app, f), { recursive: true });
    cpSync(join(ROOT, 'bench', 'gpu-checks.json'), join(app, 'bench', 'gpu-checks.json'));

    rmSync(out, { recursive: true, force: true });
    mkdirSync(join(out, 'vulkan'), { recursive: true });
    console.log(`gpu-bundle: compressing (xz -${xzLevel})`);
    sh('sh', ['-c', `tar -C "$1" -cf - app | xz -T0 -${xzLevel} >"$2"`, 'tar', stage, join(out, 'app.tar.xz')]);
    for (const deb of vulkanDebs()) copyFileSync(deb, join(out, 'vulkan', deb.split('/').pop()));
    copyFileSync(join(ROOT, 'bench', 'gpu-run.sh'), join(out, 'run.sh'));
    chmodSync(join(out, 'run.sh'), 0o755);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
  const files = walk(out).map((f) => ({ path: relative(out, f), bytes: statSync(f).size }));
  const total = files.reduce((s, f) => s + f.bytes, 0);
  return { files, total };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const opts = parseArgs(process.argv.slice(2));
  const { files, total } = await makeBundle(opts);
  const mib = (b) => `${(b / 1024 / 1024).toFixed(1)} MiB`;
  for (const f of files) console.log(`  ${f.path.padEnd(40)} ${mib(f.bytes)}`);
  console.log(`gpu-bundle: ${opts.out} ${mib(total)} (limit ${mib(MAX_BUNDLE_BYTES)})`);
  if (total > MAX_BUNDLE_BYTES) fail(`the bundle is ${mib(total)}, over ${mib(MAX_BUNDLE_BYTES)}`);
}
