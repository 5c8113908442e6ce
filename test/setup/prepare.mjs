// The test suite's set-up on a fresh machine, run by `npm test` before anything else: Debian packages the tests
// use (installed when this user may run apt-get, as root or through sudo), the OpenBLAS matmul addon, and the
// Trinity-RFT corpus. Whatever it cannot provide stops the run here, with one message that says how to provide it,
// rather than as dozens of failing tests later. A no-op (well under a second) when everything is present.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUILD_TOOLS, installLine, installMissing, OPENBLAS, succeeds } from '../../setup/debian-packages.mjs';
import { addonLoads, buildAddon } from '../../setup/openblas-addon.mjs';
import { cacheDir, fetchCorpus, locateCorpus, TRINITY_RFT_URL } from './corpus-source.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Each need: a check, and the Debian packages that satisfy it. */
const NEEDS = [
  BUILD_TOOLS,
  OPENBLAS,
  {
    what: "the Vulkan loader (the webgpu backend's tests run Dawn on SwiftShader, which Debian's chromium ships)",
    packages: ['libvulkan1'],
    present: () => succeeds('sh', ['-c', 'ldconfig -p | grep -q "libvulkan\\.so\\.1 "']),
  },
  {
    what: 'unzip (the packaging test reads the VSIX)',
    packages: ['unzip'],
    present: () => succeeds('sh', ['-c', 'command -v unzip']),
  },
  {
    what: "Debian's Python with protobuf and PyYAML (the independent event-file writer, the Trinity-RFT stand-in)",
    packages: ['python3', 'python3-protobuf', 'python3-yaml'],
    present: () => succeeds('/usr/bin/python3', ['-c', 'import google.protobuf, yaml']),
  },
  {
    what: "Debian's NumPy (the oracle the FrozenLake maps and slippery moves are checked against)",
    packages: ['python3-numpy'],
    present: () => succeeds('/usr/bin/python3', ['-c', 'import numpy']),
  },
];

function stop(lines) {
  console.error(`\nnpm test cannot start:\n${lines.map((l) => `  ${l}`).join('\n')}\n`);
  process.exit(1);
}

function installPackages() {
  const r = installMissing(NEEDS, { log: (line) => console.log(`test set-up: ${line}`) });
  if (r.installed) return;
  if (!r.canInstall) {
    stop([
      ...r.missing.map((n) => `missing: ${n.what}`),
      `install them, then run npm test again:  ${installLine(r.packages)}`,
      `(this user (${process.env.USER ?? 'uid ' + process.getuid?.()}) is not root and has no password-less sudo)`,
    ]);
  }
  stop([`apt-get could not install ${r.packages.join(' ')} (its messages are above)`]);
}

/** A fresh clone has no node_modules: install exactly the lockfile (after the packages, so the addon builds). */
function installNodeModules() {
  if (existsSync(join(ROOT, 'node_modules', '.package-lock.json'))) return;
  console.log('test set-up: npm ci');
  const npm = process.env.npm_execpath ? [process.execPath, process.env.npm_execpath] : ['npm'];
  const r = spawnSync(npm[0], [...npm.slice(1), 'ci', '--no-audit', '--no-fund'], { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) stop(['npm ci failed (its output is above)']);
}

function buildNative() {
  if (addonLoads()) return;
  console.log('test set-up: building the OpenBLAS matmul addon');
  if (!buildAddon({ strict: true }))
    stop(['the OpenBLAS matmul addon did not build (the engine tests need it); its output is above']);
}

/** Real VS Code (code-server) and Debian's Chromium for test/e2e, cached outside the repository. */
function installCodeServer() {
  const r = spawnSync('bash', [join(ROOT, '.ci', 'code-server.sh')], { stdio: ['ignore', 'ignore', 'inherit'] });
  if (r.status !== 0)
    stop(['code-server (real VS Code for test/e2e) did not install (.ci/code-server.sh; its output is above)']);
}

async function provideCorpus() {
  if (locateCorpus(ROOT)) return;
  if (process.env.TRINITY_CORPUS_DIR) {
    stop([
      `TRINITY_CORPUS_DIR=${process.env.TRINITY_CORPUS_DIR} holds no trinity-configs/ and data/: point it at the Trinity corpus, or unset it`,
    ]);
  }
  console.log(
    `test set-up: no Trinity corpus at ../shared/corpus or ${join(cacheDir(), 'corpus')}; fetching Trinity-RFT's files at the pinned commits`,
  );
  try {
    const { dir, counts } = await fetchCorpus(process.env.TRINITY_RFT_GIT_URL ?? TRINITY_RFT_URL);
    console.log(
      `test set-up: corpus in ${dir} (${Object.entries(counts)
        .map(([r, n]) => `${r} ${n}`)
        .join(', ')} configs)`,
    );
  } catch (e) {
    stop([
      `no Trinity corpus, and it could not be fetched: ${e.message}`,
      'provide it in one of these ways, then run npm test again:',
      '  - set TRINITY_CORPUS_DIR to a folder holding trinity-configs/<release>/ and data/ (developer machines have ../shared/corpus)',
      `  - or let this machine reach ${TRINITY_RFT_URL} (or set TRINITY_RFT_GIT_URL to a clone of it)`,
    ]);
  }
}

installPackages();
installNodeModules();
await provideCorpus();
buildNative();
installCodeServer();
