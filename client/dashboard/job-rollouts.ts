/**
 * Where a run on disk's rollouts are: our runtime's `monitor/rollouts.jsonl`, else the SQLite experience buffer its
 * resolved config names (`storage_type: sql`, or a queue persisted to a `sqlite:///` path; Trinity logs samples only
 * to W&B / MLflow, so the buffer is where they are on disk). Pure of `vscode`; the buffer itself is read by
 * runtime/metrics/buffer-rollouts.ts, in a Node 20 process (`trinity-workbench rollouts`).
 */
import { execFile } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { basename, isAbsolute, join, resolve } from 'node:path';
import type { ExperienceBufferRef } from '../../runtime/metrics/buffer-rollouts';
import type { RunWith } from '../runs/launchers/launcher';
import { parseHostMessage } from './messages';
import { evalRolloutStepsOnDisk, latestRolloutsOnDisk, rolloutsOf, rolloutStepsOnDisk, type Rollouts } from './series';

type Plain = Record<string, unknown>;

const obj = (v: unknown): Plain | undefined =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Plain) : undefined;
/**
 * The SQLite experience buffer a resolved config names (`buffer.trainer_input.experience_buffer`), if it has one.
 * A relative database path is looked for under `baseDirs` in order (Trinity resolves it against its working
 * directory); the first that exists wins, else the first.
 */
export function experienceBufferOf(resolved: unknown, baseDirs: readonly string[]): ExperienceBufferRef | undefined {
  const eb = obj(obj(obj(obj(resolved)?.buffer)?.trainer_input)?.experience_buffer);
  if (!eb) return undefined;
  const type = String(eb.storage_type ?? '').toLowerCase();
  const path = typeof eb.path === 'string' ? eb.path : '';
  if (!path.startsWith('sqlite:///') || (type !== 'sql' && type !== 'queue')) return undefined;
  const rel = path.slice('sqlite:///'.length).split('?')[0];
  const table = typeof eb.name === 'string' && eb.name ? eb.name : 'experience_buffer';
  if (isAbsolute(rel)) return { file: rel, table };
  const candidates = baseDirs.map((d) => resolve(d, rel));
  return { file: candidates.find((f) => existsSync(f)) ?? candidates[0] ?? resolve(rel), table };
}

/** The config's `model.model_path` and the folder a relative one is found from: its tokenizer decodes the tokens. */
export interface RolloutModel {
  path: string;
  cwd: string;
}

/** Where records read from the run's own files are said to come from. */
export const ROLLOUT_FILES_ORIGIN = 'monitor/rollouts.jsonl';

export type JobRollouts =
  | { origin: string; steps: Rollouts[] }
  | { origin: string; buffer: ExperienceBufferRef; model?: RolloutModel };

/**
 * monitor/rollouts.jsonl's last steps and monitor/eval-rollouts.jsonl's last evaluations if there are any, else the
 * experience buffer to read (relative paths: from the config's folder, then the job dir).
 */
export function rolloutsOfJob(
  jobDir: string,
  resolved: unknown,
  configDir: string | undefined,
  maxSteps: number,
): JobRollouts | undefined {
  const jsonl = [...rolloutStepsOnDisk(jobDir, maxSteps), ...evalRolloutStepsOnDisk(jobDir, maxSteps)];
  if (jsonl.length) return { origin: ROLLOUT_FILES_ORIGIN, steps: jsonl };
  const ref =
    resolved === undefined ? undefined : experienceBufferOf(resolved, [...(configDir ? [configDir] : []), jobDir]);
  if (!ref || !existsSync(ref.file)) return undefined;
  const modelPath = obj(obj(resolved)?.model)?.model_path;
  const origin = `experience buffer ${basename(ref.file)} (table ${ref.table})`;
  return typeof modelPath === 'string' && modelPath
    ? { origin, buffer: ref, model: { path: modelPath, cwd: configDir ?? jobDir } }
    : { origin, buffer: ref };
}

/** Which record a `Rollouts` is: its step, and for an evaluation its role and taskset. */
const recordKey = (r: Rollouts): string => (r.eval ? `${r.step} ${r.eval.role} ${r.eval.taskset}` : String(r.step));

const sizeOf = (file: string): number => {
  try {
    return statSync(file).size;
  } catch {
    return -1;
  }
};

/**
 * What a run on disk (one this window did not start) adds to monitor/rollouts.jsonl and monitor/eval-rollouts.jsonl
 * while its panel is open: the latest explorer step and each evaluation not given before. A file is read again only
 * when its size changed since the last look. Sizes are taken when it is made, before the panel's first read, so a line
 * written in between comes twice rather than never (the webview keeps one record per step and evaluation).
 */
export class RolloutsOnDiskFollower {
  private readonly given = new Set<string>();
  private rolloutsSize: number;
  private evalsSize: number;

  constructor(
    private readonly jobDir: string,
    private readonly maxEvals: number,
  ) {
    this.rolloutsSize = sizeOf(join(jobDir, 'monitor', 'rollouts.jsonl'));
    this.evalsSize = sizeOf(join(jobDir, 'monitor', 'eval-rollouts.jsonl'));
  }

  /** Records the panel already has (its first read), so that they are not given again. */
  saw(records: readonly Rollouts[]): void {
    for (const r of records) this.given.add(recordKey(r));
  }

  /** The records new since the last call, in file order. */
  read(): Rollouts[] {
    const out: Rollouts[] = [];
    const rolloutsSize = sizeOf(join(this.jobDir, 'monitor', 'rollouts.jsonl'));
    if (rolloutsSize !== this.rolloutsSize) {
      this.rolloutsSize = rolloutsSize;
      const latest = latestRolloutsOnDisk(this.jobDir);
      if (latest) out.push(latest);
    }
    const evalsSize = sizeOf(join(this.jobDir, 'monitor', 'eval-rollouts.jsonl'));
    if (evalsSize !== this.evalsSize) {
      this.evalsSize = evalsSize;
      out.push(...evalRolloutStepsOnDisk(this.jobDir, this.maxEvals));
    }
    const fresh = out.filter((r) => !this.given.has(recordKey(r)));
    this.saw(fresh);
    return fresh;
  }
}

/**
 * Whether an SQLite experience buffer changed since the last look: the size and mtime of its file and of its
 * write-ahead log (Trinity's SQLite buffers append through it). Reading the buffer again starts a Node process, so a
 * panel asks this first.
 */
export class BufferChanges {
  private last: string;

  constructor(private readonly file: string) {
    this.last = this.stamp();
  }

  changed(): boolean {
    const now = this.stamp();
    if (now === this.last) return false;
    this.last = now;
    return true;
  }

  private stamp(): string {
    return [this.file, `${this.file}-wal`]
      .map((f) => {
        try {
          const st = statSync(f);
          return `${st.size}:${st.mtimeMs}`;
        } catch {
          return '-';
        }
      })
      .join(' ');
  }
}

/**
 * Whether a live run's rollouts come with its events: our runtime's do (`rollouts` events); a run of Trinity-RFT or
 * a Ray job reports none (the job follower turns its files into metrics and checkpoints), so its panel reads them
 * from the job's files or its experience buffer, as for a run on disk.
 */
export function rolloutsInEvents(runWith: RunWith): boolean {
  return runWith === 'local';
}

/**
 * Reads an experience buffer through `node <cli> rollouts` (better-sqlite3 is built for Node 20's ABI, which the
 * editor's own process does not have), its tokens decoded with `model`'s tokenizer. What comes back is checked; a
 * failure gives no steps and says why; `note` says why the tokens were not decoded.
 */
export function readBufferRollouts(
  nodePath: string,
  cliPath: string,
  ref: ExperienceBufferRef,
  maxSteps: number,
  model?: RolloutModel,
  timeoutMs = 20_000,
): Promise<{ steps: Rollouts[]; error?: string; note?: string }> {
  const modelArgs = model ? ['--model', model.path] : [];
  return new Promise((done) => {
    execFile(
      nodePath,
      [cliPath, 'rollouts', '--table', ref.table, '--steps', String(maxSteps), ...modelArgs, resolve(ref.file)],
      { timeout: timeoutMs, maxBuffer: 64 << 20, encoding: 'utf8', ...(model ? { cwd: model.cwd } : {}) },
      (err, stdout, stderr) => {
        if (err) return done({ steps: [], error: (stderr || err.message).trim().split('\n')[0] });
        const note = stderr.trim().replace(/^trinity-workbench rollouts: /, '') || undefined;
        try {
          const parsed = JSON.parse(stdout) as unknown;
          if (!Array.isArray(parsed)) throw new Error('not a list');
          const steps: Rollouts[] = [];
          for (const r of parsed as { step?: unknown; samples?: unknown }[]) {
            if (typeof r?.step !== 'number' || !Array.isArray(r.samples)) continue;
            // As a run's own records travel: each sample's episode (a Trinity experience's turns, tokens and mask) nested.
            const m = parseHostMessage({ type: 'rollouts', ...rolloutsOf(r.step, r.samples) });
            if (m?.type === 'rollouts') steps.push({ step: m.step, samples: m.samples });
          }
          done(note ? { steps, note } : { steps });
        } catch (e) {
          done({ steps: [], error: `unreadable output of trinity-workbench rollouts: ${(e as Error).message}` });
        }
      },
    );
  });
}
