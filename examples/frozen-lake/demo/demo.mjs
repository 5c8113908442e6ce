// The agent demo (`npm run demo:agent`): writes the demonstrations and maps (make-demo-data.mjs), learns the model's
// tokenizer from them (demo-tokenizer.mjs), creates a tiny Qwen2-style model, runs demo.trinity.yaml (SFT warm-up,
// then GRPO on Trinity's frozen_lake_workflow) with the local runtime, and prints the greedy success rate on held-out
// maps after each stage.
//   node --import tsx examples/frozen-lake/demo/demo.mjs [--seeds 1,2,3] [--quiet] [--smoke] [--work-dir DIR]
// Each seed gets a fresh model and job directory under checkpoints/demo-agent/seed-<n>. Exit status 1 when GRPO fails
// to raise the success rate by at least 15 points over the SFT checkpoint for any seed. --smoke runs the same
// pipeline on a few maps for a step or two (the test's end-to-end check) and asks for no gain. --work-dir DIR puts
// everything the demo writes (data, tokenizer, model, job directories) under DIR instead, so a smoke run leaves the
// full run's files alone.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseDocument } from 'yaml';
import { ROOT, cliSync, demoArgs, runDemo, runDemoSeed } from '../../demo-runner.mjs';
import { DEMO_DATA, writeDemoData } from './make-demo-data.mjs';
import { writeDemoTokenizer } from './demo-tokenizer.mjs';
import { FlatGroups } from './flat-groups.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const { seeds, quiet } = demoArgs();
const smoke = process.argv.includes('--smoke');
const workDirArg = process.argv.includes('--work-dir') ? process.argv[process.argv.indexOf('--work-dir') + 1] : null;
if (workDirArg === undefined || workDirArg?.startsWith('--')) {
  console.error('--work-dir takes a folder, e.g. --work-dir /tmp/agent-demo');
  process.exit(2);
}
/** Where the demo writes: its data and model beside the config and its jobs under checkpoints/, or all under --work-dir. */
const out = workDirArg
  ? { cwd: resolve(workDirArg), data: resolve(workDirArg, 'demo-data'), model: resolve(workDirArg, 'model') }
  : { cwd: here, data: DEMO_DATA, model: join(here, 'model') };
const jobsRoot = workDirArg ? resolve(workDirArg, 'checkpoints') : join(ROOT, 'checkpoints', 'demo-agent');
const REQUIRED_GAIN = smoke ? -Infinity : 0.15;
const config = smoke ? smokeConfig() : join(here, 'demo.trinity.yaml');
const counts = writeDemoData(smoke ? { sft: 16, train: 4, eval: 4 } : undefined, out.data);
const tokenizerDir = join(jobsRoot, 'tokenizer');
const { vocab } = writeDemoTokenizer(join(out.data, 'sft.jsonl'), tokenizerDir);
if (!quiet)
  console.error(
    `demo data: ${counts.sft} demonstrations, ${counts.train} GRPO maps, ${counts.eval} held-out maps; vocabulary ${vocab}`,
  );

/** demo.trinity.yaml with a schedule of a step or two (written beside the job directories). */
function smokeConfig() {
  const doc = parseDocument(readFileSync(join(here, 'demo.trinity.yaml'), 'utf8'));
  const set = (path, value) => {
    if (doc.getIn(path) === undefined) throw new Error(`demo.trinity.yaml has no ${path.join('.')}`);
    doc.setIn(path, value);
  };
  set(['stages', 0, 'buffer', 'total_steps'], 2);
  set(['stages', 0, 'trainer', 'save_interval'], 2);
  set(['stages', 1, 'algorithm', 'repeat_times'], 2);
  set(['stages', 1, 'buffer', 'batch_size'], 2);
  set(['stages', 1, 'buffer', 'total_steps'], 1);
  set(['stages', 1, 'explorer', 'eval_interval'], 1);
  set(['stages', 1, 'trainer', 'save_interval'], 1);
  const file = join(jobsRoot, 'smoke.trinity.yaml');
  mkdirSync(jobsRoot, { recursive: true });
  writeFileSync(file, doc.toString());
  return file;
}

/**
 * What each GRPO step did, to see why it learns or not: the mean episode length in turns (explorer); the groups of
 * the batch trained on whose episodes all got the same reward (advantage 0 for all of them: read when the trainer
 * reports, as the buffer has them by then), the reward, pg_loss, entropy of the sampled tokens and response length.
 */
function grpoStepDetail(flatGroups) {
  const f = (x, d = 3) => (x === undefined ? '?' : x.toFixed(d));
  return (role, v, step) => {
    if (role === 'explorer') return `turns ${f(v['rollout/env_steps/mean'], 1)}`;
    const { flat, groups } = flatGroups.of(step);
    return `flat groups ${flat}/${groups}  reward ${f(v['critic/score/mean'])}  pg_loss ${f(v['actor/pg_loss'])}  entropy ${f(v['actor/entropy_loss'])}  response ${f(v['response_length/mean'], 0)} tokens`;
  };
}

/** The GRPO stage's folder under the checkpoint root: the config's project, name and stage name. */
function grpoJobPath() {
  const doc = parseDocument(readFileSync(config, 'utf8'));
  return [doc.get('project'), doc.get('name'), doc.getIn(['stages', 1, 'stage_name'])].map(String);
}

function runSeed(seed) {
  const modelDir = out.model;
  // Positions for max_model_len (demo.trinity.yaml) exactly: vLLM refuses a longer max_model_len.
  const args = ['--arch', 'qwen2', '--layers', '2', '--hidden', '128', '--heads', '4', '--max-positions', '1280'];
  cliSync(['model', 'create', ...args, '--vocab', tokenizerDir, '--seed', String(seed), '--out', modelDir, '--force']);
  const jobRoot = join(jobsRoot, `seed-${seed}`);
  const buffer = join(jobRoot, ...grpoJobPath(), 'buffer', 'experience_buffer.jsonl');
  return runDemoSeed({
    config,
    cwd: out.cwd,
    jobRoot,
    env: { DEMO_MODEL_PATH: modelDir },
    seed,
    quiet,
    evalKey: /^eval\/.*\/test_score\/mean(@\d+)?$/,
    rolloutKey: 'rollout/test_score/mean',
    rolloutLabel: 'rollout success',
    progressEvery: 1,
    stepDetail: grpoStepDetail(new FlatGroups(buffer)),
  });
}

await runDemo(seeds, runSeed, {
  title: `FrozenLake 4×4, greedy success on ${counts.eval} held-out maps (${config}${smoke ? ', a smoke run' : ''})`,
  column: 'success',
  what: 'the success rate',
  requiredGain: REQUIRED_GAIN,
  footer: `Metrics: ${jobsRoot}/seed-<n>/…/monitor/metrics.jsonl (the dashboard's Rollouts tab shows the episodes).`,
});
