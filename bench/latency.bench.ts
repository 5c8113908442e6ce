/**
 * `npm run bench:latency`: how long the things a user waits on take, timed here rather than bounded in the tests
 * (which count the work instead: bytes read, characters scanned, lookups): `doctor`, a dataset peek of a 50 MB
 * file and the refusal of a 50 MB JSON document, the math reward on a degenerate 100 kB response, and the
 * interpolation parser on 8x the input. Medians of REPEATS runs, with the machine's load beside them.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { peekDataset } from '../runtime/config/datasets/peek-dataset';
import { findInterpolations, parseValue } from '../runtime/config/interpolation';
import { createReward } from '../runtime/rft/rewards';

const REPEATS = Number(process.env.BENCH_REPEATS ?? 5);

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

async function timeMs(f: () => unknown): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < REPEATS; i++) {
    const t0 = performance.now();
    await f();
    times.push(performance.now() - t0);
  }
  return median(times);
}

async function main(): Promise<void> {
  const load0 = loadavg()[0];
  const rows: [string, string][] = [];
  const cli = join(__dirname, '..', 'dist', 'cli.js');
  rows.push([
    'doctor (dist/cli.js, whole process)',
    `${((await timeMs(() => spawnSync(process.execPath, [cli, 'doctor'], { encoding: 'utf8' }))) / 1000).toFixed(2)} s`,
  ]);

  const dir = mkdtempSync(join(tmpdir(), 'twb-latency-'));
  try {
    const line = JSON.stringify({ prompt: 'p'.repeat(480), response: 'r'.repeat(480) }) + '\n';
    const n = Math.ceil((50 * 1024 * 1024) / line.length);
    writeFileSync(join(dir, 'big.jsonl'), line.repeat(n));
    writeFileSync(join(dir, 'big.json'), '[' + (line.trimEnd() + ',').repeat(n - 1) + line.trimEnd() + ']');
    rows.push([
      'peek: first rows of 50 MB JSON Lines',
      `${(await timeMs(() => peekDataset('big.jsonl', { baseDir: dir }))).toFixed(1)} ms`,
    ]);
    rows.push([
      'peek: refusing a 50 MB JSON document',
      `${(await timeMs(() => peekDataset('big.json', { baseDir: dir }))).toFixed(1)} ms`,
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  const reward = createReward('math_reward', {});
  const degenerate = '<think></think><answer></answer>x'.repeat(3000);
  rows.push([
    'math_reward on a degenerate 100 kB response',
    `${(await timeMs(() => reward({ response: degenerate, truth: '1' }))).toFixed(1)} ms`,
  ]);

  // a key of n parts: parsing and scanning it is linear work (the tests count its characters read)
  const key = (n: number) => '${a' + '.b'.repeat(n) + '}';
  const interpolate = (s: string) => (parseValue(s), findInterpolations(s));
  for (let i = 0; i < 20; i++) interpolate(key(20_000)); // warm-up: compilation
  const small = await timeMs(() => interpolate(key(2_500)));
  const large = await timeMs(() => interpolate(key(20_000)));
  rows.push([
    'interpolation parse + scan, 8x the input',
    `${(large / small).toFixed(1)}x the time (${small.toFixed(2)} -> ${large.toFixed(2)} ms)`,
  ]);

  const width = Math.max(...rows.map(([k]) => k.length));
  for (const [k, v] of rows) console.log(`${k.padEnd(width)}  ${v}`);
  console.log(`load average ${load0.toFixed(2)} -> ${loadavg()[0].toFixed(2)} (${REPEATS} runs each, medians)`);
}

void main();
