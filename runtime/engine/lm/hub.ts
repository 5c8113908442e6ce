/**
 * `model_path` as Trinity takes it: a local directory, or a Hugging Face hub id (`Qwen/Qwen2.5-0.5B-Instruct`)
 * found in the local HF cache (`$HF_HUB_CACHE`, `$HF_HOME/hub`, `~/.cache/huggingface/hub`).
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

export class ModelPathError extends Error {}

const HUB_ID = /^[A-Za-z0-9][\w.-]*\/[\w.-]+$/;

export function isHubId(s: string): boolean {
  return HUB_ID.test(s);
}

function hubCacheDir(env: NodeJS.ProcessEnv): string {
  if (env.HF_HUB_CACHE) return env.HF_HUB_CACHE;
  if (env.HF_HOME) return join(env.HF_HOME, 'hub');
  return join(env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'huggingface', 'hub');
}

/** Where huggingface_hub caches the model repository `org/name`: `<cache>/models--org--name`. */
export function hubRepoDir(repoId: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(hubCacheDir(env), `models--${repoId.replace('/', '--')}`);
}

/** The directory holding config.json for `pathOrId`, or an error saying where it looked. */
export function resolveModelPath(
  pathOrId: string,
  opts: { baseDir?: string; env?: NodeJS.ProcessEnv; revision?: string } = {},
): string {
  const local = resolve(opts.baseDir ?? process.cwd(), pathOrId.replace(/^~(?=\/|$)/, homedir()));
  if (existsSync(local) && statSync(local).isDirectory()) {
    if (!existsSync(join(local, 'config.json')))
      throw new ModelPathError(`${local}: not a model directory (no config.json)`);
    return local;
  }
  if (!HUB_ID.test(pathOrId)) throw new ModelPathError(`${pathOrId}: no such model directory (resolved to ${local})`);
  const repo = hubRepoDir(pathOrId, opts.env);
  const revision = opts.revision ?? 'main';
  const refFile = join(repo, 'refs', revision);
  let snapshot: string | undefined;
  if (existsSync(refFile)) snapshot = join(repo, 'snapshots', readFileSync(refFile, 'utf8').trim());
  else if (existsSync(join(repo, 'snapshots'))) {
    const snaps = readdirSync(join(repo, 'snapshots'));
    if (snaps.includes(revision)) snapshot = join(repo, 'snapshots', revision);
    else if (snaps.length === 1) snapshot = join(repo, 'snapshots', snaps[0]);
  }
  if (snapshot && existsSync(join(snapshot, 'config.json'))) return snapshot;
  throw new ModelPathError(
    `${pathOrId}: not a local directory and not in the Hugging Face cache (${repo}). ` +
      `Download it first (\`huggingface-cli download ${pathOrId}\`, or set TRINITY_WORKBENCH_ALLOW_DOWNLOAD=1 to let the workbench fetch it), or set HF_HOME / HF_HUB_CACHE.`,
  );
}
