/**
 * Checks that look at the disk follow it: a dataset that appears clears its TRN304 when the editor reports the new
 * file (workspace/didChangeWatchedFiles), without an edit of the config; and the run plan (what Run asks before it
 * starts) checks the disk as it is now, even when no file event came (a model folder made for too short a context is
 * refused with TRN318 the moment it is there).
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, test } from 'node:test';
import type { RunPlanResponse } from '../../server/lsp-messages';
import { startInProcess, type TestClient } from '../helpers/lsp';

const dir = realpathSync(mkdtempSync(join(tmpdir(), 'twb-file-checks-')));
const CONFIG = `# trinity-version: main
mode: both
algorithm:
  algorithm_type: grpo
  repeat_times: 4
model:
  model_path: model
  max_prompt_tokens: 48
  max_response_tokens: 16
  max_model_len: 64
cluster:
  node_num: 1
  gpu_per_node: 2
buffer:
  batch_size: 4
  total_steps: 2
  explorer_input:
    taskset:
      name: sums
      path: data/train.jsonl
      format: {prompt_key: question, response_key: answer}
    default_workflow_type: simple_workflow
    default_reward_fn_type: math_boxed_reward
`;
const uri = pathToFileURL(join(dir, 'run.trinity.yaml')).toString();
const codes = (ds: { code?: unknown }[]) => ds.map((d) => String(d.code));

let c: TestClient;
before(async () => {
  writeFileSync(join(dir, 'run.trinity.yaml'), CONFIG);
  c = await startInProcess({ rootUri: pathToFileURL(dir).toString() });
});
after(() => c.close());

test('a dataset that appears clears its error when the editor reports the file, with no edit', async () => {
  assert.ok(codes(await c.open(uri, CONFIG)).includes('TRN304'));
  mkdirSync(join(dir, 'data'));
  const file = join(dir, 'data', 'train.jsonl');
  writeFileSync(file, '{"question": "1+1", "answer": "2"}\n');
  const cleared = c.nextDiagnostics(uri, (ds) => !codes(ds).includes('TRN304'), 5000);
  await c.conn.sendNotification('workspace/didChangeWatchedFiles', {
    changes: [{ uri: pathToFileURL(file).toString(), type: 1 }],
  });
  await cleared;
});

test("Run's plan checks the disk now: a model made for 32 positions is refused before launch", async () => {
  const plan0 = await c.request<RunPlanResponse>('trinity/runPlan', { uri });
  assert.deepEqual(codes(plan0.errors), []);
  assert.equal(plan0.models[0].found, false);
  mkdirSync(join(dir, 'model'));
  writeFileSync(
    join(dir, 'model', 'config.json'),
    JSON.stringify({ model_type: 'qwen2', max_position_embeddings: 32 }),
  );
  // No file event: the plan looks itself, and the Problems panel gets what it found.
  const published = c.nextDiagnostics(uri, (ds) => codes(ds).includes('TRN318'), 5000);
  const plan = await c.request<RunPlanResponse>('trinity/runPlan', { uri });
  assert.deepEqual(codes(plan.errors), ['TRN318']);
  assert.match(plan.errors[0].message, /`model\.max_model_len` \(64\) is longer than the model at `model` supports/);
  await published;
});
