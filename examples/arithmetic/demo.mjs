// The workbench demo (`npm run demo`): writes the data, creates a small Qwen2-style model, runs
// arithmetic.trinity.yaml (SFT warm-up, then GRPO) with the local runtime, and prints eval accuracy after each stage.
//   node examples/arithmetic/demo.mjs [--seeds 1,2,3] [--quiet]
// Each seed gets a fresh model and job directory under checkpoints/demo/seed-<n>. Exit status 1 when GRPO fails to
// raise eval accuracy by at least 10 points over the SFT checkpoint for any seed.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..', '..');
const cli = join(root, 'dist', 'cli.js');
const config = join(here, 'arithmetic.trinity.yaml');
const ALPHABET = '0123456789+{}\\ \nabcdefghijklmnopqrstuvwxyz';
const REQUIRED_GAIN = 0.1;

const args = process.argv.slice(2);
const seedsArg = args.includes('--seeds') ? args[args.indexOf('--seeds') + 1] : '1';
const seeds = seedsArg.split(',').map((s) => Number(s.trim()));
const quiet = args.includes('--quiet');
if (seeds.some((s) => !Number.isInteger(s))) {
  console.error(`--seeds takes integers, e.g. --seeds 1,2,3 (got ${seedsArg})`);
  process.exit(2);
}
if (!existsSync(cli)) {
  console.error(`${cli} is missing: run \`npm run build\` first`);
  process.exit(2);
}

function cliSync(argv, env = {}) {
  const r = spawnSync(process.execPath, [cli, ...argv], { encoding: 'utf8', env: { ...process.env, ...env } });
  if (r.status !== 0) throw new Error(`trinity-workbench ${argv[0]} failed:\n${r.stderr}`);
  return r.stdout;
}

/** Runs the config for one seed; resolves with { afterSft, afterGrpo, seconds }. */
function runSeed(seed) {
  const modelDir = join(here, 'model');
  const jobRoot = join(root, 'checkpoints', 'demo', `seed-${seed}`);
  rmSync(jobRoot, { recursive: true, force: true });
  cliSync([
    'model',
    'create',
    '--arch',
    'qwen2',
    '--layers',
    '2',
    '--hidden',
    '64',
    '--heads',
    '4',
    '--max-positions',
    '64',
    '--vocab',
    `char:${ALPHABET}`,
    '--seed',
    String(seed),
    '--out',
    modelDir,
    '--force',
  ]);
  const started = Date.now();
  return new Promise((resolvePromise, reject) => {
    const child = spawn(
      process.execPath,
      [cli, 'run', '--config', config, '--events', 'jsonl', '--seed', String(seed)],
      {
        // The config's data paths are relative: the run starts in its folder, as Run from the editor does.
        cwd: here,
        env: { ...process.env, TRINITY_CHECKPOINT_ROOT_DIR: jobRoot, DEMO_MODEL_PATH: modelDir },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const evals = [];
    let stage = 0;
    let lastExplorerStep = 0;
    let buffered = '';
    let stderr = '';
    let backend;
    let failed;
    const show = (line) => {
      if (quiet) return;
      if (process.stderr.isTTY) process.stderr.write(`\r\x1b[2K${line}`);
      else process.stderr.write(`${line}\n`);
    };
    child.stderr.on('data', (d) => (stderr += d));
    child.stdout.on('data', (d) => {
      buffered += d;
      let nl;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const e = JSON.parse(buffered.slice(0, nl));
        buffered = buffered.slice(nl + 1);
        // The runtime's own line saying which backend it started, e.g. `wasm (SIMD, OpenBLAS matmul, 1 thread)`.
        const started = e.type === 'log' ? /^tfjs backend: (.+?), [\d.]+ GFLOP\/s/.exec(e.message) : null;
        if (started) backend ??= started[1];
        if (e.type === 'log' && /stage \d+\/\d+/.test(e.message)) {
          stage++;
          show(`seed ${seed}: ${e.message}`);
        } else if (e.type === 'metrics') {
          const acc = Object.entries(e.values).find(([k]) => /^eval\/.*\/accuracy\/mean(@\d+)?$/.test(k));
          if (acc) evals.push({ step: e.step, accuracy: acc[1] });
          if (e.role === 'trainer' && stage === 1 && e.step % 10 === 0)
            show(`seed ${seed}: SFT step ${e.step}  loss ${e.values['actor/sft_loss']?.toFixed(3)}`);
          if (e.role === 'explorer' && e.values['rollout/accuracy/mean'] !== undefined) {
            lastExplorerStep = e.step;
            if (e.step % 10 === 0)
              show(
                `seed ${seed}: GRPO step ${e.step}  rollout accuracy ${(100 * e.values['rollout/accuracy/mean']).toFixed(1)}%  eval so far ${evals.map((x) => `${(100 * x.accuracy).toFixed(0)}%`).join(' ')}`,
              );
          }
        } else if (e.type === 'done' && e.status !== 'finished') failed = e.error ?? e.status;
      }
    });
    child.on('close', (code) => {
      if (process.stderr.isTTY && !quiet) process.stderr.write('\n');
      if (code !== 0 || failed)
        return reject(new Error(`run failed (seed ${seed}): ${failed ?? `exit ${code}`}\n${stderr.slice(-2000)}`));
      if (evals.length < 2)
        return reject(new Error(`seed ${seed}: expected evals after SFT and after GRPO, got ${evals.length}`));
      resolvePromise({
        seed,
        backend: backend ?? 'unknown',
        afterSft: evals[0].accuracy,
        afterGrpo: evals[evals.length - 1].accuracy,
        steps: lastExplorerStep,
        seconds: (Date.now() - started) / 1000,
      });
    });
  });
}

const pct = (x) => `${(100 * x).toFixed(1)}%`;
const results = [];
for (const seed of seeds) {
  try {
    results.push(await runSeed(seed));
  } catch (e) {
    console.error(e.message);
    process.exit(1);
  }
}
const header = ['seed', 'eval accuracy after SFT', 'after GRPO', 'change', 'time'];
const rows = results.map((r) => [
  String(r.seed),
  pct(r.afterSft),
  pct(r.afterGrpo),
  `${r.afterGrpo >= r.afterSft ? '+' : ''}${(100 * (r.afterGrpo - r.afterSft)).toFixed(1)} pts`,
  `${r.seconds.toFixed(0)} s`,
]);
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
const fmt = (cells) => cells.map((c, i) => c.padEnd(widths[i])).join('  ');
console.log(`\nSingle-digit addition, greedy eval on all 100 problems (${config})`);
// Results for one seed depend on the backend: their float rounding takes different sampling paths.
console.log(`Backend: ${[...new Set(results.map((r) => r.backend))].join('; ')}`);
console.log(fmt(header));
console.log(widths.map((w) => '-'.repeat(w)).join('  '));
for (const row of rows) console.log(fmt(row));
const short = results.filter((r) => r.afterGrpo - r.afterSft < REQUIRED_GAIN);
if (short.length) {
  console.log(
    `\nGRPO raised accuracy by less than ${100 * REQUIRED_GAIN} points for seed(s) ${short.map((r) => r.seed).join(', ')}.`,
  );
  process.exit(1);
}
console.log(`\nMetrics: checkpoints/demo/seed-<n>/…/monitor/metrics.jsonl (TensorBoard files beside it).`);
