/**
 * Where a run's milliseconds go, by phase of the RL loop (generation, rewards, the trainer's forward and backward,
 * weight sync, hand-offs, …): bench:rft's per-phase table. Off unless `TRINITY_WORKBENCH_PHASE_TIMES=1` or
 * `enablePhaseTimes()` (an explorer worker started later inherits either), and then free: `timed` calls its function
 * and nothing else. Each thread keeps its
 * own totals; the explorer worker sends its own with every reply (explorer-driver.ts), so the trainer's thread holds
 * the whole run's.
 */

/** Milliseconds and calls per phase name. */
export type PhaseTimes = Record<string, { ms: number; calls: number }>;

let on = process.env.TRINITY_WORKBENCH_PHASE_TIMES === '1';
let totals: PhaseTimes = {};

export function phaseTimesOn(): boolean {
  return on;
}

/** Turns phase times on in this thread and in the explorer workers started from now on. */
export function enablePhaseTimes(): void {
  on = true;
  process.env.TRINITY_WORKBENCH_PHASE_TIMES = '1';
}

export function addPhaseTime(phase: string, ms: number): void {
  const t = (totals[phase] ??= { ms: 0, calls: 0 });
  t.ms += ms;
  t.calls++;
}

/** Runs `fn`, adding its wall time (until its promise settles, for an async one) to `phase` when phase times are on. */
export function timed<T>(phase: string, fn: () => T): T {
  if (!on) return fn();
  const start = performance.now();
  const out = fn();
  if (out instanceof Promise) {
    return out.finally(() => addPhaseTime(phase, performance.now() - start)) as T;
  }
  addPhaseTime(phase, performance.now() - start);
  return out;
}

/** This thread's totals since the last take (and starts new ones). */
export function takePhaseTimes(): PhaseTimes {
  const out = totals;
  totals = {};
  return out;
}

/** Adds another thread's totals (the explorer worker's) to this thread's. */
export function mergePhaseTimes(times: PhaseTimes): void {
  for (const [phase, t] of Object.entries(times)) {
    const mine = (totals[phase] ??= { ms: 0, calls: 0 });
    mine.ms += t.ms;
    mine.calls += t.calls;
  }
}
