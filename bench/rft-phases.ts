/**
 * bench:rft's per-phase table: where one GRPO iteration's milliseconds go in our loops (the runtime's phase times,
 * runtime/rft/monitor/phase-times.ts) beside the same phases of the PyTorch peer (bench/rft_torch.py's `phase_ms`).
 */
import type { PhaseTimes } from '../runtime/rft/monitor/phase-times';

/** One row: its label, our phases summed into it, the PyTorch phase beside it. */
interface Row {
  label: string;
  ours: readonly string[];
  torch?: string;
  /** Our phases subtracted (a total's rest: what its named parts leave). */
  minus?: readonly string[];
  /** Indented under the row before it (a part of a total, not added to the thread's sum again). */
  part?: boolean;
}

/**
 * The trainer's thread's top-level phases: with the unaccounted rest, they make the iteration's wall time. An explorer
 * in the same thread (taking turns) adds its steps, which run between these phases.
 */
const MAIN_THREAD = [
  'loop: await the explorer step',
  'loop: experiences into the buffer',
  'loop: metrics log and events',
  'loop: weight sync (copy out)',
  'loop: weight sync (hand over)',
  'trainer: read batch',
  'trainer: train step (total)',
  'trainer: checkpoint',
];
const IN_THREAD_EXPLORER = ['explorer: explore step (total)', 'explorer: reference log-probs'];

const ROWS: readonly Row[] = [
  { label: 'explorer: explore step (in the worker when overlapped)', ours: ['explorer: explore step (total)'] },
  { label: 'sampling (generate)', ours: ['explorer: sampling (generate)'], torch: 'sampling (generate)', part: true },
  { label: 'rewards', ours: ['explorer: rewards'], torch: 'rewards', part: true },
  {
    label: 'experience pipeline (advantages)',
    ours: ['explorer: experience pipeline (advantages)'],
    torch: 'advantages',
    part: true,
  },
  {
    label: 'rest (workflow, experiences, metrics)',
    ours: ['explorer: explore step (total)'],
    minus: ['explorer: sampling (generate)', 'explorer: rewards', 'explorer: experience pipeline (advantages)'],
    part: true,
  },
  {
    label: 'reference log-probs (explorer worker or trainer)',
    ours: ['explorer: reference log-probs', 'trainer: reference forward'],
    torch: 'reference log-probs',
  },
  { label: 'explorer worker: result message out', ours: ['explorer: post result to the trainer thread'] },
  { label: 'explorer: take weights', ours: ['explorer: take weights'] },
  { label: 'loop: waiting for the explorer', ours: ['loop: await the explorer step'] },
  { label: 'loop: experiences into the buffer', ours: ['loop: experiences into the buffer'] },
  { label: 'trainer: read batch', ours: ['trainer: read batch'] },
  { label: 'trainer: train step', ours: ['trainer: train step (total)'] },
  { label: 'batching (pad)', ours: ['trainer: batching (pad)'], torch: 'batching', part: true },
  { label: 'reference forward', ours: ['trainer: reference forward'], part: true },
  {
    label: 'forward and backward',
    ours: ['trainer: forward and backward'],
    torch: 'forward and backward',
    part: true,
  },
  {
    label: 'optimizer (clip, AdamW)',
    ours: ['trainer: optimizer (clip, AdamW)'],
    torch: 'optimizer (clip, AdamW)',
    part: true,
  },
  { label: 'metrics (read from the device)', ours: ['trainer: metrics (read)'], part: true },
  { label: 'metrics (data, memory)', ours: ['trainer: metrics (data, memory)'], part: true },
  {
    label: 'rest',
    ours: ['trainer: train step (total)'],
    minus: [
      'trainer: batching (pad)',
      'trainer: reference forward',
      'trainer: forward and backward',
      'trainer: optimizer (clip, AdamW)',
      'trainer: metrics (read)',
      'trainer: metrics (data, memory)',
    ],
    part: true,
  },
  { label: 'loop: metrics log and events', ours: ['loop: metrics log and events'] },
  { label: 'loop: weight sync (copy out of the trainer)', ours: ['loop: weight sync (copy out)'] },
  { label: 'loop: weight sync (hand over)', ours: ['loop: weight sync (hand over)'] },
  { label: 'trainer: checkpoint', ours: ['trainer: checkpoint'] },
];

/** A loop's phases per iteration (ms), and its iteration's wall and CPU time. */
export interface PhaseColumn {
  title: string;
  perIteration: PhaseTimes;
  iterationMs: number;
  iterationCpuMs: number;
  /** Whether the explorer ran in the trainer's thread (sync_offset 0 takes turns in one thread). */
  explorerInThread: boolean;
}

/** A PyTorch run's phases per iteration, wall and CPU (ms). */
export interface TorchColumn {
  title: string;
  phaseMs: Record<string, number>;
  phaseCpuMs: Record<string, number>;
  iterationMs: number;
  iterationCpuMs: number;
}

/**
 * Wall time, or the process's CPU time: that one is less at the mercy of other processes, but a phase's own only
 * while one thread computes (taking turns, and PyTorch).
 */
export type Measure = 'wall' | 'cpu';

const has = (t: PhaseTimes, names: readonly string[]): boolean => names.some((n) => t[n] !== undefined);

/** The table's lines: one row per phase, one column per loop and PyTorch run, ms per iteration. */
export function phaseTable(ours: readonly PhaseColumn[], torch: readonly TorchColumn[], measure: Measure): string[] {
  const cpu = measure === 'cpu';
  const sum = (t: PhaseTimes, names: readonly string[]): number =>
    names.reduce((a, n) => a + ((cpu ? t[n]?.cpuMs : t[n]?.ms) ?? 0), 0);
  const torchMs = (c: TorchColumn): Record<string, number> => (cpu ? c.phaseCpuMs : c.phaseMs);
  const cell = (v: number | undefined): string => (v === undefined ? '' : v.toFixed(1));
  const title = cpu ? 'CPU ms per iteration' : 'ms per iteration';
  const rows: string[][] = [[title, ...ours.map((c) => c.title), ...torch.map((c) => c.title)]];
  for (const r of ROWS) {
    if (!ours.some((c) => has(c.perIteration, r.ours))) continue;
    rows.push([
      `${r.part ? '  ' : ''}${r.label}`,
      ...ours.map((c) =>
        cell(
          has(c.perIteration, r.ours) ? sum(c.perIteration, r.ours) - sum(c.perIteration, r.minus ?? []) : undefined,
        ),
      ),
      ...torch.map((c) => cell(r.torch === undefined ? undefined : torchMs(c)[r.torch])),
    ]);
  }
  const iteration = (c: { iterationMs: number; iterationCpuMs: number }): number =>
    cpu ? c.iterationCpuMs : c.iterationMs;
  rows.push([
    "trainer's thread: not in a phase",
    ...ours.map((c) =>
      cell(
        iteration(c) - sum(c.perIteration, c.explorerInThread ? [...MAIN_THREAD, ...IN_THREAD_EXPLORER] : MAIN_THREAD),
      ),
    ),
    ...torch.map((c) => cell(iteration(c) - Object.values(torchMs(c)).reduce((a, b) => a + b, 0))),
  ]);
  rows.push([
    cpu ? 'iteration (CPU)' : 'iteration (wall)',
    ...ours.map((c) => cell(iteration(c))),
    ...torch.map((c) => cell(iteration(c))),
  ]);
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  '));
}

/** Totals over runs divided by their iterations: ms per iteration, per phase (calls likewise). */
export function perIteration(runs: readonly { phases: PhaseTimes; iterations: number }[]): PhaseTimes {
  const out: PhaseTimes = {};
  const n = runs.reduce((a, r) => a + r.iterations, 0);
  for (const r of runs)
    for (const [phase, t] of Object.entries(r.phases)) {
      const o = (out[phase] ??= { ms: 0, cpuMs: 0, calls: 0 });
      o.ms += t.ms / n;
      o.cpuMs += t.cpuMs / n;
      o.calls += t.calls / n;
    }
  return out;
}
