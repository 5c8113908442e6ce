/**
 * SQLite experience tables as Trinity-RFT writes them, from an independent writer: Python's own pickle and sqlite3
 * with stand-ins for Trinity's and torch's classes (test/fixtures/trinity-standin/experience_buffer_writer.py says
 * what follows which source). Never the project's TypeScript.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Experience } from '../../runtime/rft/experience';
import { PYTHON, STANDIN_DIR } from './tfevents';

/** One experience as the writer takes it: Trinity's field names. */
export interface TrinityExperienceSpec {
  eid: { batch: number | string; task: number | string; run: number; step: number };
  tokens?: number[];
  prompt_length?: number;
  action_mask?: boolean[];
  advantages?: number[];
  logprobs?: number[];
  reward?: number | null;
  info?: Record<string, unknown>;
  metrics?: Record<string, number>;
  truncate_status?: string | null;
  prompt_text?: string | null;
  response_text?: string | null;
  messages?: unknown[] | null;
}

export interface TrinityBufferSpec {
  file: string;
  table: string;
  /** The table's columns: v0.3.x's (prompt, response, message_list) or v0.4.0 onwards' (task_id, run_id, model_version). */
  layout: 'v0.3' | 'v0.4';
  /** `experience_bytes`: a plain pickle (≤ v0.5.0) or TRXP (v0.5.2, main). */
  format: 'pickle' | 'trxp';
  /** For `pickle`: the attributes of which release's Experience. */
  fields?: 'v0.3' | 'v0.5';
  rows: ({ experience: TrinityExperienceSpec; reward?: number | null; model_version?: number } | { raw: string })[];
}

export function writeTrinityBuffer(spec: TrinityBufferSpec): void {
  const file = join(mkdtempSync(join(tmpdir(), 'twb-trxp-')), 'spec.json');
  writeFileSync(file, JSON.stringify(spec));
  execFileSync(PYTHON, [join(STANDIN_DIR, 'experience_buffer_writer.py'), file], { stdio: 'pipe' });
}

/** Python bytes from the writer's stand-ins: e.g. a pickle naming a global no experience holds. */
export function pythonBytes(expr: string): string {
  return execFileSync(PYTHON, ['-c', `import pickle, os, sys; sys.stdout.write((${expr}).hex())`], {
    encoding: 'utf8',
  });
}

/** Our runtime's experience as Trinity's Experience would hold it. */
export function trinitySpecOf(e: Experience): TrinityExperienceSpec {
  return {
    eid: { batch: e.eid.batch, task: e.eid.task, run: e.eid.run, step: e.eid.step },
    tokens: e.tokens,
    prompt_length: e.promptLength,
    action_mask: (e.actionMask ?? e.tokens.slice(e.promptLength).map(() => 1)).map((x) => x === 1),
    ...(e.advantages ? { advantages: e.advantages } : {}),
    ...(e.logprobs ? { logprobs: e.logprobs } : {}),
    reward: e.reward ?? null,
    info: { ...(e.info ?? {}) },
    metrics: { ...(e.metrics ?? {}) },
    truncate_status: e.truncated ? 'response_truncated' : null,
    prompt_text: e.promptText ?? null,
    response_text: e.responseText ?? null,
    messages: e.messages ?? null,
  };
}
