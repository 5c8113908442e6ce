/** Shared pieces of the buffer tests: deterministic experiences, temp dirs, child processes. */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Experience } from '../../../../runtime/rft/experience';

export const tmp = (tag: string): string => mkdtempSync(join(tmpdir(), `twb-buffer-${tag}-`));

/** A single-turn experience whose contents follow from (batch, task, run); `tokens` = response length. */
export function exp(
  batch: number,
  task: number,
  run = 0,
  opts: { tokens?: number; modelVersion?: number; useCount?: number } = {},
): Experience {
  const resp = opts.tokens ?? 4;
  const prompt = 3;
  const seed = batch * 1000 + task * 10 + run;
  const e: Experience = {
    eid: { batch, task, run, step: 0, suffix: `s${seed.toString(16)}` },
    tokens: Array.from({ length: prompt + resp }, (_, i) => (seed * 7 + i * 13) % 50000),
    promptLength: prompt,
    logprobs: Array.from({ length: resp }, (_, i) => -Math.abs(Math.sin(seed + i)) * 3.7 - 1e-300 * i),
    reward: (seed % 7) / 7,
  };
  if (opts.modelVersion !== undefined) e.modelVersion = opts.modelVersion;
  if (opts.useCount !== undefined) e.info = { use_count: opts.useCount };
  return e;
}

export const uid = (e: Experience): string => `${e.eid.batch}/${e.eid.task}/${e.eid.run}`;

export const REPO_ROOT = resolve(__dirname, '../../../..');
const CHILD = join(__dirname, 'child.ts');

export interface Child {
  proc: ChildProcess;
  lines: string[];
  /** Resolves with the first stdout line matching `re`. */
  waitFor(re: RegExp, timeoutMs?: number): Promise<string>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Runs child.ts (under tsx) with a mode and JSON arguments. */
export function spawnChild(mode: string, args: unknown): Child {
  const proc = spawn(process.execPath, ['--import', 'tsx', CHILD, mode, JSON.stringify(args)], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const watchers: { re: RegExp; resolve: (l: string) => void }[] = [];
  let buf = '';
  let stderr = '';
  proc.stderr!.on('data', (d) => (stderr += d));
  proc.stdout!.on('data', (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      lines.push(line);
      for (const w of [...watchers]) {
        if (w.re.test(line)) {
          watchers.splice(watchers.indexOf(w), 1);
          w.resolve(line);
        }
      }
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) =>
    proc.on('close', (code, signal) => res({ code, signal })),
  );
  return {
    proc,
    lines,
    exited,
    waitFor(re, timeoutMs = 15000) {
      const hit = lines.find((l) => re.test(l));
      if (hit) return Promise.resolve(hit);
      return new Promise((res, rej) => {
        const t = setTimeout(
          () =>
            rej(
              new Error(
                `child never printed ${re}; stdout: ${lines.slice(-5).join(' | ')}; stderr: ${stderr.slice(-2000)}`,
              ),
            ),
          timeoutMs,
        );
        watchers.push({
          re,
          resolve: (l) => {
            clearTimeout(t);
            res(l);
          },
        });
        void exited.then(({ code, signal }) => {
          clearTimeout(t);
          rej(new Error(`child exited (${code ?? signal}) before printing ${re}; stderr: ${stderr.slice(-2000)}`));
        });
      });
    },
  };
}

/** Every shape the storages must carry: RL with awkward doubles, multi-turn, SFT (no logprobs), DPO pairs. */
export function oddExperiences(): Experience[] {
  return [
    {
      eid: { batch: 3, task: 'gsm8k/7', run: 2, step: 1, suffix: 'a1b2c3' },
      tokens: [1, 2, 3, 4, 5, 6],
      promptLength: 3,
      logprobs: [-Infinity, -0, -1.2345678901234567, 5e-324, -Number.MAX_VALUE, NaN],
      advantages: [0.1 + 0.2, -0, 1e300],
      returns: [Infinity, -1 / 3, 0],
      teacherLogprobs: [-0.1 - 0.2, -Infinity, -0],
      reward: NaN,
      truncated: false,
      modelVersion: 12,
      promptText: 'Q: 2+2?\n"quoted" \u00e9\u4e2d\ud83d\ude00',
      responseText: '4',
      metrics: { acc: 1, len: Infinity, neg0: -0 },
      info: { model_version: 12, nested: { a: [1, 'x', null, { b: -Infinity }], t: true }, note: 'NaN' },
    },
    {
      eid: { batch: 0, task: 1, run: 0, step: 2, suffix: 'ffffff' },
      tokens: [9, 8, 7, 6, 5],
      promptLength: 2,
      logprobs: [-0.5, -0.25, -0.125],
      actionMask: [1, 0, 1],
      reward: -1,
      truncated: true,
      isExpert: false,
      // a concatenated multi-turn episode: its conversation and per-turn rewards
      messages: [
        { role: 'system', content: 'Walk.' },
        { role: 'user', content: 'Observation:\n P \t G \t' },
        { role: 'assistant', content: '```Right```' },
        { role: 'user', content: 'Again "quoted" \u00e9' },
        { role: 'assistant', content: '' },
      ],
      turnRewards: [0, -0, 1.5],
    },
    {
      eid: { batch: 'sft', task: 0, run: 0, step: 0, suffix: '000001' },
      tokens: [5, 6, 7, 8],
      promptLength: 2,
      actionMask: [1, 1],
      isExpert: true,
    },
    {
      eid: { batch: 'dpo', task: 4, run: 0, step: 0, suffix: '000002' },
      tokens: [11, 12, 13],
      promptLength: 3,
      chosen: [21, 22],
      rejected: [31, 32, 33],
    },
  ];
}

/** The bytes of each double, to compare arrays bit for bit. */
export const bits = (xs: number[] | undefined) =>
  xs ? Array.from(new Uint8Array(new Float64Array(xs).buffer)) : undefined;
