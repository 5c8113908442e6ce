/**
 * The compare panel's, Config tab's and Rollouts tab's pure parts: the run filter and colour slots, the config
 * flattening and diff, the resolved config of a job dir (a real config through runtime/config), the reward
 * histogram's bins (by hand), the new messages' validators, and rollouts read from real SQLite experience buffers in
 * Trinity-RFT's and our runtime's table layouts.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { experienceBufferOf, readBufferRollouts, rolloutsOfJob } from '../../client/dashboard/job-rollouts';
import { rolloutsFromBuffer } from '../../runtime/metrics/buffer-rollouts';
import { SqlExperienceWriter } from '../../runtime/rft/buffer/sql';
import { parseHostMessage, parsePanelState } from '../../client/dashboard/messages';
import { pathToFileURL } from 'node:url';
import { after, before } from 'node:test';
import { flattenConfig, runConfigMessage, runConfigPath } from '../../client/dashboard/run-config';
import { RESOLVED_CONFIG_REQUEST, type ResolvedConfigResponse } from '../../server/lsp-messages';
import { startInProcess, type TestClient } from '../helpers/lsp';
import { rolloutStepsOnDisk } from '../../client/dashboard/series';
import { differingKeys } from '../../media/dashboard/config-tab/config-diff';
import { rewardHistogram } from '../../media/dashboard/rollouts/histogram';
import { colourSlot, runFilter } from '../../media/dashboard/compare/run-filter';

// The Config tab's configs come from the language server: a real one, in process, asked for files that are not open.
let lsp: TestClient;
before(async () => {
  lsp = await startInProcess();
});
after(() => lsp.close());

/** What the panel does: the run's config file, the server's answer for it, the tab's message. */
async function runConfigOf(key: string, jobDir: string, configPath?: string) {
  const path = runConfigPath(jobDir, configPath);
  const answer = path
    ? await lsp.request<ResolvedConfigResponse | null>(RESOLVED_CONFIG_REQUEST, { uri: pathToFileURL(path).toString() })
    : null;
  return runConfigMessage(key, jobDir, path, answer);
}

describe('the run filter and colours', () => {
  test('a case-insensitive regex over run names; an invalid one filters nothing and says why', () => {
    const f = runFilter('^GRPO-.*5e');
    assert.equal(f.valid, true);
    assert.deepEqual(['grpo-lr5e-6', 'grpo-lr1e-6', 'ppo-5e'].filter(f.match), ['grpo-lr5e-6']);
    const bad = runFilter('lr(5');
    assert.equal(bad.valid, false);
    assert.match(bad.error!, /Unterminated group/);
    assert.equal(bad.match('anything'), true);
    assert.equal(runFilter('  ').match('x'), true);
  });

  test('colour slots: the theme colours in order, then the same colours dashed, then dotted', () => {
    assert.deepEqual(
      [0, 5, 6, 11, 12].map((i) => colourSlot(i, 6)),
      [
        { colour: 0, dash: [] },
        { colour: 5, dash: [] },
        { colour: 0, dash: [6, 3] },
        { colour: 5, dash: [6, 3] },
        { colour: 0, dash: [2, 2] },
      ],
    );
  });
});

describe('config flattening and diff', () => {
  test('dotted keys; lists of scalars stay one value, lists of mappings are indexed; empty mappings kept', () => {
    const flat = flattenConfig({
      a: { b: 1, c: [1, 2], d: null, e: {} },
      s: [{ name: 'x', mode: 'sft' }],
      t: true,
      u: 'text',
    });
    assert.deepEqual(flat, [
      ['a.b', '1'],
      ['a.c', '[1, 2]'],
      ['a.d', 'null'],
      ['a.e', '{}'],
      ['s.0.name', 'x'],
      ['s.0.mode', 'sft'],
      ['t', 'true'],
      ['u', 'text'],
    ]);
  });

  test('the keys whose values differ, a key one run lacks included, in first-seen order', () => {
    const a: [string, string][] = [
      ['x', '1'],
      ['y', '2'],
      ['z', 'same'],
    ];
    const b: [string, string][] = [
      ['x', '1'],
      ['y', '3'],
      ['z', 'same'],
      ['w', 'only b'],
    ];
    const c: [string, string][] = [
      ['x', '9'],
      ['y', '2'],
      ['z', 'same'],
    ];
    assert.deepEqual(differingKeys([a, b, c]), [
      { key: 'x', values: ['1', '1', '9'] },
      { key: 'y', values: ['2', '3', '2'] },
      { key: 'w', values: [undefined, 'only b', undefined] },
    ]);
    assert.deepEqual(differingKeys([a, a]), []);
    assert.deepEqual(differingKeys([a]), []);
  });

  test('a job dir’s config resolved by the language server: defaults and Trinity’s derived values, the file named', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'twb-runcfg-'));
    const cfg = join(dir, 'a.trinity.yaml');
    writeFileSync(
      cfg,
      '# trinity-version: v0.5.2\nproject: p\nname: lr-a\nmode: train\nalgorithm:\n  algorithm_type: sft\n  optimizer:\n    lr: 2.0e-6\nmodel:\n  model_path: /models/none\nbuffer:\n  batch_size: 4\n  total_steps: 3\n',
    );
    const job = join(dir, 'job');
    mkdirSync(join(job, 'state'), { recursive: true });
    const started = new Date(Date.now() + 60_000).toISOString();
    writeFileSync(
      join(job, 'state', 'run.json'),
      JSON.stringify({
        protocol: 1,
        runId: 'r',
        config: cfg,
        status: 'finished',
        pid: 1,
        backend: 'cpu',
        startedAt: started,
        stages: [],
      }),
    );
    const m = (await runConfigOf('k', job)).message;
    assert.equal(m.error, undefined);
    assert.equal(m.source, cfg);
    const flat = new Map(m.flat);
    assert.equal(flat.get('name'), 'lr-a');
    assert.equal(flat.get('algorithm.optimizer.lr'), '0.000002');
    // Not written: a default the model fills in.
    assert.equal(flat.get('algorithm.repeat_times'), '1');
    assert.match(m.yaml, /^algorithm:\n/m);
    assert.match(m.note, /^Resolved for Trinity-RFT v0\.5\.2\./);
    // The file was modified after the run started: said so.
    utimesSync(cfg, new Date(), new Date(Date.now() + 120_000));
    assert.match((await runConfigOf('k', job)).message.note, /changed after this run started/);
    assert.match((await runConfigOf('k', join(dir, 'nothing'))).message.error!, /no run record/);
    assert.match((await runConfigOf('k', job, join(dir, 'gone.trinity.yaml'))).message.error!, /no longer there/);
  });
});

describe('the reward histogram', () => {
  test('Sturges’ bin count over [min, max], values on an edge go to the bin it starts, the maximum to the last', () => {
    // n = 8 -> ceil(log2 8) + 1 = 4 bins of width 0.25 over [0, 1].
    const h = rewardHistogram([0, 0.25, 0.5, 0.5, 0.75, 1, 1, 0.1, null, Number.NaN]);
    assert.deepEqual(h.edges, [0, 0.25, 0.5, 0.75, 1]);
    assert.deepEqual(h.counts, [2, 1, 2, 3]);
    assert.equal(h.missing, 2);
  });

  test('edges are exact where min + width·i is not (0.6 of [0, 1] in 5 bins), and a value on one starts its bin', () => {
    const xs = [0, 0.2, 0.4, 0.6, 0.8, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1];
    const h = rewardHistogram(xs);
    assert.equal(h.counts.length, 5);
    // 0 + 3 · 0.2 would be 0.6000000000000001 and put 0.6 in bin 2; (1 − 0) · 3 / 5 is 0.6.
    assert.deepEqual(h.edges, [0, 0.2, 0.4, 0.6, 0.8, 1]);
    assert.deepEqual(h.counts, [1, 1, 1, 1, 12]);
    assert.equal(
      h.counts.reduce((a, b) => a + b),
      xs.length,
    );
  });

  test('all equal: one bin; nothing finite: no bins; at most maxBins', () => {
    assert.deepEqual(rewardHistogram([1, 1, 1]), { edges: [0.5, 1.5], counts: [3], missing: 0 });
    assert.deepEqual(rewardHistogram([null]), { edges: [], counts: [], missing: 1 });
    assert.equal(
      rewardHistogram(
        Array.from({ length: 1 << 22 }, (_, i) => i),
        20,
      ).counts.length,
      20,
    );
  });
});

describe('the new messages', () => {
  const run = { key: '/j', title: 't', jobDir: '/j', status: 'on disk' };
  test('compare init, config and rollouts with an origin pass; malformed ones are dropped', () => {
    const init = {
      type: 'init',
      run,
      series: [{ source: '/j', run: 'trainer', tag: 'a', steps: [1], times: [0], values: [1] }],
      compare: [run, { ...run, key: '/k' }],
    };
    assert.deepEqual(parseHostMessage(init), init);
    assert.equal(parseHostMessage({ ...init, compare: [] }), undefined);
    assert.equal(parseHostMessage({ ...init, series: [{ ...init.series[0], source: 3 }] }), undefined);
    const config = {
      type: 'config',
      runs: [{ key: '/j', source: 'a.yaml', note: '', yaml: 'a: 1\n', flat: [['a', '1']] }],
    };
    assert.deepEqual(parseHostMessage(config), config);
    assert.equal(parseHostMessage({ type: 'config', runs: [{ ...config.runs[0], flat: [['a', 1]] }] }), undefined);
    assert.deepEqual(parseHostMessage({ type: 'rollouts', step: 1, samples: [], origin: 'db' }), {
      type: 'rollouts',
      step: 1,
      samples: [],
      origin: 'db',
    });
    assert.equal(parseHostMessage({ type: 'rollouts', step: 1, samples: [], origin: 5 }), undefined);
  });

  test('a compare panel’s state restores its runs; a broken one is refused', () => {
    const s = {
      key: '/a',
      jobDir: '/a',
      compare: [
        { key: '/a', jobDir: '/a' },
        { key: '/b', jobDir: '/b' },
      ],
    };
    assert.deepEqual(parsePanelState({ ...s, settings: {} }), s);
    assert.equal(parsePanelState({ ...s, compare: [{ key: '/a' }] }), undefined);
    assert.deepEqual(parsePanelState({ key: '/a', jobDir: '/a' }), { key: '/a', jobDir: '/a' });
  });
});

describe('rollouts on disk', () => {
  test('monitor/rollouts.jsonl: the last N steps, in order, a damaged line skipped', () => {
    const job = mkdtempSync(join(tmpdir(), 'twb-rollouts-'));
    mkdirSync(join(job, 'monitor'));
    const line = (step: number) =>
      JSON.stringify({ step, samples: [{ prompt: `p${step}`, response: `r${step}`, reward: step / 10 }] });
    writeFileSync(
      join(job, 'monitor', 'rollouts.jsonl'),
      [line(1), line(2), '{"step": 3, "sam', line(4), '{"step": 5'].join('\n'),
    );
    assert.deepEqual(
      rolloutStepsOnDisk(job, 2).map((r) => r.step),
      [2, 4],
    );
    assert.deepEqual(
      rolloutStepsOnDisk(job, 10).map((r) => r.samples[0].prompt),
      ['p1', 'p2', 'p4'],
    );
  });

  test('a config’s SQLite experience buffer: sql, or a queue persisted to sqlite; relative paths under the base dirs', () => {
    const dir = mkdtempSync(join(tmpdir(), 'twb-bufref-'));
    writeFileSync(join(dir, 'exp.db'), '');
    const cfg = (eb: object) => ({ buffer: { trainer_input: { experience_buffer: eb } } });
    assert.deepEqual(
      experienceBufferOf(cfg({ name: 'gsm8k_buffer', storage_type: 'queue', path: 'sqlite:///exp.db' }), [
        '/nowhere',
        dir,
      ]),
      { file: join(dir, 'exp.db'), table: 'gsm8k_buffer' },
    );
    assert.deepEqual(experienceBufferOf(cfg({ name: 'b', storage_type: 'SQL', path: 'sqlite:////tmp/x.db' }), []), {
      file: '/tmp/x.db',
      table: 'b',
    });
    assert.equal(experienceBufferOf(cfg({ name: 'b', storage_type: 'file', path: 'out.jsonl' }), [dir]), undefined);
    assert.equal(
      experienceBufferOf(cfg({ name: 'b', storage_type: 'sql', path: 'postgresql://h/db' }), [dir]),
      undefined,
    );
    assert.equal(experienceBufferOf({}, [dir]), undefined);
  });

  test('Trinity-RFT’s table layout (prompt, response, reward, explore_step / model_version), read-only', () => {
    const dir = mkdtempSync(join(tmpdir(), 'twb-trinity-db-'));
    for (const stepCol of ['explore_step', 'model_version']) {
      const file = join(dir, `${stepCol}.db`);
      const db = new Database(file);
      // The columns SQLAlchemy creates for trinity/buffer/schema/sql_schema.py's ExperienceModel.
      const extra = stepCol === 'explore_step' ? 'train_step INTEGER, explore_step INTEGER' : 'model_version INTEGER';
      db.exec(
        `CREATE TABLE exp_buf (id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, prompt TEXT, response TEXT, message_list JSON, reward FLOAT, ${extra}, experience_bytes BLOB, consumed INTEGER)`,
      );
      const ins = db.prepare(
        `INSERT INTO exp_buf (prompt, response, message_list, reward, ${stepCol}, experience_bytes, consumed) VALUES (?, ?, '[]', ?, ?, x'80', 0)`,
      );
      for (let step = 1; step <= 4; step++)
        for (let i = 0; i < 3; i++)
          ins.run(`q${step}.${i}`, i === 0 ? '<script>alert(1)</script>' : `a${i}`, i === 2 ? null : i / 2, step);
      db.close();
      const got = rolloutsFromBuffer({ file, table: 'exp_buf' }, 2)!;
      assert.deepEqual(
        got.map((r) => r.step),
        [3, 4],
        stepCol,
      );
      assert.deepEqual(got[1].samples, [
        { prompt: 'q4.0', response: '<script>alert(1)</script>', reward: 0 },
        { prompt: 'q4.1', response: 'a1', reward: 0.5 },
        { prompt: 'q4.2', response: 'a2', reward: null },
      ]);
      assert.equal(rolloutsFromBuffer({ file, table: 'missing' }), undefined);
    }
    assert.equal(rolloutsFromBuffer({ file: join(dir, 'none.db'), table: 'exp_buf' }), undefined);
  });

  test('our runtime’s table (runtime/rft/buffer/sql.ts): text and step from the JSON record, reward from its column', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'twb-our-db-'));
    const file = join(dir, 'buf.db');
    const w = new SqlExperienceWriter(`sqlite:///${file}`, 'experience_buffer');
    const exp = (batch: number, i: number) => ({
      eid: { batch, task: i, run: 0, step: 0, suffix: `s${batch}${i}` },
      tokens: [1, 2, 3],
      promptLength: 1,
      reward: batch + i / 10,
      promptText: `prompt ${batch}.${i}`,
      responseText: `response ${batch}.${i}`,
    });
    await w.write([exp(7, 0), exp(7, 1), exp(8, 0)] as never);
    await w.finish();
    const got = rolloutsFromBuffer({ file, table: 'experience_buffer' })!;
    assert.deepEqual(got, [
      {
        step: 7,
        samples: [
          { prompt: 'prompt 7.0', response: 'response 7.0', reward: 7 },
          { prompt: 'prompt 7.1', response: 'response 7.1', reward: 7.1 },
        ],
      },
      { step: 8, samples: [{ prompt: 'prompt 8.0', response: 'response 8.0', reward: 8 }] },
    ]);
  });
});

describe('a Trinity run’s rollouts, end to end on disk', () => {
  test('its config names a sql experience buffer: the samples come from that SQLite file, the origin says so', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'twb-trinity-job-'));
    const cfg = join(dir, 'gsm8k.trinity.yaml');
    writeFileSync(
      cfg,
      [
        '# trinity-version: main',
        'project: p',
        'name: gsm8k',
        'algorithm: {algorithm_type: grpo, repeat_times: 2}',
        'model: {model_path: /models/none}',
        'buffer:',
        '  batch_size: 1',
        '  total_steps: 2',
        '  explorer_input: {taskset: {name: gsm8k, path: /data/gsm8k}}',
        '  trainer_input:',
        '    experience_buffer: {name: gsm8k_buffer, storage_type: sql, path: "sqlite:///gsm8k.db"}',
        '',
      ].join('\n'),
    );
    const db = new Database(join(dir, 'gsm8k.db'));
    db.exec(
      'CREATE TABLE gsm8k_buffer (id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, prompt TEXT, response TEXT, message_list JSON, reward FLOAT, train_step INTEGER, explore_step INTEGER, experience_bytes BLOB, consumed INTEGER)',
    );
    const ins = db.prepare(
      'INSERT INTO gsm8k_buffer (prompt, response, reward, train_step, explore_step, consumed) VALUES (?, ?, ?, ?, ?, 0)',
    );
    ins.run('Q1', 'A1 <b>bold</b>', 1, 0, 1);
    ins.run('Q1', 'A1 wrong', 0, 0, 1);
    ins.run('Q2', 'A2', 0.5, 1, 2);
    db.close();
    const job = join(dir, 'checkpoints', 'p', 'gsm8k');
    mkdirSync(job, { recursive: true });
    const config = await runConfigOf('k', job, cfg);
    assert.equal(config.message.error, undefined);
    const found = rolloutsOfJob(job, config.resolved[0], config.configDir, 20)!;
    assert.equal(found.origin, 'experience buffer gsm8k.db (table gsm8k_buffer)');
    assert.ok('buffer' in found);
    assert.deepEqual(found.buffer, { file: join(dir, 'gsm8k.db'), table: 'gsm8k_buffer' });
    // Read as the editor reads it: `trinity-workbench rollouts` (dist/cli.js, `npm run build`) in a Node 20 process.
    const read = await readBufferRollouts(
      process.execPath,
      join(__dirname, '..', '..', 'dist', 'cli.js'),
      found.buffer,
      20,
    );
    assert.equal(read.error, undefined);
    assert.deepEqual(read.steps, [
      {
        step: 1,
        samples: [
          { prompt: 'Q1', response: 'A1 <b>bold</b>', reward: 1 },
          { prompt: 'Q1', response: 'A1 wrong', reward: 0 },
        ],
      },
      { step: 2, samples: [{ prompt: 'Q2', response: 'A2', reward: 0.5 }] },
    ]);
    // Our runtime's rollouts.jsonl, when there is one, comes first.
    mkdirSync(join(job, 'monitor'));
    writeFileSync(
      join(job, 'monitor', 'rollouts.jsonl'),
      `${JSON.stringify({ step: 9, samples: [{ prompt: 'p', response: 'r', reward: 1 }] })}\n`,
    );
    assert.equal(rolloutsOfJob(job, config.resolved[0], config.configDir, 20)!.origin, 'monitor/rollouts.jsonl');
    // A table the file lacks: the CLI fails and the reader says why.
    const bad = await readBufferRollouts(
      process.execPath,
      join(__dirname, '..', '..', 'dist', 'cli.js'),
      { file: join(dir, 'gsm8k.db'), table: 'nope' },
      20,
    );
    assert.deepEqual(bad.steps, []);
    assert.match(bad.error!, /no readable experience table "nope"/);
  });
});
