/**
 * The dashboard's pure parts: TensorBoard's smoothing, the message validators (both directions), card grouping, the
 * series built from events and from metric rows, rollouts read from disk, the message batching, and the HTML's CSP.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { Coalescer } from '../../client/dashboard/coalesce';
import { dashboardHtml } from '../../client/dashboard/html';
import { parseHostMessage, parsePanelState, parseWebviewMessage } from '../../client/dashboard/messages';
import {
  latestRolloutsOfEvents,
  latestRolloutsOnDisk,
  seriesOfEvents,
  seriesOfRows,
} from '../../client/dashboard/series';
import { compareGroups, groupOf, isPinned, tagMatcher } from '../../media/dashboard/cards/groups';
import { smooth } from '../../media/dashboard/charts/smoothing';
import type { RuntimeEvent } from '../../runtime/protocol';

describe('smoothing (TensorBoard classic EMA)', () => {
  test('debiased EMA by hand: w = 0.6 over 1, 2, 3', () => {
    const [a, b, c] = smooth([1, 2, 3], 0.6) as number[];
    assert.equal(a, 1);
    assert.ok(Math.abs(b - (0.4 * 0.6 + 0.8) / (1 - 0.36)) < 1e-15);
    assert.ok(Math.abs(c - ((0.4 * 0.6 + 0.8) * 0.6 + 1.2) / (1 - 0.216)) < 1e-15);
  });

  test('non-finite values pass through and do not count; w = 0 is the identity; a constant series is unchanged', () => {
    const out = smooth([1, null, 3], 0.5);
    assert.equal(out[1], null);
    // The third value is the second counted: last = 0.5·0.5 + 0.5·3 = 1.75, n = 2.
    assert.equal(out[2], 1.75 / 0.75);
    assert.deepEqual(smooth([0.3, -2, 7], 0), [0.3, -2, 7]);
    assert.deepEqual(smooth([0.1, 0.1, 0.1], 0.99), [0.1, 0.1, 0.1]);
    assert.deepEqual(smooth([], 0.6), []);
    // w = 1 never takes a value in (TensorBoard's formula gives 0s): why the slider stops at 0.99.
    assert.deepEqual(smooth([5, 6], 1), [0, 0]);
  });

  test('the smoothed value lies within the range of the values so far (any w in [0, 0.99])', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -1e6, max: 1e6, noNaN: true }), { minLength: 1, maxLength: 50 }),
        fc.double({ min: 0, max: 0.99, noNaN: true }),
        (ys, w) => {
          const out = smooth(ys, w) as number[];
          let lo = Infinity;
          let hi = -Infinity;
          ys.forEach((y, i) => {
            lo = Math.min(lo, y);
            hi = Math.max(hi, y);
            const tol = 1e-9 * Math.max(1, Math.abs(lo), Math.abs(hi));
            assert.ok(out[i] >= lo - tol && out[i] <= hi + tol, `${out[i]} outside [${lo}, ${hi}]`);
          });
        },
      ),
    );
  });
});

describe('message validators', () => {
  const run = { key: '/j', title: 't', jobDir: '/j', status: 'running' };
  test('well-formed host messages pass, as themselves', () => {
    const msgs = [
      {
        type: 'init',
        run,
        series: [{ run: 'trainer', tag: 'a', steps: [1, 2], times: [0.5, 1], values: [0.1, null] }],
      },
      { type: 'append', points: [{ run: 'explorer', tag: 'b', step: 3, time: 2, value: null }] },
      { type: 'rollouts', step: 4, samples: [{ prompt: 'p', response: '<b>r</b>', reward: 1 }] },
      { type: 'status', status: 'finished', detail: '' },
    ];
    for (const m of msgs) assert.deepEqual(parseHostMessage(m), m);
  });

  test('malformed or unknown host messages are dropped', () => {
    const bad: unknown[] = [
      null,
      'init',
      [],
      { type: 'nope' },
      { type: 'init', run: { key: '/j' }, series: [] },
      { type: 'init', run, series: [{ run: 'r', tag: 't', steps: [1], times: [], values: [1] }] },
      { type: 'init', run, series: [{ run: 'r', tag: 't', steps: [1], times: [1], values: [Number.NaN] }] },
      { type: 'append', points: [{ run: 'r', tag: 't', step: '1', time: 0, value: 1 }] },
      { type: 'append', points: {} },
      { type: 'rollouts', step: 1, samples: [{ prompt: 'p', response: 7, reward: 1 }] },
      { type: 'status', status: 'running' },
    ];
    for (const m of bad) assert.equal(parseHostMessage(m), undefined, JSON.stringify(m));
  });

  test('webview messages: only `ready`; panel state needs a key and a job dir', () => {
    assert.deepEqual(parseWebviewMessage({ type: 'ready', extra: 1 }), { type: 'ready' });
    for (const m of [undefined, {}, { type: 'init' }, 'ready']) assert.equal(parseWebviewMessage(m), undefined);
    assert.deepEqual(parsePanelState({ key: '/j#train', jobDir: '/j', settings: {} }), {
      key: '/j#train',
      jobDir: '/j',
    });
    for (const s of [undefined, { key: '', jobDir: '/j' }, { key: '/j' }]) assert.equal(parsePanelState(s), undefined);
  });
});

describe('cards', () => {
  test('reward, loss and eval scores are pinned; the rest group by Trinity prefix, in Trinity order', () => {
    assert.ok(
      isPinned('critic/score/mean') && isPinned('rollout/accuracy/mean') && isPinned('eval/gsm8k/accuracy/mean@8'),
    );
    assert.ok(!isPinned('eval/gsm8k/accuracy/std') && !isPinned('actor/entropy'));
    // A GRPO run's first explorer step: its reward is pinned, not the task count or the model version, and the
    // policy loss of its first trainer step joins it (the dashboard opens on reward and loss).
    assert.ok(isPinned('rollout/score/mean') && isPinned('actor/pg_loss') && isPinned('eval/countdown/score/mean@1'));
    assert.ok(!isPinned('rollout/finished_task_count') && !isPinned('rollout/model_version'));
    // An agent's success: frozen_lake_workflow's test_score (1 at the goal), in rollouts and evaluations; not its turns.
    assert.ok(isPinned('rollout/test_score/mean') && isPinned('eval/lake-eval/test_score/mean@1'));
    assert.ok(!isPinned('eval/lake-eval/env_steps/mean@1') && !isPinned('eval/lake-eval/test_score/std@1'));
    // SFT and DPO log no reward: their loss is what is pinned for them.
    assert.ok(isPinned('actor/sft_loss') && isPinned('actor/dpo_loss'));
    assert.equal(groupOf('experience_pipeline/time'), 'experience_pipeline');
    assert.equal(groupOf('loss'), 'other');
    const groups = ['other', 'zeta', 'time', 'actor', 'pinned', 'rollout', 'critic'].sort(compareGroups);
    assert.deepEqual(groups, ['pinned', 'rollout', 'critic', 'actor', 'time', 'zeta', 'other']);
  });

  test('the filter is a case-insensitive regex, or plain text when it is not one', () => {
    assert.ok(tagMatcher('^ACTOR/')('actor/kl'));
    assert.ok(!tagMatcher('^actor/')('critic/actor/x'));
    assert.ok(tagMatcher('[len')('response_[length')); // invalid regex: substring
    assert.ok(tagMatcher('  ')('anything'));
  });
});

describe('series', () => {
  test('from a live run’s events: one series per role and tag; non-finite values as null; the latest rollouts', () => {
    const events: RuntimeEvent[] = [
      { type: 'metrics', role: 'explorer', step: 1, time: 1.5, values: { 'rollout/accuracy/mean': 0.25 } },
      { type: 'rollouts', step: 1, samples: [{ prompt: 'a', response: 'b', reward: 0 }] },
      {
        type: 'metrics',
        role: 'trainer',
        step: 1,
        time: 2,
        values: { 'critic/score/mean': 0.25, 'actor/grad_norm': Number.POSITIVE_INFINITY },
      },
      { type: 'metrics', role: 'explorer', step: 2, time: 3, values: { 'rollout/accuracy/mean': 0.5 } },
      { type: 'rollouts', step: 2, samples: [{ prompt: 'c', response: 'd', reward: 1 }] },
    ];
    assert.deepEqual(seriesOfEvents(events), [
      { run: 'explorer', tag: 'rollout/accuracy/mean', steps: [1, 2], times: [1.5, 3], values: [0.25, 0.5] },
      { run: 'trainer', tag: 'critic/score/mean', steps: [1], times: [2], values: [0.25] },
      { run: 'trainer', tag: 'actor/grad_norm', steps: [1], times: [2], values: [null] },
    ]);
    assert.deepEqual(latestRolloutsOfEvents(events), { step: 2, samples: [{ prompt: 'c', response: 'd', reward: 1 }] });
  });

  test('from metric rows: relative time from the earliest wall time of all runs; each series in step order', () => {
    const rows = [
      { run: 'trainer', tag: 'x', step: 2, wallTime: 1010, value: 2 },
      { run: 'trainer', tag: 'x', step: 1, wallTime: 1005, value: 1 },
      { run: 'explorer', tag: 'y', step: 1, wallTime: 1000, value: Number.NaN },
    ];
    assert.deepEqual(seriesOfRows(rows), [
      { run: 'trainer', tag: 'x', steps: [1, 2], times: [5, 10], values: [1, 2] },
      { run: 'explorer', tag: 'y', steps: [1], times: [0], values: [null] },
    ]);
  });

  test('rollouts on disk: the last complete line of monitor/rollouts.jsonl (a half-written line is skipped)', () => {
    const job = mkdtempSync(join(tmpdir(), 'twb-dash-'));
    assert.equal(latestRolloutsOnDisk(job), undefined);
    mkdirSync(join(job, 'monitor'));
    writeFileSync(
      join(job, 'monitor', 'rollouts.jsonl'),
      `${JSON.stringify({ step: 1, samples: [{ prompt: 'p1', response: 'r1', reward: 0.5 }] })}\n{"step": 2, "samp`,
    );
    assert.deepEqual(latestRolloutsOnDisk(job), { step: 1, samples: [{ prompt: 'p1', response: 'r1', reward: 0.5 }] });
  });
});

describe('batching and the HTML', () => {
  test('the coalescer hands over everything pushed within its interval as one batch', async () => {
    const batches: number[][] = [];
    const c = new Coalescer<number>((b) => batches.push(b), 30);
    c.push(1);
    c.push(2, 3);
    assert.deepEqual(batches, []);
    await new Promise((ok) => setTimeout(ok, 60));
    c.push(4);
    c.drain();
    assert.deepEqual(batches, [[1, 2, 3], [4]]);
    c.push(5);
    c.dispose();
    await new Promise((ok) => setTimeout(ok, 60));
    assert.deepEqual(batches, [[1, 2, 3], [4]]);
  });

  test('strict CSP: nothing by default, scripts only with the nonce, styles and images from the webview source', () => {
    const html = dashboardHtml({
      cspSource: 'vscode-webview://abc',
      nonce: 'N0nce',
      scriptUri: 'vscode-webview://abc/d.js',
      styleUri: 'vscode-webview://abc/d.css',
      title: 'Dashboard: <run>',
    });
    const csp = /http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(html)![1];
    assert.equal(
      csp,
      'default-src &#39;none&#39;; script-src &#39;nonce-N0nce&#39;; style-src vscode-webview://abc; img-src vscode-webview://abc data:; font-src vscode-webview://abc',
    );
    assert.deepEqual(
      [...html.matchAll(/<script\b[^>]*>/g)].map((m) => m[0]),
      ['<script nonce="N0nce" src="vscode-webview://abc/d.js">'],
    );
    assert.ok(html.includes('<title>Dashboard: &#60;run&#62;</title>'));
    assert.ok(!/https?:\/\//.test(html), 'no remote resources');
  });
});
