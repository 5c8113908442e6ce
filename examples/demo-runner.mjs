// What the demos (`npm run demo`, `npm run demo:agent`) share: creating a seed's model through dist/cli.js, running a
// staged config (SFT warm-up, then GRPO with evals) with JSON events, and printing the per-seed table.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const CLI = join(ROOT, 'dist', 'cli.js');

/** `--seeds 1,2,3` and `--quiet` from argv; exits 2 on bad seeds or a missing build. */
export function demoArgs(argv = process.argv.slice(2)) {
  const seedsArg = argv.includes('--seeds') ? argv[argv.indexOf('--seeds') + 1] : '1';
  const seeds = seedsArg.split(',').map((s) => Number(s.trim()));
  if (seeds.some((s) => !Number.isInteger(s))) {
    console.error(`--seeds takes integers, e.g. --seeds 1,2,3 (got ${seedsArg})`);
    process.exit(2);
  }
  if (!existsSync(CLI)) {
    console.error(`${CLI} is missing: run \`npm run build\` first`);
    process.exit(2);
  }
  return { seeds, quiet: argv.includes('--quiet') };
}

/** Runs `trinity-workbench <argv>` and returns its stdout; throws with its stderr when it fails. */
export function cliSync(argv, env = {}) {
  const r = spawnSync(process.execPath, [CLI, ...argv], { encoding: 'utf8', env: { ...process.env, ...env } });
  if (r.status !== 0) throw new Error(`trinity-workbench ${argv[0]} failed:\n${r.stderr}`);
  return r.stdout;
}

/**
 * Runs `config` for one seed from `cwd` (its relative paths are taken from there, as Run from the editor does) with
 * TRINITY_CHECKPOINT_ROOT_DIR = `jobRoot` (emptied first) and `env`. Resolves with the eval values whose metric
 * key matches `evalKey` in order, the backend line, the last explorer step and the seconds taken.
 * @param {{ config: string, cwd: string, jobRoot: string, env?: object, seed: number, quiet?: boolean,
 *   evalKey: RegExp, rolloutKey: string, rolloutLabel: string, progressEvery?: number,
 *   stepDetail?: (role: 'explorer' | 'trainer', values: Record<string, number>, step: number) => string }} o
 * `stepDetail` adds to each progress line of the RL stage what that role's metrics say (e.g. pg_loss, entropy).
 */
export function runDemoSeed(o) {
  rmSync(o.jobRoot, { recursive: true, force: true });
  const started = Date.now();
  return new Promise((resolvePromise, reject) => {
    const child = spawn(
      process.execPath,
      [CLI, 'run', '--config', o.config, '--events', 'jsonl', '--seed', String(o.seed)],
      {
        cwd: o.cwd,
        env: { ...process.env, TRINITY_CHECKPOINT_ROOT_DIR: o.jobRoot, ...o.env },
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
      if (o.quiet) return;
      if (process.stderr.isTTY) process.stderr.write(`\r\x1b[2K${line}`);
      else process.stderr.write(`${line}\n`);
    };
    const pct = (x) => `${(100 * x).toFixed(0)}%`;
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
          show(`seed ${o.seed}: ${e.message}`);
        } else if (e.type === 'metrics') {
          const hit = Object.entries(e.values).find(([k]) => o.evalKey.test(k));
          if (hit) {
            evals.push({ step: e.step, value: hit[1] });
            show(`seed ${o.seed}: eval at step ${e.step}: ${pct(hit[1])}`);
          }
          if (e.role === 'trainer' && stage === 1 && e.step % 10 === 0)
            show(`seed ${o.seed}: SFT step ${e.step}  loss ${e.values['actor/sft_loss']?.toFixed(3)}`);
          if (e.role === 'explorer' && e.values[o.rolloutKey] !== undefined) {
            lastExplorerStep = e.step;
            if (e.step % (o.progressEvery ?? 10) === 0)
              show(
                `seed ${o.seed}: GRPO step ${e.step}  ${o.rolloutLabel} ${pct(e.values[o.rolloutKey])}${o.stepDetail ? `  ${o.stepDetail('explorer', e.values, e.step)}` : ''}  eval so far ${evals.map((x) => pct(x.value)).join(' ')}`,
              );
          }
          if (e.role === 'trainer' && stage > 1 && o.stepDetail && e.step % (o.progressEvery ?? 10) === 0)
            show(`seed ${o.seed}: GRPO step ${e.step}  trained: ${o.stepDetail('trainer', e.values, e.step)}`);
        } else if (e.type === 'done' && e.status !== 'finished') failed = e.error ?? e.status;
      }
    });
    child.on('close', (code) => {
      if (process.stderr.isTTY && !o.quiet) process.stderr.write('\n');
      if (code !== 0 || failed)
        return reject(new Error(`run failed (seed ${o.seed}): ${failed ?? `exit ${code}`}\n${stderr.slice(-2000)}`));
      if (evals.length < 2)
        return reject(new Error(`seed ${o.seed}: expected evals after SFT and after GRPO, got ${evals.length}`));
      resolvePromise({
        seed: o.seed,
        backend: backend ?? 'unknown',
        afterSft: evals[0].value,
        afterGrpo: evals[evals.length - 1].value,
        steps: lastExplorerStep,
        seconds: (Date.now() - started) / 1000,
      });
    });
  });
}

/**
 * Prints the per-seed table under `title` (its second column headed `${column} after SFT`) and returns the seeds
 * whose gain is under `requiredGain` (a fraction).
 */
function printDemoTable(results, { title, column, requiredGain }) {
  const pct = (x) => `${(100 * x).toFixed(1)}%`;
  const header = ['seed', `${column} after SFT`, 'after GRPO', 'change', 'time'];
  const rows = results.map((r) => [
    String(r.seed),
    pct(r.afterSft),
    pct(r.afterGrpo),
    `${r.afterGrpo >= r.afterSft ? '+' : ''}${(100 * (r.afterGrpo - r.afterSft)).toFixed(1)} pts`,
    `${r.seconds.toFixed(0)} s`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const fmt = (cells) => cells.map((c, i) => c.padEnd(widths[i])).join('  ');
  console.log(`\n${title}`);
  // Results for one seed depend on the backend: their float rounding takes different sampling paths.
  console.log(`Backend: ${[...new Set(results.map((r) => r.backend))].join('; ')}`);
  console.log(fmt(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of rows) console.log(fmt(row));
  return results.filter((r) => r.afterGrpo - r.afterSft < requiredGain);
}

/**
 * Runs `runSeed` for each seed in turn, prints the table and `footer`; exits 1 when a run fails or a seed gains less
 * than `requiredGain`, naming them.
 */
export async function runDemo(seeds, runSeed, { title, column, what, requiredGain, footer }) {
  const results = [];
  for (const seed of seeds) {
    try {
      results.push(await runSeed(seed));
    } catch (e) {
      console.error(e.message);
      process.exit(1);
    }
  }
  const short = printDemoTable(results, { title, column, requiredGain });
  if (short.length) {
    console.log(
      `\nGRPO raised ${what} by less than ${100 * requiredGain} points for seed(s) ${short.map((r) => r.seed).join(', ')}.`,
    );
    process.exit(1);
  }
  console.log(`\n${footer}`);
}
