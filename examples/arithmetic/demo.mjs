// The workbench demo (`npm run demo`): writes the data, creates a small Qwen2-style model, runs
// arithmetic.trinity.yaml (SFT warm-up, then GRPO) with the local runtime, and prints eval accuracy after each stage.
//   node examples/arithmetic/demo.mjs [--seeds 1,2,3] [--quiet]
// Each seed gets a fresh model and job directory under checkpoints/demo/seed-<n>. Exit status 1 when GRPO fails to
// raise eval accuracy by at least 10 points over the SFT checkpoint for any seed.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROOT, cliSync, demoArgs, runDemo, runDemoSeed } from '../demo-runner.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const config = join(here, 'arithmetic.trinity.yaml');
const ALPHABET = '0123456789+{}\\ \nabcdefghijklmnopqrstuvwxyz';
const REQUIRED_GAIN = 0.1;

const { seeds, quiet } = demoArgs();

/** Creates the seed's model and runs the config; resolves with { afterSft, afterGrpo, seconds, … }. */
function runSeed(seed) {
  const modelDir = join(here, 'model');
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
  return runDemoSeed({
    config,
    cwd: here,
    jobRoot: join(ROOT, 'checkpoints', 'demo', `seed-${seed}`),
    env: { DEMO_MODEL_PATH: modelDir },
    seed,
    quiet,
    evalKey: /^eval\/.*\/accuracy\/mean(@\d+)?$/,
    rolloutKey: 'rollout/accuracy/mean',
    rolloutLabel: 'rollout accuracy',
  });
}

await runDemo(seeds, runSeed, {
  title: `Single-digit addition, greedy eval on all 100 problems (${config})`,
  column: 'eval accuracy',
  what: 'accuracy',
  requiredGain: REQUIRED_GAIN,
  footer: 'Metrics: checkpoints/demo/seed-<n>/…/monitor/metrics.jsonl (TensorBoard files beside it).',
});
