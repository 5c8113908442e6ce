/**
 * Timeline marks of a run with `stages` (SFT warm-up, then GRPO), in Debian's Chromium: a real staged run of the
 * runtime (each stage counts its steps from 1 and saves into its own folder), read as the panel reads it — from disk
 * (metrics reader, each stage's checkpoint folders) and as a live event stream — and posted to the real webview. Each
 * checkpoint mark and each weight-sync mark is read back from the chart and must sit on its own stage's curve: at the
 * x of that stage's point for the step, on the step axis and on the relative-time axis, where the stages lie apart.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { initBackend } from '../../runtime/engine/backend';
import { runJob } from '../../runtime/rft/run/job';
import { MetricsReader } from '../../runtime/metrics/job-metrics';
import type { RuntimeEvent } from '../../runtime/protocol';
import { applyEvent, newRunState } from '../../client/runs/run-state';
import { jobCheckpoints } from '../../client/runs/job-dirs';
import { seriesOfEvents, seriesOfRows, stageOf } from '../../client/dashboard/series';
import type { CheckpointMark, Series } from '../../client/dashboard/messages';
import { GRPO_STAGE, header, sftStage, tinyJob } from '../runtime/rft/run/helpers';
import { choose, DashboardPage, ROOT } from './harness';

/** Both stages log it: the card the marks are read from. */
const TAG = 'actor/grad_norm';
const VERSION = 'rollout/model_version';

let d: DashboardPage;
let jobDir: string;
let startedAt: number;
const events: RuntimeEvent[] = [];

before(async () => {
  await initBackend({ prefer: 'wasm' });
  const job = tinyJob(11);
  const sft = sftStage('sft_warmup', { steps: 4, batch: 4, saveInterval: 2 });
  const grpo = GRPO_STAGE.replace('eval_on_startup: true', 'eval_on_startup: false').replace(
    'eval_interval: 2',
    'eval_interval: 100',
  );
  const config = job.write(
    'staged.yaml',
    `${header(job, 'staged')}stages:${sft}  - stage_name: grpo${grpo.replace(/^\n {4}/, '\n    ')}`,
  );
  const r = await runJob(config, { backend: 'wasm', events: (e) => events.push(e) });
  assert.equal(r.status, 'finished', r.error);
  const run = events.find((e) => e.type === 'run')!;
  jobDir = run.jobDir;
  startedAt = Date.parse(run.startedAt) / 1000;
  d = await DashboardPage.open();
  await d.setTheme('dark');
});

after(async () => {
  await d?.close();
});

interface Mark {
  kind: string;
  x: number;
  label: string;
}

async function marks(): Promise<Mark[]> {
  return d.page.evaluate((t) => (globalThis as any).__charts.get(t).$timelineMarks, TAG);
}

/** The x of a stage's raw point at `step` on the card of `tag`, as the chart holds it. */
async function pointX(tag: string, run: string, step: number, axis: 'step' | 'relative'): Promise<number> {
  const c = await d.chart(tag);
  const raw = c.datasets.find((s) => s.run === run && s.raw);
  assert.ok(raw, `${tag}: no dataset of ${run} (runs: ${c.datasets.map((s) => s.run).join(', ')})`);
  if (axis === 'step') {
    assert.deepEqual(raw.x, await stepsOf(tag, run));
    return step;
  }
  // On the relative axis the chart holds times: the point at the step's index in the series.
  const steps = (await stepsOf(tag, run))!;
  const i = steps.indexOf(step);
  assert.ok(i >= 0, `${run} has no step ${step} on ${tag}`);
  return raw.x[i];
}

let shownSeries: Series[] = [];
const stepsOf = async (tag: string, run: string) => shownSeries.find((s) => s.tag === tag && s.run === run)?.steps;

async function show(series: Series[], checkpoints: CheckpointMark[], axis: 'step' | 'relative'): Promise<void> {
  shownSeries = series;
  await d.post({
    type: 'init',
    run: { key: jobDir, title: 'staged', jobDir, status: 'finished', startedAt },
    series,
  });
  await d.post({ type: 'checkpoints', checkpoints });
  await choose(d.page, '#x-axis', axis === 'step' ? 'Step' : 'Relative time');
  await d.frames();
}

/** Every drawn mark at its stage's point: checkpoints on the stage's trainer curve, syncs on its explorer's. */
async function assertMarksOnTheirStages(checkpoints: CheckpointMark[], series: Series[]): Promise<void> {
  // The GRPO stage's weight syncs, from its explorer's model versions (the first version is the start, not a sync).
  const versions = series.find((s) => s.tag === VERSION && s.run === 'grpo/explorer')!;
  assert.ok(versions, `no grpo/explorer ${VERSION}: ${series.map((s) => `${s.run} ${s.tag}`).join(', ')}`);
  const syncSteps = versions.steps.filter(
    (_, i) => i > 0 && versions.values[i] !== null && versions.values[i] !== versions.values[i - 1],
  );
  assert.ok(syncSteps.length >= 2, `syncs at ${syncSteps}`);
  for (const axis of ['step', 'relative'] as const) {
    await show(series, checkpoints, axis);
    const drawn = await marks();
    const expected: Mark[] = [];
    for (const c of checkpoints)
      expected.push({
        kind: 'checkpoint',
        x: await pointX(TAG, `${c.stage}/trainer`, c.step, axis),
        label: `${c.stage} ckpt ${c.step}`,
      });
    for (const step of syncSteps) {
      const v = versions.values[versions.steps.indexOf(step)]!;
      expected.push({
        kind: 'sync',
        x: await pointX(VERSION, 'grpo/explorer', step, axis),
        label: `v${v} (lag ${step - v})`,
      });
    }
    const key = (m: Mark) => `${m.kind} ${m.label} ${m.x.toFixed(6)}`;
    assert.deepEqual(drawn.map(key).sort(), expected.map(key).sort(), `marks on the ${axis} axis`);
    if (axis === 'relative') {
      // The stages lie apart in time: every SFT checkpoint before every GRPO one.
      const at = (stage: string) => drawn.filter((m) => m.label.startsWith(`${stage} ckpt`)).map((m) => m.x);
      assert.ok(Math.max(...at('sft_warmup')) < Math.min(...at('grpo')), JSON.stringify(drawn));
    }
  }
}

describe('timeline marks of a staged run (SFT warm-up, then GRPO)', () => {
  test('read from disk: each stage’s checkpoints and syncs sit on that stage’s curves, on the step and time axes', async () => {
    const rows = new MetricsReader([jobDir]).read().rows;
    const series = seriesOfRows(rows);
    const checkpoints = jobCheckpoints(jobDir).map((c) => ({ step: c.step, name: basename(c.path), stage: c.stage }));
    assert.deepEqual(
      checkpoints.map((c) => `${c.stage} ${c.step}`),
      ['sft_warmup 2', 'sft_warmup 4', 'grpo 2', 'grpo 4'],
    );
    await assertMarksOnTheirStages(checkpoints, series);
    mkdirSync(join(ROOT, 'test-results'), { recursive: true });
    await choose(d.page, '#x-axis', 'Relative time');
    await d.frames();
    await d.page.screenshot({
      path: join(ROOT, 'test-results', 'dashboard-staged-marks-dark.png'),
      clip: { x: 0, y: 0, width: 1200, height: 700 },
    });
  });

  test('live (the event stream): each stage has its own series, and the marks sit on them as on disk', async () => {
    const series = seriesOfEvents(events);
    assert.ok(
      series.some((s) => s.run === 'sft_warmup/trainer') && series.some((s) => s.run === 'grpo/trainer'),
      `runs: ${[...new Set(series.map((s) => s.run))].join(', ')}`,
    );
    // Each series in step order (a stage's steps restart at 1 in a series of its own, not in the last stage's).
    for (const s of series)
      assert.ok(
        s.steps.every((v, i) => i === 0 || s.steps[i - 1] <= v),
        `${s.run} ${s.tag}`,
      );
    // The checkpoints as the panel notes them: each with the stage the run's state was in when it came.
    const state = newRunState(jobDir, 'local');
    const checkpoints: CheckpointMark[] = [];
    for (const e of events) {
      applyEvent(state, e);
      if (e.type === 'checkpoint')
        checkpoints.push({ step: e.step, name: basename(e.path), stage: stageOf(state.stage) });
    }
    await assertMarksOnTheirStages(checkpoints, series);
    assert.deepEqual(d.problems, []);
    assert.deepEqual(await d.page.evaluate(() => (globalThis as any).__csp), []);
  });
});
