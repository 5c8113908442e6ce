/**
 * A config's last run in the editor, over a real LSP connection: the server finds the run's job dir from the config
 * (checkpoint_root_dir/project/name), reports run health (TRN4xx) on the keys to change with quick fixes, shows the
 * metrics a key drives as sparklines in its hover, and follows the run while it is live: by its record, or by the
 * job lock a real process holds while the record is still an earlier run's.
 */
import assert from 'node:assert/strict';
import { appendFileSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import type { CodeAction, Diagnostic, Hover } from 'vscode-languageserver-types';
import { sparkline } from '../../server/service/sparkline';
import { startInProcess, type TestClient } from '../helpers/lsp';
import { spawnLockHolder } from '../helpers/lock-holder';
import { KEY_LOCATION_REQUEST, METRIC_DRIVERS_REQUEST, type KeyLocation } from '../../server/lsp-messages';

const FIXTURE = 'test/fixtures/run-health/tiny-grpo/metrics.jsonl';
const CONFIG = `# trinity-version: main
project: health
name: tiny-grpo
checkpoint_root_dir: ./checkpoints
mode: both
model:
  model_path: Qwen/Qwen2.5-0.5B-Instruct
  max_prompt_tokens: 16
  max_response_tokens: 4
  max_model_len: 24
algorithm:
  algorithm_type: grpo
  repeat_times: 4
buffer:
  batch_size: 4
  total_steps: 12
  explorer_input:
    taskset:
      name: sums
      path: data/train.jsonl
      format:
        prompt_key: question
        response_key: answer
    default_workflow_type: simple_workflow
    default_reward_fn_type: math_boxed_reward
`;
const lineOf = (key: string) => CONFIG.split('\n').findIndex((l) => l.trimStart().startsWith(`${key}:`));
const health = (ds: Diagnostic[]) =>
  ds
    .filter((d) => String(d.code).startsWith('TRN4'))
    .map((d) => `${d.range.start.line}:${d.code}`)
    .sort();

describe('run health and metric hovers over LSP', () => {
  let dir: string;
  let c: TestClient;
  let uri: string;
  let monitor: string;
  let state: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'run-health-'));
    monitor = join(dir, 'checkpoints', 'health', 'tiny-grpo', 'monitor');
    state = join(dir, 'checkpoints', 'health', 'tiny-grpo', 'state');
    mkdirSync(monitor, { recursive: true });
    copyFileSync(FIXTURE, join(monitor, 'metrics.jsonl'));
    writeFileSync(join(dir, 'run.trinity.yaml'), CONFIG);
    uri = pathToFileURL(join(dir, 'run.trinity.yaml')).toString();
    c = await startInProcess({ rootUri: pathToFileURL(dir).toString() });
  });
  after(async () => {
    await c.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("the recorded run's problems are on the keys to change, with the fixes", async () => {
    const ds = await c.open(uri, CONFIG);
    assert.deepEqual(
      health(ds),
      [`${lineOf('max_response_tokens')}:TRN400`, `${lineOf('repeat_times')}:TRN401`].sort(),
    );
    const trunc = ds.find((d) => d.code === 'TRN400')!;
    assert.match(trunc.message, /of responses over the last 5 steps stop at max_response_tokens \(4\)/);
    const actions = await c.request<CodeAction[]>('textDocument/codeAction', {
      textDocument: { uri },
      range: trunc.range,
      context: { diagnostics: [trunc] },
    });
    const fix = actions.find((a) => a.title === 'Set `max_response_tokens` to `8`');
    assert.ok(fix, actions.map((a) => a.title).join(', '));
    assert.equal(fix.edit!.changes![uri][0].newText, '8');
    const flat = ds.find((d) => d.code === 'TRN401')!;
    const actions2 = await c.request<CodeAction[]>('textDocument/codeAction', {
      textDocument: { uri },
      range: flat.range,
      context: { diagnostics: [flat] },
    });
    assert.ok(actions2.some((a) => a.title === 'Set `repeat_times` to `8`'));
  });

  test('hovering a key shows the last run of the metrics it drives, as sparklines with min, max and last', async () => {
    const line = lineOf('max_response_tokens');
    const h = await c.request<Hover>('textDocument/hover', { textDocument: { uri }, position: { line, character: 4 } });
    const md = (h.contents as { value: string }).value;
    assert.match(md, /\*\*Last run\*\*/);
    const clip = readFileSync(FIXTURE, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { role: string; step: number; values: Record<string, number> })
      .filter((l) => l.role === 'trainer');
    const values = clip.map((l) => l.values['response_length/clip_ratio']);
    const row = md.split('\n').find((l) => l.includes('`response_length/clip_ratio`'))!;
    assert.ok(row, md);
    const spark = / `([▁▂▃▄▅▆▇█ ]+)` min/.exec(row)![1];
    assert.equal(spark.length, values.length);
    // The lowest value draws the lowest block and the highest the highest.
    assert.equal(spark[values.indexOf(Math.min(...values))], '▁');
    assert.equal(spark[values.indexOf(Math.max(...values))], '█');
    assert.ok(
      row.includes(
        `min ${Number(Math.min(...values).toPrecision(3))} · max ${Number(Math.max(...values).toPrecision(3))} · last ${Number(values[values.length - 1].toPrecision(3))} (step 12)`,
      ),
      row,
    );
    // A key that drives no logged metric gets no run section.
    const none = await c.request<Hover>('textDocument/hover', {
      textDocument: { uri },
      position: { line: lineOf('project'), character: 2 },
    });
    assert.doesNotMatch((none.contents as { value: string }).value, /Last run/);
  });

  test("the dashboard's requests: the keys that drive each tag, and where a key is in the file", async () => {
    const drivers = await c.request<Record<string, string[]>>(METRIC_DRIVERS_REQUEST, {
      tags: ['response_length/clip_ratio', 'actor/grad_norm', 'no/such'],
      uri,
    });
    assert.deepEqual(drivers['response_length/clip_ratio'], [
      'model.max_response_tokens',
      'buffer.explorer_input.taskset.rollout_args.max_tokens',
    ]);
    assert.deepEqual(drivers['actor/grad_norm'], ['trainer.grad_clip', 'algorithm.optimizer.lr']);
    assert.deepEqual(drivers['no/such'], []);
    const written = await c.request<KeyLocation>(KEY_LOCATION_REQUEST, { uri, key: 'model.max_response_tokens' });
    assert.deepEqual([written.written, written.range.start.line], [true, lineOf('max_response_tokens')]);
    const ancestor = await c.request<KeyLocation>(KEY_LOCATION_REQUEST, {
      uri,
      key: 'algorithm.policy_loss_fn_args.clip_range',
    });
    assert.deepEqual([ancestor.written, ancestor.range.start.line], [false, lineOf('algorithm')]);
  });

  test('a live run is followed: a stall appears while it runs, new steps reach the hover, and it clears when it ends', async () => {
    mkdirSync(state, { recursive: true });
    const record = {
      protocol: 1,
      runId: 'r1',
      config: join(dir, 'run.trinity.yaml'),
      status: 'running',
      pid: process.pid,
      backend: 'cpu',
      startedAt: new Date().toISOString(),
      stages: [],
    };
    writeFileSync(join(state, 'run.json'), JSON.stringify(record));
    // The recorded run's last step is long past: live, it has stalled.
    const stalled = await c.nextDiagnostics(uri, (ds) => ds.some((d) => d.code === 'TRN405'));
    const stall = stalled.find((d) => d.code === 'TRN405')!;
    assert.equal(stall.range.start.line, 0, "explorer.max_timeout is not written, nor is explorer: the file's start");
    assert.match(stall.message, /^explorer\.max_timeout: No new step for/);
    // A new trainer step (written as the runtime writes it) comes in: the hover's last value follows.
    const now = Date.now() / 1000;
    appendFileSync(
      join(monitor, 'metrics.jsonl'),
      `${JSON.stringify({ role: 'trainer', step: 13, time: 30, wallTime: now, values: { 'response_length/clip_ratio': 0.25, 'time/train_step': 1.2 } })}\n`,
    );
    await c.nextDiagnostics(uri, () => true);
    const h = await c.request<Hover>('textDocument/hover', {
      textDocument: { uri },
      position: { line: lineOf('max_response_tokens'), character: 4 },
    });
    const md = (h.contents as { value: string }).value;
    assert.match(md, /\*\*Live run\*\*/);
    assert.match(md, /`response_length\/clip_ratio` `[▁▂▃▄▅▆▇█ ]{13}` .* last 0\.25 \(step 13\)/);
    writeFileSync(
      join(state, 'run.json'),
      JSON.stringify({ ...record, status: 'finished', endedAt: new Date().toISOString() }),
    );
    const ended = await c.nextDiagnostics(uri, (ds) => !ds.some((d) => d.code === 'TRN405'));
    assert.ok(
      ended.some((d) => d.code === 'TRN400'),
      "the finished run's findings stay",
    );
  });

  test('a run that holds the job lock is followed while run.json is still the finished run before it', async () => {
    // A run from a terminal or another window: the runtime takes the lock before it writes its own record.
    const before = JSON.parse(readFileSync(join(state, 'run.json'), 'utf8'));
    assert.equal(before.status, 'finished');
    const holder = await spawnLockHolder(dirname(state), 'terminal-run', join(dir, 'run.trinity.yaml'));
    try {
      const stalled = await c.nextDiagnostics(uri, (ds) => ds.some((d) => d.code === 'TRN405'));
      assert.match(stalled.find((d) => d.code === 'TRN405')!.message, /^explorer\.max_timeout: No new step for/);
      const h = await c.request<Hover>('textDocument/hover', {
        textDocument: { uri },
        position: { line: lineOf('max_response_tokens'), character: 4 },
      });
      assert.match((h.contents as { value: string }).value, /\*\*Live run\*\*/);
      assert.deepEqual(JSON.parse(readFileSync(join(state, 'run.json'), 'utf8')), before, 'the record is untouched');
    } finally {
      holder.kill('SIGKILL');
    }
    // Killed outright, it leaves its lock file naming a process that is gone: the run is over.
    await c.nextDiagnostics(uri, (ds) => !ds.some((d) => d.code === 'TRN405'));
    assert.equal(JSON.parse(readFileSync(join(state, 'lock.json'), 'utf8')).runId, 'terminal-run');
  });

  test('the thresholds come from the settings; runHealth.enabled false turns it off', async () => {
    await c.conn.sendNotification('workspace/didChangeConfiguration', {
      settings: { trinityWorkbench: { runHealth: { truncatedShare: 0.99 } } },
    });
    const ds = await c.nextDiagnostics(uri, (d) => !d.some((x) => x.code === 'TRN400'));
    assert.deepEqual(health(ds), [`${lineOf('repeat_times')}:TRN401`]);
    await c.conn.sendNotification('workspace/didChangeConfiguration', {
      settings: { trinityWorkbench: { runHealth: { enabled: false } } },
    });
    const off = await c.nextDiagnostics(uri, (d) => health(d).length === 0);
    assert.deepEqual(health(off), []);
  });
});

describe('sparkline', () => {
  test('blocks scale from the minimum to the maximum; long series are bucket means; gaps are spaces', () => {
    assert.equal(sparkline([0, 1, 2, 3, 4, 5, 6, 7]), '▁▂▃▄▅▆▇█');
    assert.equal(sparkline([3, 3, 3]), '▄▄▄');
    assert.equal(sparkline([0, NaN, 1]), '▁ █');
    // 64 points into 32 buckets of two: the means 0.5, 2.5, … rise evenly.
    const long = sparkline(Array.from({ length: 64 }, (_, i) => i));
    assert.equal(long.length, 32);
    assert.equal(long[0], '▁');
    assert.equal(long[31], '█');
    assert.equal(sparkline([]), '');
  });
});

describe('run health of a staged config', () => {
  test("a stage's findings land on the keys that stage writes, the root's on the root", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'run-health-staged-'));
    const c = await startInProcess({ rootUri: pathToFileURL(dir).toString() });
    try {
      const text = readFileSync('test/fixtures/run-health/collapse/config.trinity.yaml', 'utf8');
      const uri = pathToFileURL(join(dir, 'collapse.trinity.yaml')).toString();
      writeFileSync(join(dir, 'collapse.trinity.yaml'), text);
      await c.open(uri, text);
      // Where the grpo stage writes, as the server plans the run.
      const plan = await c.request<{ stages: { name: string; jobDir: string }[] }>('trinity/runPlan', { uri });
      const grpo = plan.stages.find((s) => s.name === 'grpo')!;
      const monitor = join(dir, grpo.jobDir, 'monitor');
      mkdirSync(monitor, { recursive: true });
      copyFileSync('test/fixtures/run-health/collapse/metrics.jsonl', join(monitor, 'metrics.jsonl'));
      // The server finds the new metrics on its next look at the job dirs and publishes again by itself.
      const ds = await c.nextDiagnostics(uri, (d) => health(d).length > 0);
      const lines = text.split('\n');
      const at = (needle: string) => lines.findIndex((l) => l.includes(needle));
      // Step 14 as recorded: kl_loss 15.75, every response at the limit, every group's rewards equal.
      assert.deepEqual(
        health(ds),
        [`${at('lr: 3e-2')}:TRN403`, `${at('max_response_tokens')}:TRN400`, `${at('repeat_times: 8')}:TRN401`].sort(),
      );
      assert.deepEqual(ds.find((d) => d.code === 'TRN401')!.data.path, ['stages', 1, 'algorithm', 'repeat_times']);
      assert.equal(ds.find((d) => d.code === 'TRN401')!.data.value, 16);
    } finally {
      await c.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
