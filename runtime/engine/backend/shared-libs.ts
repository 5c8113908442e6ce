/** Whether Linux's dynamic loader would find a shared library, without loading it. */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

let ldCache: Buffer | null | undefined;

/**
 * Where `name` (e.g. `libvulkan.so.1`) is: a path in $LD_LIBRARY_PATH or a standard library directory, else
 * `ld.so.cache` when the loader's cache lists it, else null. Linux only (elsewhere: null).
 */
export function findSharedLib(name: string): string | null {
  if (process.platform !== 'linux') return null;
  const dirs = [
    ...(process.env.LD_LIBRARY_PATH ?? '').split(':').filter(Boolean),
    `/usr/lib/${process.arch === 'arm64' ? 'aarch64' : 'x86_64'}-linux-gnu`,
    '/usr/lib64',
    '/usr/lib',
    '/usr/local/lib',
    '/lib64',
    '/lib',
  ];
  for (const d of dirs) if (existsSync(join(d, name))) return join(d, name);
  if (ldCache === undefined) {
    try {
      ldCache = readFileSync('/etc/ld.so.cache');
    } catch {
      ldCache = null;
    }
  }
  return ldCache?.includes(`${name}\0`) ? 'ld.so.cache' : null;
}
