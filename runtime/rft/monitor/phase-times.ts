/**
 * Where a run's milliseconds go, by phase of the RL loop (generation, rewards, the trainer's forward and backward,
 * weight sync, hand-offs, …): bench:rft's per-phase table. Off unless `TRINITY_WORKBENCH_PHASE_TIMES=1` or
 * `enablePhaseTimes()` (an explorer worker started later inherits either), and then free: `timed` calls its function
 * and nothing else. Each thread keeps its
 * own totals; the explorer worker sends its own with every reply (explorer-driver.ts), so the trainer's thread holds
 * the whole run's.
 */

/**
 * Per phase name: wall milliseconds, the process's CPU milliseconds (every thread's: a phase's own only while one
 * thread computes, as when explorer and trainer take turns) and calls.
 */
export type PhaseTimes = Record<string, { ms: number; cpuMs: number; calls: number }>;

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

function addPhaseTime(phase: string, ms: number, cpuMs: number): void {
  const t = (totals[phase] ??= { ms: 0, cpuMs: 0, calls: 0 });
  t.ms += ms;
  t.cpuMs += cpuMs;
  t.calls++;
}

/** Runs `fn`, adding its wall time (until its promise settles, for an async one) to `phase` when phase times are on. */
export function timed<T>(phase: string, fn: () => T): T {
  if (!on) return fn();
  const start = performance.now();
  const cpu = process.cpuUsage();
  const add = (): void => {
    const used = process.cpuUsage(cpu);
    addPhaseTime(phase, performance.now() - start, (used.user + used.system) / 1000);
  };
  const out = fn();
  if (out instanceof Promise) return out.finally(add) as T;
  add();
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
  totals = sumPhaseTimes(totals, times);
}

/** a + b, phase by phase. */
export function sumPhaseTimes(a: PhaseTimes, b: PhaseTimes): PhaseTimes {
  const out: PhaseTimes = {};
  for (const t of [a, b])
    for (const [phase, { ms, cpuMs, calls }] of Object.entries(t)) {
      const o = (out[phase] ??= { ms: 0, cpuMs: 0, calls: 0 });
      o.ms += ms;
      o.cpuMs += cpuMs;
      o.calls += calls;
    }
  return out;
}
