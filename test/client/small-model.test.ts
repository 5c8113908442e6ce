/**
 * Create Small Model makes a model the config can use: its positions come from the run plan's longest context (the
 * model and every auxiliary model's `max_model_len`), so the length check vLLM runs at launch (TRN318) passes, where
 * the old fixed 512 positions failed a config asking for 544. The models a copy lacks are each given a folder.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, test } from 'node:test';
import { MODEL_SIZES, missingModelTargets, modelCreateArgs, positionsFor } from '../../client/small-model';
import type { RunPlanResponse } from '../../server/lsp-messages';
import { startInProcess, type TestClient } from '../helpers/lsp';

const CLI = resolve(__dirname, '..', '..', 'dist', 'cli.js');
const dir = realpathSync(mkdtempSync(join(tmpdir(), 'twb-small-model-')));
const CONFIG = `# trinity-version: main
mode: both
algorithm:
  algorithm_type: on_policy_distill
  repeat_times: 2
model:
  model_path: model
  max_prompt_tokens: 512
  max_response_tokens: 32
  max_model_len: 544
cluster:
  node_num: 1
  gpu_per_node: 4
buffer:
  batch_size: 2
  total_steps: 1
  explorer_input:
    taskset:
      name: t
      path: data.jsonl
      format: {prompt_key: question, response_key: answer}
    default_workflow_type: on_policy_distill_math_workflow
explorer:
  auxiliary_models:
    - model_path: Qwen/Qwen2.5-1.5B-Instruct
      max_model_len: 600
`;

let c: TestClient;
before(async () => {
  writeFileSync(join(dir, 'run.trinity.yaml'), CONFIG);
  writeFileSync(join(dir, 'data.jsonl'), '{"question": "1+1", "answer": "2"}\n');
  c = await startInProcess();
});
after(() => c.close());

const check = () =>
  spawnSync(process.execPath, [CLI, 'check', '--min-severity', 'error', 'run.trinity.yaml'], {
    cwd: dir,
    encoding: 'utf8',
  });

test("the model and the teacher a copy lacks get folders beside the config, sized to the config's longest context", async () => {
  const uri = pathToFileURL(join(dir, 'run.trinity.yaml')).toString();
  await c.open(uri, CONFIG);
  const plan = await c.request<RunPlanResponse>('trinity/runPlan', { uri });
  assert.equal(plan.maxModelLen, 600);
  const targets = missingModelTargets(plan.models, dir);
  assert.deepEqual(targets, [
    { key: 'model.model_path', outDir: join(dir, 'model') },
    { key: 'explorer.auxiliary_models.0.model_path', outDir: join(dir, 'auxiliary_models-0') },
  ]);

  const make = (maxPositions: number) => {
    const [, ...argv] = modelCreateArgs({
      cliPath: CLI,
      arch: 'qwen2',
      size: MODEL_SIZES[0],
      vocab: 'byte',
      maxPositions,
      outDir: targets[0].outDir,
      seed: 0,
    });
    const r = spawnSync(process.execPath, [CLI, ...argv], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
  };
  // What Create Small Model made before: 512 positions, which vLLM refuses for max_model_len 544.
  make(512);
  const refused = check();
  assert.equal(refused.status, 1);
  assert.match(
    refused.stdout,
    /TRN318 `model\.max_model_len` \(544\) is longer than the model at `model` supports \(max_position_embeddings = 512/,
  );
  make(positionsFor(plan));
  assert.doesNotMatch(check().stdout, /TRN318/);
});
