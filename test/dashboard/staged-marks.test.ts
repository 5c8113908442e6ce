/**
 * Timeline marks of a run with `stages` (SFT warm-up, then GRPO), in Debian's Chromium: a real staged run of the
 * runtime (each stage counts its steps from 1 and saves into its own folder), read as the panel reads it — from disk
 * (metrics reader, each stage's checkpoint folders) and as a live event stream — and posted to the real webview. Each
 * checkpoint mark and each weight-sync mark is read back from the chart and must sit on its own stage's curve: at the
 * x of that stage's point for the step, on the step axis and on the relative-time axis, where the stages lie apart.
 * Dense marks on a narrow card: the labels the canvas is given (its fillText calls, recorded) never overlap and stay
 * in the plot, while every mark keeps its line. Screenshots in light, dark and high contrast.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { initBackend } from '../../runtime/engine/backend';
import { runJob } from '../../runtime/rft/run/job/job';
import { MetricsReader } from '../../runtime/metrics/job-metrics';
import type { RuntimeEvent } from '../../runtime/protocol';
import { applyEvent, newRunState } from '../../client/runs/run-state';
import { jobCheckpoints } from '../../client/runs/job-dirs';
import { seriesOfEvents, seriesOfRows, stageOf } from '../../client/dashboard/series';
import type { CheckpointMark, Series } from '../../client/dashboard/messages';
import { GRPO_STAGE, header, sftStage, tinyJob } from '../runtime/rft/run/helpers';
import { choose, DashboardPage, ROOT, THEMES, type ThemeName } from './harness';

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
  await recordLabels(d);
});

/**
 * Records the text each canvas is given (fillText, with its font and where), so the test sees the labels as drawn,
 * not as the plugin says it drew them.
 */
async function recordLabels(page: DashboardPage): Promise<void> {
  await page.page.evaluate(() => {
    const proto = (globalThis as any).CanvasRenderingContext2D.prototype;
    const fill = proto.fillText;
    proto.fillText = function (this: any, text: string, x: number, y: number, ...rest: unknown[]) {
      const texts = (this.canvas.__texts ??= []);
      texts.push({ text, x, y, font: this.font, baseline: this.textBaseline, width: this.measureText(text).width });
      return fill.call(this, text, x, y, ...rest);
    };
  });
}

interface DrawnText {
  text: string;
  x: number;
  y: number;
  font: string;
  baseline: string;
  width: number;
}

/** The mark labels the card of `tag` was given in its last draw (a redraw first, so nothing stale is read). */
async function drawnLabels(tag: string): Promise<{ texts: DrawnText[]; area: { left: number; right: number } }> {
  return d.page.evaluate((t) => {
    const c = (globalThis as any).__charts.get(t);
    c.canvas.__texts = [];
    c.draw();
    const texts = c.canvas.__texts.filter((x: DrawnText) => /^v\d+( \(lag -?\d+\))?$|ckpt \d+$/.test(x.text));
    return { texts, area: { left: c.chartArea.left, right: c.chartArea.right } };
  }, tag);
}

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
    // The SFT stage logs no reward: the pinned reward card has the GRPO stage's line only (no all-zero SFT one).
    const reward = await d.chart('critic/score/mean');
    assert.deepEqual([...new Set(reward.datasets.map((s) => s.run))], ['grpo/trainer']);
    // …and that card draws the GRPO stage's marks only: an SFT checkpoint would sit at its own step number on the
    // GRPO curve ('sft_warmup ckpt 2' at GRPO step 2), on the step axis where both stages count from 1.
    await choose(d.page, '#x-axis', 'Step');
    await d.frames();
    const rewardMarks: Mark[] = await d.page.evaluate(
      () => (globalThis as any).__charts.get('critic/score/mean').$timelineMarks,
    );
    assert.deepEqual(
      rewardMarks.filter((m) => m.kind === 'checkpoint').map((m) => m.label),
      ['grpo ckpt 2', 'grpo ckpt 4'],
    );
    mkdirSync(join(ROOT, 'test-results'), { recursive: true });
    await choose(d.page, '#x-axis', 'Relative time');
    await d.frames();
    for (const theme of Object.keys(THEMES) as ThemeName[]) {
      await d.setTheme(theme);
      await d.page.screenshot({
        path: join(ROOT, 'test-results', `dashboard-staged-marks-${theme}.png`),
        clip: { x: 0, y: 0, width: 1200, height: 700 },
      });
    }
    await d.setTheme('dark');
  });

  test('dense marks on a narrow card: no two labels overlap, all stay in the plot, every line is drawn', async () => {
    const series = seriesOfRows(new MetricsReader([jobDir]).read().rows);
    // A checkpoint at every trainer step of both stages: denser than their labels are wide.
    const checkpoints: CheckpointMark[] = [];
    for (const stage of ['sft_warmup', 'grpo'])
      for (const step of series.find((s) => s.tag === TAG && s.run === `${stage}/trainer`)!.steps)
        checkpoints.push({ step, name: `global_step_${step}`, stage });
    assert.ok(checkpoints.length >= 8, `${checkpoints.length} checkpoints`);
    const narrow = await DashboardPage.open({ width: 360, height: 900 });
    const wide = d;
    try {
      d = narrow;
      await d.setTheme('light');
      await recordLabels(d);
      for (const axis of ['step', 'relative'] as const) {
        await show(series, checkpoints, axis);
        const { texts, area } = await drawnLabels(TAG);
        assert.ok(area.right - area.left < 320, `plot ${area.left}–${area.right}`);
        // The plugin's own account of its labels is what the canvas got.
        const told: { text: string; x: number }[] = await d.page.evaluate(
          (t) => (globalThis as any).__charts.get(t).$timelineLabels,
          TAG,
        );
        assert.deepEqual(
          told.map((l) => `${l.text} ${l.x.toFixed(3)}`),
          texts.map((l) => `${l.text} ${l.x.toFixed(3)}`),
        );
        assert.ok(texts.length >= 2, `${axis}: labels ${JSON.stringify(texts)}`);
        // Boxes from what was drawn: the measured width, a 1.2 em row from the top of the em box.
        const boxes = texts.map((l) => {
          assert.equal(l.baseline, 'top', l.text);
          const size = Number(/(\d+(?:\.\d+)?)px/.exec(l.font)![1]);
          return { ...l, bottom: l.y + size * 1.2 };
        });
        for (const b of boxes) assert.ok(b.x >= area.left && b.x + b.width <= area.right, `${b.text} leaves the plot`);
        for (let i = 0; i < boxes.length; i++)
          for (let j = i + 1; j < boxes.length; j++) {
            const [a, b] = [boxes[i], boxes[j]];
            const apart = a.x + a.width <= b.x || b.x + b.width <= a.x || a.bottom <= b.y || b.bottom <= a.y;
            assert.ok(apart, `${axis}: "${a.text}" overlaps "${b.text}": ${JSON.stringify([a, b])}`);
          }
        // The lines stay: every checkpoint's (and sync's) line is drawn, labelled or not.
        const drawn = await marks();
        assert.equal(drawn.filter((m) => m.kind === 'checkpoint').length, checkpoints.length, axis);
        // The last checkpoint is labelled (at the plot's right end: left of its line, or in its short form).
        const last = Math.max(...drawn.filter((m) => m.kind === 'checkpoint').map((m) => m.x));
        const lastPx = await d.page.evaluate(
          ({ t, x }) => (globalThis as any).__charts.get(t).scales.x.getPixelForValue(x),
          { t: TAG, x: last },
        );
        assert.ok(
          texts.some(
            (l) =>
              /ckpt \d+$/.test(l.text) &&
              (Math.abs(l.x - 2 - lastPx) < 0.5 || Math.abs(l.x + l.width + 2 - lastPx) < 0.5),
          ),
          `${axis}: the last checkpoint (x ${lastPx}) is unlabelled: ${JSON.stringify(texts)}`,
        );
        if (axis === 'relative')
          await d.page.screenshot({ path: join(ROOT, 'test-results', 'dashboard-staged-marks-narrow-light.png') });
      }
      assert.deepEqual(d.problems, []);
    } finally {
      d = wide;
      await narrow.close();
    }
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
