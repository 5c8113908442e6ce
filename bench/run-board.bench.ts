/**
 * `npm run bench:run-board`: what watching the job folders costs the extension host. A workspace with JOBS job
 * folders (a stopped run each: record, 50 metric lines, three checkpoints) is read by a run board, and the CPU time
 * (process.cpuUsage, medians of REPEATS) of its three kinds of work is measured: a look at every known folder (the
 * stamps of their records, locks and metrics), a poll tick while every folder is watched and none is live, and a
 * search of the workspace for new folders. Per second, that is what the board cost before its folders were watched
 * (every folder each second, a search each 2 s) and what it costs now (a tick each second, every folder and a search
 * each 10 s). The machine's load is printed beside them: other processes share the cores.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROTOCOL_VERSION } from '../runtime/protocol';
import { RunBoard } from '../client/runs/run-board';
import { findJobDirs } from '../client/runs/job-dirs';
import { RunManager } from '../client/runs/run-manager';

const JOBS = Number(process.env.BENCH_JOBS ?? 200);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 9);

function workspace(): string {
  const root = mkdtempSync(join(tmpdir(), 'twb-board-bench-'));
  const t0 = Date.now() / 1000 - 3600;
  for (let i = 0; i < JOBS; i++) {
    const job = join(root, `project${i % 10}`, 'checkpoints', 'bench', `job${i}`);
    mkdirSync(join(job, 'state'), { recursive: true });
    mkdirSync(join(job, 'monitor'), { recursive: true });
    for (const s of [10, 20, 30]) mkdirSync(join(job, `global_step_${s}`));
    writeFileSync(
      join(job, 'state', 'run.json'),
      JSON.stringify({
        protocol: PROTOCOL_VERSION,
        runId: `run${i}`,
        config: join(root, `job${i}.yaml`),
        status: 'stopped',
        pid: 1,
        backend: 'wasm',
        startedAt: new Date(t0 * 1000).toISOString(),
        endedAt: new Date((t0 + 60) * 1000).toISOString(),
        stages: [],
      }),
    );
    const lines: string[] = [];
    for (let s = 1; s <= 50; s++)
      lines.push(
        JSON.stringify({
          role: 'trainer',
          step: s,
          time: s,
          wallTime: t0 + s,
          values: { 'critic/score/mean': s / 50 },
        }),
      );
    writeFileSync(join(job, 'monitor', 'metrics.jsonl'), `${lines.join('\n')}\n`);
  }
  return root;
}

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

function cpuMs(start: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(start);
  return (d.user + d.system) / 1000;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1];
}

async function main(): Promise<void> {
  const load0 = loadavg()[0];
  const root = workspace();
  try {
    const board = new RunBoard(new RunManager({ output: () => ({ line: () => {} }) }), { roots: () => [root] });
    let t = performance.now();
    const found = board.list().length;
    const first = performance.now() - t;
    board.start();
    const probe = board as unknown as {
      poll(): void;
      reread(dirs: Iterable<string>): void;
      stamps: Map<string, string>;
    };
    const looks: number[] = [];
    const ticks: number[] = [];
    const searches: number[] = [];
    for (let i = 0; i < REPEATS; i++) {
      // A look at every folder (what each poll did before folders were watched); nothing changed, nothing is re-read.
      let c = process.cpuUsage();
      probe.reread([...probe.stamps.keys()]);
      looks.push(cpuMs(c));
      c = process.cpuUsage();
      probe.poll();
      ticks.push(cpuMs(c));
      c = process.cpuUsage();
      findJobDirs([root]);
      searches.push(cpuMs(c));
      await wait(50);
    }
    board.dispose();
    const [look, tick, search] = [median(looks), median(ticks), median(searches)];
    const was = look / 1 + search / 2;
    const now = tick / 1 + look / 10 + search / 10;
    console.log(`run board, ${found} job folders, load ${load0.toFixed(2)} -> ${loadavg()[0].toFixed(2)} (1-min avg)`);
    console.log(`  first list (search + read every folder): ${first.toFixed(0)} ms wall`);
    console.log(`  a look at every folder:            ${look.toFixed(1)} CPU ms`);
    console.log(`  a poll tick, every folder watched: ${tick.toFixed(2)} CPU ms`);
    console.log(`  a search of the workspace:         ${search.toFixed(1)} CPU ms`);
    console.log(`  every folder each 1 s + a search each 2 s (before): ${was.toFixed(1)} CPU ms per second`);
    console.log(
      `  watched: a tick each 1 s + every folder and a search each 10 s: ${now.toFixed(1)} CPU ms per second`,
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

void main();
