/**
 * A checkpoint that proves itself: `manifest.json` lists every file of a `global_step_N` directory with its size and
 * SHA-256, and carries a checksum of its own. It is written last, after every file has been flushed, and flushed
 * with its directory before the directory is renamed into place (the commit marker of orbax and TorchSnapshot: a
 * checkpoint without one was never finished). `verifyCheckpoint` reads it back: a file missing, of another size or
 * another content names the checkpoint as damaged, with the file and why.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fsyncPath, writeFileSynced } from './durable-files';

export const MANIFEST_FILE = 'manifest.json';
const FORMAT = 'trinity-workbench-checkpoint/1';

export interface ManifestEntry {
  /** Relative to the checkpoint directory, `/`-separated (`critic/model.safetensors`). */
  path: string;
  size: number;
  sha256: string;
}

export interface CheckpointManifest {
  format: typeof FORMAT;
  step: number;
  files: ManifestEntry[];
  /** SHA-256 of this object's JSON without this field: a damaged manifest is told from a damaged file. */
  sha256: string;
}

export type CheckpointVerdict =
  | { status: 'intact' }
  /** Written before checkpoints carried a manifest: nothing to check against. */
  | { status: 'unverified' }
  | { status: 'damaged'; file: string; reason: string };

/** Flushes every file under `dir`, then writes and flushes the manifest listing them, then flushes every directory. */
export function writeManifest(dir: string, step: number): void {
  const files = filesUnder(dir).filter((p) => p !== MANIFEST_FILE);
  const entries = files.map((path): ManifestEntry => {
    const full = join(dir, ...path.split('/'));
    fsyncPath(full);
    const bytes = readBytes(full);
    return { path, size: bytes.length, sha256: sha256(bytes) };
  });
  const body = { format: FORMAT as typeof FORMAT, step, files: entries };
  const manifest: CheckpointManifest = { ...body, sha256: sha256(JSON.stringify(body)) };
  writeFileSynced(join(dir, MANIFEST_FILE), `${JSON.stringify(manifest, null, 1)}\n`);
  for (const d of dirsUnder(dir)) fsyncPath(d);
}

/** Checks a checkpoint directory against its manifest (sizes first, so a truncated file is named without hashing). */
export function verifyCheckpoint(dir: string): CheckpointVerdict {
  const path = join(dir, MANIFEST_FILE);
  if (!existsSync(path)) return { status: 'unverified' };
  const damaged = (file: string, reason: string): CheckpointVerdict => ({ status: 'damaged', file, reason });
  let manifest: CheckpointManifest;
  try {
    manifest = JSON.parse(readFileSync(path, 'utf8')) as CheckpointManifest;
  } catch (e) {
    return damaged(MANIFEST_FILE, `not valid JSON (${(e as Error).message})`);
  }
  const { sha256: own, ...body } = manifest ?? ({} as CheckpointManifest);
  if (typeof own !== 'string' || own !== sha256(JSON.stringify(body)) || !Array.isArray(manifest.files))
    return damaged(MANIFEST_FILE, 'its own checksum does not match its contents');
  const step = /^global_step_(\d+)$/.exec(basename(dir))?.[1];
  if (step !== undefined && Number(step) !== manifest.step)
    return damaged(MANIFEST_FILE, `it is the manifest of step ${manifest.step}`);
  for (const f of manifest.files) {
    const full = join(dir, ...f.path.split('/'));
    let size: number;
    try {
      size = statSync(full).size;
    } catch {
      return damaged(f.path, 'missing');
    }
    if (size !== f.size) return damaged(f.path, `${size} bytes, the manifest says ${f.size}`);
  }
  for (const f of manifest.files) {
    let bytes: Uint8Array;
    try {
      bytes = readBytes(join(dir, ...f.path.split('/')));
    } catch (e) {
      return damaged(f.path, `cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    }
    if (sha256(bytes) !== f.sha256) return damaged(f.path, 'its SHA-256 differs from the manifest (its bytes changed)');
  }
  return { status: 'intact' };
}

function sha256(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

function readBytes(path: string): Uint8Array {
  const b = readFileSync(path);
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

/** Every file under `dir`, relative and `/`-separated, sorted. */
function filesUnder(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory() ? filesUnder(join(dir, e.name), `${prefix}${e.name}/`) : e.isFile() ? [`${prefix}${e.name}`] : [],
    )
    .sort();
}

/** Every directory under `dir`, then `dir` itself (a parent is synced after the entries it holds). */
function dirsUnder(dir: string): string[] {
  return [
    ...readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .flatMap((e) => dirsUnder(join(dir, e.name))),
    dir,
  ];
}
