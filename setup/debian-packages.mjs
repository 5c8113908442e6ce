// The Debian packages this repository's commands need, and installing the missing ones: with apt-get when this user
// may run it (root, or password-less sudo), else the command line to run. Shared by `npm test`'s set-up
// (test/setup/prepare.mjs) and `npm run demo`'s (setup/demo.mjs).
import { spawnSync } from 'node:child_process';

/** @typedef {{ what: string, packages: string[], present: () => boolean }} Need */

/** Whether a command exits 0 (its output discarded; `input` on its stdin). */
export const succeeds = (cmd, args, input) =>
  spawnSync(cmd, args, { input, stdio: ['pipe', 'ignore', 'ignore'] }).status === 0;

/** @type {Need} A C compiler, make and python3: node-gyp's tools for the native addon. */
export const BUILD_TOOLS = {
  what: 'a C compiler, make and python3 (to build the native OpenBLAS matmul addon)',
  packages: ['gcc', 'make', 'python3'],
  present: () => succeeds('sh', ['-c', 'command -v cc && command -v make && command -v python3']),
};

/** @type {Need} OpenBLAS with its headers: what the native matmul addon builds and runs against. */
export const OPENBLAS = {
  what: 'OpenBLAS headers (the native matmul addon)',
  packages: ['libopenblas-dev'],
  present: () => succeeds('cc', ['-E', '-x', 'c', '-'], '#include <cblas.h>\n'),
};

/** The apt-get command this user may run: as root, through password-less sudo, or none. */
export function aptGetCommand() {
  if (process.getuid?.() === 0) return ['apt-get'];
  if (succeeds('sudo', ['-n', 'true'])) return ['sudo', 'apt-get'];
  return undefined;
}

/** The line a user without those rights runs. */
export const installLine = (packages) => `sudo apt-get install -y ${packages.join(' ')}`;

/** Runs a command with its stderr shown; true when it exits 0. */
function runShowingErrors(argv, env) {
  return spawnSync(argv[0], argv.slice(1), { env, stdio: ['ignore', 'ignore', 'inherit'] }).status === 0;
}

/**
 * Installs the packages of the needs that are missing.
 * `apt` is the apt-get command this user may run (none: nothing is installed) and `run` runs a command line; both
 * are parameters so that the set-up can be tested on a machine that has everything.
 * @param {Need[]} needs
 * @param {{ apt?: string[], run?: (argv: string[], env: NodeJS.ProcessEnv) => boolean, log?: (line: string) => void }} [o]
 * @returns {{ missing: Need[], packages: string[], installed: boolean, canInstall: boolean }}
 *   the needs missing before, their packages, and whether apt-get installed them all (true when none was missing)
 */
export function installMissing(needs, { apt = aptGetCommand(), run = runShowingErrors, log = console.log } = {}) {
  const missing = needs.filter((n) => !n.present());
  const packages = [...new Set(missing.flatMap((n) => n.packages))];
  if (missing.length === 0) return { missing, packages, installed: true, canInstall: true };
  if (!apt) return { missing, packages, installed: false, canInstall: false };
  log(`installing ${packages.join(' ')} (apt-get)`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  // Another apt-get (unattended upgrades, a second set-up) may hold the lock for a while: wait for it.
  const install = () =>
    run([...apt, '-o', 'DPkg::Lock::Timeout=300', 'install', '-y', '-qq', '--no-install-recommends', ...packages], env);
  let installed = install();
  if (!installed) {
    // A fresh machine may have no package lists yet.
    run([...apt, '-o', 'DPkg::Lock::Timeout=300', 'update', '-qq'], env);
    installed = install();
  }
  return { missing, packages, installed: installed && missing.every((n) => n.present()), canInstall: true };
}
