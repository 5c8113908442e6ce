/**
 * A folder packed as a Ray `working_dir` package, the way Ray's job client does it: a zip of the folder's files
 * (paths relative to the folder, no top-level directory), named by a hash of their paths and contents,
 * `_ray_pkg_<hash>.zip`, and referred to as `gcs://_ray_pkg_<hash>.zip` once uploaded to the cluster's GCS.
 * Same files, same name: a package the cluster already holds is not uploaded again.
 *
 * Left out: `.git`, `node_modules`, `__pycache__`, virtual environments, and the folders given in `exclude` (the
 * job's checkpoints when they sit inside the folder). `.gitignore` files are not read (Ray's client reads them).
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { zipSync, type Zippable } from 'fflate';

/** Ray's GCS package limit (ray/_private/runtime_env/packaging.py: GCS_STORAGE_MAX_SIZE). */
export const RAY_PACKAGE_MAX_BYTES = 100 * 1024 * 1024;

const SKIPPED = new Set(['.git', 'node_modules', '__pycache__', '.venv', 'venv', '.mypy_cache', '.pytest_cache']);

export interface RayPackage {
  /** `_ray_pkg_<hash>.zip` */
  name: string;
  /** `gcs://_ray_pkg_<hash>.zip`, for `runtime_env.working_dir`. */
  uri: string;
  zip: Uint8Array;
  /** The packed files' paths, relative to the folder, `/`-separated. */
  files: string[];
}

export class RayPackageError extends Error {}

/**
 * Packs `dir`. `replace` swaps a file's content (relative path -> new text), e.g. the config with
 * `continue_from_checkpoint` changed; `exclude` lists absolute folders left out.
 */
export function packWorkingDir(
  dir: string,
  options: { exclude?: readonly string[]; replace?: Readonly<Record<string, string>> } = {},
): RayPackage {
  const exclude = new Set(options.exclude ?? []);
  const entries: [string, Uint8Array][] = [];
  let total = 0;
  const walk = (d: string, depth: number) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      let st;
      try {
        st = statSync(p);
      } catch {
        continue; // a dangling link
      }
      if (st.isDirectory()) {
        if (!SKIPPED.has(name) && !exclude.has(p) && depth < 32) walk(p, depth + 1);
        continue;
      }
      if (!st.isFile()) continue;
      const rel = relative(dir, p).split(sep).join('/');
      const replaced = options.replace?.[rel];
      const content = replaced !== undefined ? new TextEncoder().encode(replaced) : new Uint8Array(readFileSync(p));
      total += content.length;
      if (total > RAY_PACKAGE_MAX_BYTES) {
        throw new RayPackageError(
          `${dir} is over Ray's ${RAY_PACKAGE_MAX_BYTES / 1024 / 1024} MiB limit for an uploaded working_dir (at ${rel}). Keep large datasets and models on the cluster and refer to them by absolute path, or move the config to a smaller folder.`,
        );
      }
      entries.push([rel, content]);
    }
  };
  walk(dir, 0);
  const hash = createHash('md5');
  for (const [rel, content] of entries) {
    hash.update(rel);
    hash.update('\0');
    hash.update(content);
    hash.update('\0');
  }
  const name = `_ray_pkg_${hash.digest('hex')}.zip`;
  const zippable: Zippable = {};
  for (const [rel, content] of entries) zippable[rel] = content;
  return { name, uri: `gcs://${name}`, zip: zipSync(zippable, { level: 6 }), files: entries.map(([rel]) => rel) };
}
