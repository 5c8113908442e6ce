// `npm run demo`'s set-up, before the build: OpenBLAS (and the tools to build against it) from Debian when this user
// may install them, then the native matmul addon, so that the demo's first run trains with OpenBLAS matmuls as
// `npm test`'s set-up has them. Without the rights to install, one line names the command and the demo runs on
// plain wasm. A no-op (a fraction of a second) when the addon already loads.
import { pathToFileURL } from 'node:url';
import { BUILD_TOOLS, OPENBLAS, installLine, installMissing } from './debian-packages.mjs';
import { addonLoads, buildAddon } from './openblas-addon.mjs';

/**
 * @param {object} [o] the checks and commands, replaceable so that the set-up can be tested on a machine that has
 *   everything: the needs (their `present` checks), the apt-get command (null: this user may not run it), the
 *   command runner, the addon's check and build, and where lines go
 * @returns {'openblas' | 'plain-wasm'} whether the demo will have the OpenBLAS matmul
 */
export function prepareDemo({
  needs = [BUILD_TOOLS, OPENBLAS],
  apt,
  run,
  loads = addonLoads,
  build = () => buildAddon(),
  log = (line) => console.log(`demo set-up: ${line}`),
} = {}) {
  if (loads()) return 'openblas';
  const r = installMissing(needs, { apt, run, log });
  if (!r.installed) {
    log(
      r.canInstall
        ? `apt-get could not install ${r.packages.join(' ')} (its messages are above); the demo runs on plain wasm, about 2x slower`
        : `OpenBLAS is missing and this user may not install it; the demo runs on plain wasm, about 2x slower. For full speed: ${installLine(r.packages)} && npm run build:native`,
    );
    return 'plain-wasm';
  }
  log('building the native OpenBLAS matmul addon');
  if (build() && loads()) return 'openblas';
  log('the OpenBLAS matmul addon did not build (its output is above); the demo runs on plain wasm, about 2x slower');
  return 'plain-wasm';
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) prepareDemo();
