/**
 * Downloading a model from the Hugging Face hub into the local HF cache, in the layout huggingface_hub reads
 * (`models--org--name/snapshots/<commit>/<file>`, `refs/<revision>`). Only when the caller allows network
 * (`--download`, `TRINITY_WORKBENCH_ALLOW_DOWNLOAD=1`) and `HF_HUB_OFFLINE` is not set. `HF_ENDPOINT` picks the
 * server, `HF_TOKEN` authenticates. Files go to a temp name and are renamed when complete, so an interrupted
 * download never leaves a file that looks whole.
 */
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { hubRepoDir, isHubId, ModelPathError, resolveModelPath } from './hub';

export interface DownloadOptions {
  revision?: string;
  env?: NodeJS.ProcessEnv;
  /** Called as bytes arrive: file name, bytes so far, total bytes (when the server says). */
  onProgress?: (file: string, received: number, total: number | undefined) => void;
}

/** Files of a causal LM directory the runtime reads (weights, config, tokenizer, generation defaults, templates). */
const WANTED =
  /^(config\.json|generation_config\.json|tokenizer\.json|tokenizer_config\.json|special_tokens_map\.json|chat_template\.jinja|model(-\d+-of-\d+)?\.safetensors|model\.safetensors\.index\.json)$/;

/** Downloads `repoId` at `revision` into the cache; returns the snapshot directory. */
async function downloadModel(repoId: string, opts: DownloadOptions = {}): Promise<string> {
  const env = opts.env ?? process.env;
  if (env.HF_HUB_OFFLINE === '1')
    throw new ModelPathError(`${repoId}: not in the Hugging Face cache, and HF_HUB_OFFLINE=1 forbids downloading it`);
  const endpoint = (env.HF_ENDPOINT ?? 'https://huggingface.co').replace(/\/$/, '');
  const revision = opts.revision ?? 'main';
  const headers: Record<string, string> = env.HF_TOKEN ? { authorization: `Bearer ${env.HF_TOKEN}` } : {};
  const infoUrl = `${endpoint}/api/models/${repoId}/revision/${encodeURIComponent(revision)}`;
  let info: { sha?: string; siblings?: { rfilename: string }[] };
  try {
    const res = await fetch(infoUrl, { headers });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    info = (await res.json()) as typeof info;
  } catch (e) {
    throw new ModelPathError(`${repoId}: cannot list the repository at ${infoUrl}: ${(e as Error).message}`);
  }
  if (!info.sha || !info.siblings)
    throw new ModelPathError(`${repoId}: ${infoUrl} did not return a commit and a file list`);
  const files = info.siblings.map((s) => s.rfilename).filter((f) => WANTED.test(f));
  if (!files.includes('config.json')) throw new ModelPathError(`${repoId}: the repository has no config.json`);
  const repoDir = hubRepoDir(repoId, env);
  const snapshot = join(repoDir, 'snapshots', info.sha);
  for (const file of files) {
    const target = join(snapshot, file);
    if (existsSync(target)) continue;
    await downloadFile(`${endpoint}/${repoId}/resolve/${info.sha}/${file}`, target, headers, (got, total) =>
      opts.onProgress?.(file, got, total),
    );
  }
  mkdirSync(join(repoDir, 'refs'), { recursive: true });
  writeFileSync(join(repoDir, 'refs', revision), info.sha);
  return snapshot;
}

async function downloadFile(
  url: string,
  target: string,
  headers: Record<string, string>,
  progress: (got: number, total: number | undefined) => void,
): Promise<void> {
  const res = await fetch(url, { headers });
  if (!res.ok || !res.body) throw new ModelPathError(`download of ${url} failed: HTTP ${res.status}`);
  const total = Number(res.headers.get('content-length')) || undefined;
  mkdirSync(dirname(target), { recursive: true });
  const tmp = `${target}.incomplete-${process.pid}`;
  const file = await open(tmp, 'w');
  let got = 0;
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      await file.write(chunk);
      got += chunk.byteLength;
      progress(got, total);
    }
    if (total !== undefined && got !== total)
      throw new ModelPathError(`download of ${url} ended after ${got} of ${total} bytes`);
    await file.close();
    renameSync(tmp, target);
  } catch (e) {
    await file.close().catch(() => undefined);
    rmSync(tmp, { force: true });
    throw e;
  }
}

/**
 * `pathOrId` as a model directory: local, cached, or — when downloads are allowed — fetched into the cache first.
 * Progress goes to `log` as whole percentages per file.
 */
export async function ensureModelDir(
  pathOrId: string,
  opts: { baseDir?: string; env?: NodeJS.ProcessEnv; log?: (m: string) => void } = {},
): Promise<string> {
  const env = opts.env ?? process.env;
  try {
    return resolveModelPath(pathOrId, { baseDir: opts.baseDir, env });
  } catch (e) {
    // Allowed but offline: downloadModel says that HF_HUB_OFFLINE is what stops it.
    if (!(e instanceof ModelPathError) || !isHubId(pathOrId) || env.TRINITY_WORKBENCH_ALLOW_DOWNLOAD !== '1') throw e;
  }
  const shown = new Map<string, number>();
  return downloadModel(pathOrId, {
    env,
    onProgress: (file, got, total) => {
      const pct = total ? Math.floor((100 * got) / total) : -1;
      if (pct !== shown.get(file) && (pct % 10 === 0 || pct === 100)) {
        shown.set(file, pct);
        opts.log?.(
          `downloading ${pathOrId}/${file}: ${total ? `${pct}% of ${(total / 1e6).toFixed(1)} MB` : `${(got / 1e6).toFixed(1)} MB`}`,
        );
      }
    },
  });
}
