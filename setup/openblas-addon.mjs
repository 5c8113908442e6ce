// The native OpenBLAS matmul addon (native/blas-matmul): whether it loads in this Node, and building it. Shared by
// `npm test`'s set-up and `npm run demo`'s; `npm ci`'s postinstall builds it too, but before any apt-get could
// install OpenBLAS, so on a fresh machine the set-ups build it again once the package is there.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ADDON_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'native', 'blas-matmul');
export const ADDON = join(ADDON_DIR, 'build', 'Release', 'blas_matmul.node');

/** Whether the built addon loads in this Node (libopenblas found, the ABI right). */
export function addonLoads() {
  return (
    existsSync(ADDON) &&
    spawnSync(process.execPath, ['-e', `require(${JSON.stringify(ADDON)})`], { stdio: 'ignore' }).status === 0
  );
}

/** Builds it (its output shown); with `strict`, a failed build exits non-zero. True when the build succeeded. */
export function buildAddon({ strict = false } = {}) {
  const r = spawnSync(process.execPath, [join(ADDON_DIR, 'build.mjs'), ...(strict ? ['--strict'] : [])], {
    stdio: 'inherit',
  });
  return r.status === 0;
}
