/**
 * Run health rules (runtime/config/runs/run-health.ts) on runs recorded from the local runtime (test/fixtures/run-health):
 * each rule fires where the recorded metrics (and, for TRN409, rollout records) show its problem, not where they do
 * not, and its threshold moves it.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { CODES } from '../../../runtime/config/diagnostics';
import { configKeyExists } from '../../../runtime/config/model/metric-drivers';
import {
  checkRunHealth,
  healthSeriesOf,
  type HealthFinding,
  type HealthInput,
} from '../../../runtime/config/runs/run-health';
import { tallyEpisodes } from '../../../runtime/config/runs/episode-tally';

interface Line {
  role: string;
  step: number;
  wallTime: number;
  values: Record<string, number>;
}

function recorded(
  name: string,
  upToStep = Infinity,
): { series: Map<string, { step: number; value: number; wallTime: number | null }[]>; lastWall: number } {
  const lines = readFileSync(`test/fixtures/run-health/${name}/metrics.jsonl`, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Line)
    .filter((l) => l.step <= upToStep);
  const rows = lines.flatMap((l) =>
    Object.entries(l.values).map(([tag, value]) => ({ tag, step: l.step, value, wallTime: l.wallTime })),
  );
  return { series: healthSeriesOf(rows), lastWall: Math.max(...lines.map((l) => l.wallTime)) };
}

const codes = (fs: HealthFinding[]) => fs.map((f) => f.code).sort();
const run = (name: string, upTo: number, extra: Partial<HealthInput> = {}) => {
  const r = recorded(name, upTo);
  return checkRunHealth({ series: r.series, live: false, now: r.lastWall, ...extra });
};

describe('run health on recorded runs', () => {
  test('the untrained model: truncated responses and no learning signal, with fixes that double the keys', () => {
    const values: Record<string, number> = { 'model.max_response_tokens': 4, 'algorithm.repeat_times': 4 };
    const found = run('tiny-grpo', Infinity, { value: (k) => values[k] });
    assert.deepEqual(codes(found), ['TRN400', 'TRN401']);
    const trunc = found.find((f) => f.code === 'TRN400')!;
    assert.deepEqual(trunc.path, ['model', 'max_response_tokens']);
    assert.equal(trunc.fix, 8);
    // clip_ratio of trainer steps 8-12 as recorded: (15+15+16+15+15)/16/5 = 0.95.
    assert.match(trunc.message, /^95% of responses over the last 5 steps/);
    const flat = found.find((f) => f.code === 'TRN401')!;
    assert.deepEqual(flat.path, ['algorithm', 'repeat_times']);
    assert.equal(flat.fix, 8);
    assert.equal(flat.step, 12);
  });

  test("TRN400 needs the batch's longest response at the limit: clip_ratio is the share as long as the longest", () => {
    // The same run with a limit of 8: its 4-token answers were the batch's longest (clip_ratio 0.95), never cut off.
    const values: Record<string, number> = { 'model.max_response_tokens': 8, 'algorithm.repeat_times': 4 };
    assert.deepEqual(codes(run('tiny-grpo', Infinity, { value: (k) => values[k] })), ['TRN401']);
  });

  test('thresholds move the rules', () => {
    assert.deepEqual(codes(run('tiny-grpo', Infinity, { thresholds: { truncatedShare: 0.99, window: 13 } })), []);
    // Fewer explorer steps than the window: no verdict on the signal yet.
    assert.deepEqual(codes(run('tiny-grpo', 3, { thresholds: { truncatedShare: 0.99 } })), []);
  });

  test('the high learning rate run: KL blows up at step 3, entropy collapses by step 6 and recovers', () => {
    assert.deepEqual(codes(run('collapse', 2)), []);
    const at3 = run('collapse', 3);
    assert.ok(codes(at3).includes('TRN403'));
    const kl = at3.find((f) => f.code === 'TRN403')!;
    assert.equal(kl.metric, 'actor/kl_loss');
    assert.deepEqual(kl.path, ['algorithm', 'optimizer', 'lr']);
    assert.equal(kl.step, 3);
    assert.equal(
      run('collapse', 3, { thresholds: { klMax: 20 } }).some((f) => f.code === 'TRN403'),
      false,
    );
    // Entropy as recorded: 0.3637 at step 1, 0.1355 at step 6 (0.13549…) (37% <= 40%); at step 5, 0.1555 (43%).
    assert.equal(
      run('collapse', 5).some((f) => f.code === 'TRN402'),
      false,
    );
    const ent = run('collapse', 6).find((f) => f.code === 'TRN402')!;
    assert.deepEqual(ent.path, ['algorithm', 'entropy_loss_fn_args', 'entropy_coef']);
    assert.match(ent.message, /from 0\.364 to 0\.135 \(37% of its first value\) by step 6/);
    assert.equal(
      run('collapse', 14).some((f) => f.code === 'TRN402'),
      false,
      'entropy is back to 119% at step 14',
    );
  });

  test('the gradient spike of step 12 (0.0263 against a median of 0.0014 over steps 1-11)', () => {
    assert.equal(
      run('collapse', 11).some((f) => f.code === 'TRN404'),
      false,
    );
    const spike = run('collapse', 12).find((f) => f.code === 'TRN404')!;
    assert.equal(spike.step, 12);
    assert.deepEqual(spike.path, ['trainer', 'grad_clip']);
    assert.deepEqual(run('collapse', 12, { release: 'v0.3.1' }).find((f) => f.code === 'TRN404')!.path, [
      'trainer',
      'actor_grad_clip',
    ]);
    assert.equal(
      run('collapse', 12, { thresholds: { gradNormSpike: 30 } }).some((f) => f.code === 'TRN404'),
      false,
    );
  });

  test('a stall: only while live, only past stallFactor times the median step time', () => {
    const r = recorded('tiny-grpo');
    const gaps: number[] = [];
    const train = r.series.get('time/train_step')!;
    for (let i = 1; i < train.length; i++) gaps.push(train[i].wallTime! - train[i - 1].wallTime!);
    const last = Math.max(...[...r.series.values()].flatMap((ps) => ps.map((p) => p.wallTime!)));
    const sorted = [...gaps].sort((a, b) => a - b);
    const usual = (sorted[5] + sorted[6]) / 2;
    const explore = r.series.get('time/explore_step')!;
    const exploreLast = explore[explore.length - 1].wallTime!;
    // The trainer logged the last step (its step 12 comes after explorer step 12).
    assert.ok(train[train.length - 1].wallTime! >= exploreLast);
    const at = (now: number, live = true) =>
      checkRunHealth({ series: r.series, live, now }).filter((f) => f.code === 'TRN405');
    assert.equal(at(last + usual * 4.9).length, 0);
    const stall = at(last + usual * 5.1);
    assert.equal(stall.length, 1);
    assert.deepEqual(stall[0].path, ['explorer', 'max_timeout']);
    assert.equal(at(last + usual * 50, false).length, 0, 'a finished run is not stalled');
  });

  test('a trainer that takes no steps (TRN406): both mode only, past trainerLag + sync_offset + sync_interval', () => {
    // The recorded run with the trainer's lines after its step 3 gone: the explorer steps on to 12 without one.
    const r = recorded('tiny-grpo');
    const trainerTags = new Set(['time/train_step', 'actor/grad_norm', 'actor/lr']);
    const cut = new Map(
      [...r.series].map(([tag, ps]) => [
        tag,
        tag.startsWith('actor/') || trainerTags.has(tag) ? ps.filter((p) => p.step <= 3) : ps,
      ]),
    );
    const values: Record<string, unknown> = {
      mode: 'both',
      'synchronizer.sync_offset': 0,
      'synchronizer.sync_interval': 1,
      'buffer.batch_size': 4,
      'algorithm.repeat_times': 4,
      'buffer.train_batch_size': 64,
    };
    const at = (series: typeof r.series, v = values) =>
      checkRunHealth({ series, live: true, now: r.lastWall, value: (k) => v[k] }).filter((f) => f.code === 'TRN406');
    const found = at(cut);
    assert.equal(found.length, 1);
    assert.deepEqual(found[0].path, ['buffer', 'train_batch_size']);
    assert.equal(found[0].step, 12);
    assert.match(found[0].message, /^No trainer step for 9 explorer steps \(explorer step 12, trainer step 3\)/);
    assert.match(found[0].message, /train_batch_size \(64\) with what a step makes \(batch_size × repeat_times = 16\)/);
    assert.equal(at(r.series).length, 0, 'the whole run: the trainer kept up');
    assert.equal(at(cut, { ...values, mode: 'explore' }).length, 0, 'explore mode has no trainer');
    assert.equal(at(cut, { ...values, 'synchronizer.sync_interval': 5 }).length, 0, 'within 5 + 0 + 5');
  });

  test('every finding names a key of the model and a documented code', () => {
    const all = [...run('tiny-grpo', Infinity, { value: () => 4 }), ...run('collapse', 12)];
    for (const f of all) {
      assert.ok(configKeyExists(f.path.join('.'), 'main'), f.path.join('.'));
      assert.ok(CODES[f.code].title);
    }
  });

  // The agent runs' config values, as Trinity's check leaves them (test/fixtures/run-health/lake-*/config.trinity.yaml).
  const lake = (maxModelLen: number) => {
    const values: Record<string, unknown> = {
      'buffer.explorer_input.taskset.default_workflow_type': 'frozen_lake_workflow',
      'buffer.explorer_input.taskset.workflow_args.agent_max_steps': 4,
      'model.max_model_len': maxModelLen,
      'algorithm.repeat_times': 2,
    };
    return (k: string) => values[k];
  };

  test('FrozenLake, every episode uses its 4 turns and fails: every group has one outcome (TRN408), no budget finding', () => {
    const found = run('lake-turns', Infinity, { value: lake(4096) });
    assert.deepEqual(codes(found), ['TRN401', 'TRN408']);
    const same = found.find((f) => f.code === 'TRN408')!;
    assert.deepEqual(same.path, ['buffer', 'explorer_input', 'taskset', 'workflow_args', 'agent_max_steps']);
    assert.match(same.message, /^No episode reached the goal in the last 5 steps .*agent_max_steps, now 4/);
    // A window longer than the run gives no verdict.
    assert.deepEqual(codes(run('lake-turns', Infinity, { value: lake(4096), thresholds: { window: 7 } })), []);
  });

  test('FrozenLake in a 2048-token context: episodes end on the budget (TRN407), with the arithmetic of the last step', () => {
    const found = run('lake-budget', Infinity, { value: lake(2048) });
    assert.deepEqual(codes(found), ['TRN401', 'TRN407', 'TRN408']);
    const cut = found.find((f) => f.code === 'TRN407')!;
    assert.deepEqual(cut.path, ['model', 'max_model_len']);
    assert.equal(cut.step, 6);
    // Bounds per explorer step 2-6 as recorded: 1 − 0 − env_steps/mean ÷ 4 with env_steps/mean 1.75, 1.5, 1.25,
    // 1.75, 1.75 → 0.5625, 0.625, 0.6875, 0.5625, 0.5625; mean 0.6.
    assert.match(cut.message, /^At least 60% of episodes over the last 5 steps ended on the token budget/);
    assert.match(cut.message, /\(1 − 0\) − 1\.75 ÷ 4 = 0\.563\. .*max_model_len \(2048\)/);
    assert.deepEqual(
      codes(run('lake-budget', Infinity, { value: lake(2048), thresholds: { budgetEndedShare: 0.61 } })),
      ['TRN401', 'TRN408'],
    );
    // Without the workflow's turn limit (another workflow), neither agent rule applies.
    assert.deepEqual(codes(run('lake-budget', Infinity, { value: () => undefined })), ['TRN401']);
  });

  test('the agent findings name keys of the model', () => {
    for (const f of [...run('lake-budget', Infinity, { value: lake(2048) })])
      assert.ok(configKeyExists(f.path.join('.'), 'main'), f.path.join('.'));
  });

  test('FrozenLake whose every answer is random bytes: episodes end on an invalid action (TRN409), counted from the records', () => {
    const lines = readFileSync('test/fixtures/run-health/lake-invalid/rollouts.jsonl', 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { step: number; samples: Record<string, unknown>[] });
    const episodes = lines.map((l) => tallyEpisodes(l.step, l.samples)!);
    // Each step records its 2 groups of 2 episodes; every answer names no move, the last of the 4 turns too.
    assert.deepEqual(
      episodes.map((e) => [e.step, e.episodes, e.endedInvalid]),
      [1, 2, 3, 4, 5, 6].map((step) => [step, 4, 4]),
    );
    const found = run('lake-invalid', Infinity, { value: lake(4096), episodes });
    assert.deepEqual(codes(found), ['TRN401', 'TRN408', 'TRN409']);
    const invalid = found.find((f) => f.code === 'TRN409')!;
    assert.deepEqual(invalid.path, ['model', 'model_path']);
    assert.equal(invalid.step, 6);
    assert.match(
      invalid.message,
      /^20 of the 20 recorded episodes over the last 5 steps \(100%\) ended on an invalid action/,
    );
    // Without records that name invalid actions (an older runtime, Trinity's own runs) there is no verdict.
    assert.deepEqual(codes(run('lake-invalid', Infinity, { value: lake(4096) })), ['TRN401', 'TRN408']);
  });

  test('TRN409 counts episodes, not records: a step-wise episode ends with its last step; the threshold moves it', () => {
    const rec = (task: string, run: number, step: number, turns: number, invalid: number[]) => ({
      task,
      run,
      step,
      messages: Array.from({ length: turns }, () => ({ role: 'assistant', content: 'x' })),
      invalidActions: invalid,
    });
    // Step-wise: run 0's last step (2) is valid although its first was not; run 1 ends invalid. Concatenated
    // records without a group are each an episode; one without invalidActions is not counted.
    const tally = tallyEpisodes(3, [
      rec('3/0', 0, 0, 1, [0]),
      rec('3/0', 0, 2, 1, []),
      rec('3/0', 0, 1, 1, [0]),
      rec('3/0', 1, 0, 1, [0]),
      {
        messages: [
          { role: 'assistant', content: 'a' },
          { role: 'assistant', content: 'b' },
        ],
        invalidActions: [1],
      },
      { messages: [{ role: 'assistant', content: 'a' }], invalidActions: [] },
      { messages: [{ role: 'assistant', content: 'a' }] },
    ]);
    assert.deepEqual(tally, { step: 3, episodes: 4, endedInvalid: 2 });
    assert.equal(tallyEpisodes(1, [{ prompt: 'p', response: 'r' }]), undefined);
    const episodes = [
      { step: 1, episodes: 4, endedInvalid: 2 },
      { step: 2, episodes: 6, endedInvalid: 4 },
    ];
    const at = (share: number) =>
      codes(
        checkRunHealth({ series: new Map(), live: false, now: 0, episodes, thresholds: { invalidEndedShare: share } }),
      );
    assert.deepEqual(at(0.6), ['TRN409']); // 6 of 10
    assert.deepEqual(at(0.61), []);
    // One step is not a window.
    assert.deepEqual(
      codes(checkRunHealth({ series: new Map(), live: false, now: 0, episodes: episodes.slice(1) })),
      [],
    );
  });
});
