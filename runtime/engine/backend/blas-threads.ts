/**
 * How many threads the OpenBLAS matmul addon (native-matmul.ts) computes on, and why. The one place that decides it.
 *
 * Why it varies: about half of a training step is OpenBLAS matmul (docs/engine-performance.md), and on 2 cores 2
 * threads made the 12 M step 1.26x faster. But both mode's explorer worker (explorer-driver.ts) computes in the same
 * process while the trainer trains, and OpenBLAS's thread count is one setting for the whole process: two 2-thread
 * matmuls on 2 cores would fight over them (and idle OpenBLAS threads spin). So: 2 threads (at most the cores there
 * are) for training steps that nothing computes beside, 1 otherwise. Generation stays at 1: its matmuls are small
 * (one token per row), and 2 threads measured slower there (0.90x at 12 M, 0.72x at 1 M, paired, load 1.3).
 *
 * Why a run decides once, not step by step: 1 and 2 threads need not give the same bits. Which shapes do depends on
 * the CPU's OpenBLAS kernel: with SkylakeX kernels (0.3.21) only inner dimensions within the K block (448 floats) or
 * multiples of 32 beyond it matched; with the Haswell kernels 0.3.21 picks on Zen CPUs no shape does. Each count
 * repeats its own bits, and the two agree to float32 rounding (test/runtime/engine/backend/blas-threads.test.ts).
 * A count that followed the explorer's timing would make a run's numbers depend on that timing; a count fixed by
 * the config keeps a run reproducible.
 *
 * `OPENBLAS_NUM_THREADS`, when set, pins the count everywhere (the addon starts with it: native-matmul.ts);
 * `TRINITY_WORKBENCH_BLAS_THREADS` sets the most a training step may use (default 2: the count that was measured).
 */
import { availableParallelism } from 'node:os';
import { nativeBlasAddon } from './native-matmul';

/** The most threads a training step may use when nothing else computes (default {@link DEFAULT_MAX_BLAS_THREADS}). */
export const BLAS_THREADS_ENV = 'TRINITY_WORKBENCH_BLAS_THREADS';
/** 2: what the paired A/B measured (1.26x at 12 M on 2 cores); more was never measured. */
export const DEFAULT_MAX_BLAS_THREADS = 2;

/**
 * What computes beside the work about to run:
 * - `nothing`: training alone (train mode from a file or a finished explorer's buffer; both mode with the explorer
 *   in this thread, which takes turns with the trainer; a bench).
 * - `explorer-thread`: both mode with the explorer in a worker thread (sync_offset/sync_interval let them overlap).
 * - `explorer-process`: train mode while the job's explore process may still be generating.
 * - `not-training`: anything else (generation, evals, serve): the base count.
 */
export type BlasWork = 'nothing' | 'explorer-thread' | 'explorer-process' | 'not-training';

export interface BlasThreadLimits {
  /** Cores this process may use (`os.availableParallelism()`). */
  cores: number;
  /** The most a lone training step may use ({@link BLAS_THREADS_ENV}). */
  max: number;
  /** `OPENBLAS_NUM_THREADS`, when the user set it: that count, always. */
  pinned?: number;
}

export interface BlasThreadChoice {
  threads: number;
  /** Why, in a few words (the log line's parenthesis). */
  reason: string;
}

function positiveInt(v: string | undefined): number | undefined {
  const n = Number(v);
  return v !== undefined && v.trim() !== '' && Number.isInteger(n) && n >= 1 ? n : undefined;
}

/** The limits from this process's environment and cores. */
export function blasThreadLimits(env: NodeJS.ProcessEnv = process.env): BlasThreadLimits {
  const pinned = positiveInt(env.OPENBLAS_NUM_THREADS);
  return {
    cores: availableParallelism(),
    max: positiveInt(env[BLAS_THREADS_ENV]) ?? DEFAULT_MAX_BLAS_THREADS,
    ...(pinned !== undefined ? { pinned } : {}),
  };
}

/** The decision (pure). */
export function chooseBlasThreads(work: BlasWork, limits: BlasThreadLimits): BlasThreadChoice {
  if (limits.pinned !== undefined) return { threads: limits.pinned, reason: 'OPENBLAS_NUM_THREADS' };
  switch (work) {
    case 'nothing': {
      const threads = Math.max(1, Math.min(limits.cores, limits.max));
      return { threads, reason: threads > 1 ? 'train only' : `train only, ${limits.cores} core(s), max ${limits.max}` };
    }
    case 'explorer-thread':
      return { threads: 1, reason: 'explorer and trainer overlap' };
    case 'explorer-process':
      return { threads: 1, reason: 'an explore process may be computing beside the trainer' };
    case 'not-training':
      return { threads: 1, reason: 'not training' };
  }
}

/** Sets the addon's thread count; returns what it reports, or undefined when the addon is not loaded in this thread. */
export function setBlasThreads(threads: number): number | undefined {
  const addon = nativeBlasAddon();
  if (!addon) return undefined;
  if (addon.getThreads() !== threads) addon.setThreads(threads);
  return addon.getThreads();
}

/** The addon's thread count now (undefined without the addon). */
export function blasThreads(): number | undefined {
  return nativeBlasAddon()?.getThreads();
}

/**
 * Runs `fn` (a forward without gradients inside a training step: the reference model's log-probs) at the base count
 * ({@link chooseBlasThreads}' `not-training`), then restores the count it found. Its matmuls are a prefill's, and
 * between them the one-kernel scorer computes on the calling thread alone, where a second OpenBLAS thread only spins:
 * 114 against 76 CPU ms per reference forward in bench:rft's taking-turns loop (load 10). Also the count the explorer
 * worker scores the same rows at, so the values do not depend on which side computes them.
 */
export async function atBaseBlasThreads<T>(fn: () => Promise<T>, limits = blasThreadLimits()): Promise<T> {
  const found = blasThreads();
  const base = chooseBlasThreads('not-training', limits).threads;
  if (found === undefined || found === base) return fn();
  setBlasThreads(base);
  try {
    return await fn();
  } finally {
    setBlasThreads(found);
  }
}

/**
 * A run's use of the decision: runs each training step at the count chosen for what computes beside it (callers
 * pass the same `beside` for a whole run), then goes back to the base count, so generation, evals and an explorer
 * step started next never run on the training count; logs each distinct choice once ("BLAS threads: 2 (train
 * only)"). Does nothing without the addon.
 */
export class BlasThreads {
  private readonly logged = new Set<string>();

  constructor(
    private readonly log?: (message: string) => void,
    private readonly limits: BlasThreadLimits = blasThreadLimits(),
  ) {}

  /** Runs `fn` (a training step) at the count for `beside`, then restores the base count. */
  async training<T>(beside: Exclude<BlasWork, 'not-training'>, fn: () => Promise<T>): Promise<T> {
    const choice = chooseBlasThreads(beside, this.limits);
    if (setBlasThreads(choice.threads) === undefined) return fn();
    this.report(choice);
    try {
      return await fn();
    } finally {
      setBlasThreads(chooseBlasThreads('not-training', this.limits).threads);
    }
  }

  private report(c: BlasThreadChoice): void {
    const line = `BLAS threads: ${c.threads} (${c.reason})`;
    if (this.logged.has(line)) return;
    this.logged.add(line);
    this.log?.(line);
  }
}
