/**
 * `mode: serve`: the OpenAI-compatible service over real HTTP on localhost, with a real SQLite buffer and a tiny
 * model. Chat completions are answered with the policy and recorded (token ids, log-probs equal to the engine's
 * re-scoring, model version, keyed by the response id); /feedback rewards them, /commit sends them through the
 * experience pipeline into the trainer's buffer; bad requests get Trinity's 400/404s and the server keeps serving; a
 * `mode: train` run of the same job trains on what was served and the service takes its checkpoint; abort and SIGTERM
 * stop it cleanly. Security: loopback unless listen_address is written; beyond loopback (reached here through
 * 127.0.0.1 only) a bearer key on every route but /health; refused feedback and commits leave the buffer untouched.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import * as tf from '@tensorflow/tfjs-core';
import { initBackend } from '../../../../runtime/engine/backend';
import { loadModel } from '../../../../runtime/engine/lm/checkpoint';
import { scoreSequences } from '../../../../runtime/engine/logprobs';
import { checkConfig } from '../../../../runtime/config/check-config';
import { metricNames } from '../../../../runtime/config/runs/metric-names';
import { runJob, type JobResult } from '../../../../runtime/rft/run/job/job';
import { header, tinyJob, type TinyJob } from './helpers';
import { start } from './cli-process';

const SERVE = `mode: serve
algorithm:
  algorithm_type: grpo
  repeat_times: 2
  optimizer:
    lr: 1e-3
buffer:
  train_batch_size: 2
  trainer_input:
    experience_buffer:
      name: exps
      storage_type: sql
      path: sqlite:///buffer.db
explorer:
  proxy_port: 0
  service_status_check_interval: 1
synchronizer:
  sync_method: checkpoint
`;

function serveConfig(job: TinyJob, name: string, body = SERVE): string {
  return job.write(`${name}.yaml`, header(job, name) + body);
}

interface Served {
  url: string;
  logs: string[];
  /** Every event the run emitted, as JSON. */
  events: string[];
  controller: AbortController;
  done: Promise<JobResult>;
}

/** runJob in this process; resolves once the service logs its URL. */
async function serve(config: string, announce = /Starting Trinity Service on (\S+)/): Promise<Served> {
  const logs: string[] = [];
  const events: string[] = [];
  const controller = new AbortController();
  let found: (url: string) => void = () => {};
  const url = new Promise<string>((r) => (found = r));
  const done = runJob(config, {
    backend: 'wasm',
    signal: controller.signal,
    events: (e) => events.push(JSON.stringify(e)),
    log: (level, m) => {
      logs.push(`${level}: ${m}`);
      const hit = announce.exec(m);
      if (hit) found(hit[1]);
    },
  });
  const ended = done.then((r): never => {
    throw new Error(`the run ended before serving: ${r.status} ${r.error ?? ''}\n${logs.join('\n')}`);
  });
  return { url: await Promise.race([url, ended]), logs, events, controller, done };
}

interface Reply {
  status: number;
  json: any;
  text: string;
  type: string | null;
}

async function call(
  url: string,
  method: 'GET' | 'POST',
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Reply> {
  const res = await fetch(url, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text, type: res.headers.get('content-type') };
}

const chat = (url: string, extra: Record<string, unknown> = {}) =>
  call(`${url}/v1/chat/completions`, 'POST', {
    model: 'model',
    messages: [{ role: 'user', content: '1+2' }],
    max_tokens: 6,
    ...extra,
  });

function rows<T>(db: string, sql: string, ...params: unknown[]): T[] {
  const c = new Database(db, { readonly: true, fileMustExist: true });
  try {
    return c.prepare(sql).all(...params) as T[];
  } finally {
    c.close();
  }
}

function floats(blob: Buffer): number[] {
  return Array.from({ length: blob.length / 8 }, (_, i) => blob.readDoubleLE(i * 8));
}

/** The response tokens' log-probs, recomputed by the engine on `modelDir`'s weights (temperature 1). */
function rescore(modelDir: string, tokens: number[], promptLength: number): number[] {
  const model = loadModel(modelDir);
  try {
    return tf.tidy(() => {
      const ids = tf.tensor2d([tokens], [1, tokens.length], 'int32');
      return Array.from(scoreSequences(model, ids, { temperature: 1 }).logprobs.dataSync()).slice(promptLength - 1);
    });
  } finally {
    model.dispose();
  }
}

function assertClose(actual: number[], expected: number[], tol: number, what: string): void {
  assert.equal(actual.length, expected.length, `${what}: lengths`);
  actual.forEach((a, i) => assert.ok(Math.abs(a - expected[i]) <= tol, `${what}[${i}]: ${a} vs ${expected[i]}`));
}

async function until(cond: () => Promise<boolean>, what: string, timeoutMs = 30000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

interface BufferRow {
  msg_id: string;
  task_id: string;
  run_id: number;
  reward: number | null;
  model_version: number;
  experience: string;
  logprobs: Buffer;
  advantages: Buffer;
  consumed: number;
}

before(async () => {
  await initBackend({ prefer: 'wasm' });
});

describe('serve mode: one service, requests in order', () => {
  let job: TinyJob;
  let config: string;
  let jobDir: string;
  let db: string;
  let s: Served;
  const responses: any[] = [];

  before(async () => {
    job = tinyJob(11);
    config = serveConfig(job, 'serve');
    jobDir = join(job.dir, 'checkpoints', 'tests', 'serve');
    db = join(job.dir, 'buffer.db');
    s = await serve(config);
  });
  after(async () => {
    s.controller.abort();
    await s.done;
  });

  test('no listen_address written: bound to loopback only, logged so, no key; the URL file is 0600', async () => {
    assert.match(s.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    const port = s.url.split(':')[2];
    const line = s.logs.find((l) => l.includes('the service is local to this machine'));
    assert.ok(line, s.logs.join('\n'));
    // ::1 is bound where this machine has IPv6; either way every bound address is loopback.
    const bound = /listening on (.*) only:/.exec(line)![1].split(' and ');
    assert.ok(
      bound.every((b) => b === `127.0.0.1:${port}` || b === `[::1]:${port}`),
      line,
    );
    assert.equal(bound[0], `127.0.0.1:${port}`);
    assert.match(line, /write explorer\.listen_address/);
    const file = join(jobDir, 'explorer_server_url.txt');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal((await call(`${s.url}/metrics`, 'GET')).status, 200, 'no key needed on loopback');
  });

  test('logs its URL, writes it to the job directory, and answers /health and /v1/models', async () => {
    assert.match(s.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(readFileSync(join(jobDir, 'explorer_server_url.txt'), 'utf8'), s.url);
    assert.ok(s.logs.some((l) => l.includes('served one at a time')));
    const health = await call(`${s.url}/health`, 'GET');
    assert.equal(health.status, 200);
    assert.equal(health.text, '');
    const models = await call(`${s.url}/v1/models`, 'GET');
    assert.equal(models.status, 200);
    assert.equal(models.json.object, 'list');
    assert.equal(models.json.data[0].id, 'model');
  });

  test('chat completions: OpenAI shape, token ids, log-probs and usage', async () => {
    // Sent together: the service answers them one after the other.
    const [a, b] = await Promise.all([
      chat(s.url, { n: 2 }),
      chat(s.url, {
        messages: [
          { role: 'system', content: 'add' },
          { role: 'user', content: [{ type: 'text', text: '4+5' }] },
        ],
      }),
    ]);
    for (const r of [a, b]) {
      assert.equal(r.status, 200, r.text);
      const body = r.json;
      assert.match(body.id, /^chatcmpl-[0-9a-f]{32}$/);
      assert.equal(body.object, 'chat.completion');
      assert.equal(body.model, 'model');
      assert.ok(Array.isArray(body.prompt_token_ids) && body.prompt_token_ids.length > 0);
      let completion = 0;
      body.choices.forEach((c: any, i: number) => {
        assert.equal(c.index, i);
        assert.equal(c.message.role, 'assistant');
        assert.equal(typeof c.message.content, 'string');
        assert.ok(['stop', 'length'].includes(c.finish_reason));
        assert.ok(c.token_ids.length >= 1 && c.token_ids.length <= 6);
        assert.equal(c.logprobs.content.length, c.token_ids.length);
        for (const lp of c.logprobs.content) assert.ok(typeof lp.token === 'string' && lp.logprob <= 0);
        completion += c.token_ids.length;
      });
      assert.deepEqual(body.usage, {
        prompt_tokens: body.prompt_token_ids.length,
        completion_tokens: completion,
        total_tokens: body.prompt_token_ids.length + completion,
      });
      responses.push(body);
    }
    assert.equal(a.json.choices.length, 2);
    assert.equal(b.json.choices.length, 1);
    const m = await call(`${s.url}/metrics`, 'GET');
    assert.deepEqual(m.json, {
      'rollout/model_0/total_request_count': 2,
      'rollout/model_0/model_version': 0,
      'rollout/total_experience_count': 3,
      'rollout/ready_experience_count': 0,
      explore_step_num: 0,
    });
  });

  test("bad requests get 400/404 with Trinity's messages, and the server keeps serving", async () => {
    const fb = `${s.url}/feedback`;
    const bad = await call(fb, 'POST', '{"reward": 1,');
    assert.equal(bad.status, 400);
    assert.match(bad.json.error, /^Invalid JSON/);
    for (const body of [{ reward: 1 }, { msg_ids: ['x'] }, { msg_ids: null, reward: 1 }]) {
      assert.deepEqual(await call(fb, 'POST', body).then((r) => [r.status, r.json]), [
        400,
        { error: 'msg_ids and reward are required' },
      ]);
    }
    for (const body of [
      { msg_ids: 'x', reward: 1 },
      { msg_ids: ['x'], reward: '1' },
    ]) {
      assert.deepEqual(await call(fb, 'POST', body).then((r) => [r.status, r.json]), [
        400,
        { error: 'msg_ids must be a list and reward must be a number' },
      ]);
    }
    assert.equal((await call(fb, 'POST', [1, 2])).status, 400);
    const cc = `${s.url}/v1/chat/completions`;
    const badChat = await call(cc, 'POST', 'not json');
    assert.equal(badChat.status, 400);
    assert.match(badChat.json.detail, /^Invalid JSON/);
    const noMessages = await call(cc, 'POST', { model: 'model' });
    assert.equal(noMessages.status, 400);
    assert.match(noMessages.json.error.message, /messages must be a non-empty list/);
    const badN = await call(cc, 'POST', { messages: [{ role: 'user', content: 'x' }], n: 0 });
    assert.deepEqual([badN.status, badN.json.error.message], [400, 'n must be at least 1, got 0.']);
    const otherModel = await chat(s.url, { model: 'gpt-4o' });
    assert.deepEqual([otherModel.status, otherModel.json.error.message], [404, 'The model `gpt-4o` does not exist.']);
    const tooLong = await chat(s.url, { messages: [{ role: 'user', content: '1'.repeat(80) }] });
    assert.equal(tooLong.status, 400);
    assert.match(tooLong.json.error.message, /maximum context length is 64 tokens/);
    assert.deepEqual(await call(`${s.url}/nowhere`, 'GET').then((r) => [r.status, r.json]), [
      404,
      { detail: 'Not Found' },
    ]);
    assert.deepEqual(await call(`${s.url}/feedback`, 'GET').then((r) => [r.status, r.json]), [
      405,
      { detail: 'Method Not Allowed' },
    ]);
    assert.equal((await call(`${s.url}/health`, 'GET')).status, 200);
    const m = await call(`${s.url}/metrics`, 'GET');
    assert.equal(m.json['rollout/total_experience_count'], 3, 'no bad request was recorded');
  });

  test('stream: true answers SSE chunks that add up to the response, and records it', async () => {
    const r = await chat(s.url, { stream: true, stream_options: { include_usage: true } });
    assert.equal(r.status, 200);
    assert.match(r.type ?? '', /^text\/event-stream/);
    const events = r.text.split('\n\n').filter(Boolean);
    assert.equal(events[events.length - 1], 'data: [DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.replace(/^data: /, '')));
    const id = chunks[0].id;
    assert.ok(chunks.every((c) => c.id === id && c.object === 'chat.completion.chunk'));
    assert.equal(chunks[0].choices[0].delta.role, 'assistant');
    const tokenChunks = chunks.filter((c) => c.choices.length && c.choices[0].token_ids);
    const tokens = tokenChunks.flatMap((c) => c.choices[0].token_ids);
    const text = tokenChunks.map((c) => c.choices[0].delta.content).join('');
    assert.ok(['stop', 'length'].includes(tokenChunks[tokenChunks.length - 1].choices[0].finish_reason));
    const usage = chunks[chunks.length - 1];
    assert.deepEqual(usage.choices, []);
    assert.deepEqual(usage.usage, {
      prompt_tokens: chunks[0].prompt_token_ids.length,
      completion_tokens: tokens.length,
      total_tokens: chunks[0].prompt_token_ids.length + tokens.length,
    });
    assert.equal(tokenChunks.flatMap((c) => c.choices[0].logprobs.content).length, tokens.length);
    responses.push({
      id,
      prompt_token_ids: chunks[0].prompt_token_ids,
      choices: [
        {
          token_ids: tokens,
          message: { content: text },
          logprobs: { content: tokenChunks.flatMap((c) => c.choices[0].logprobs.content) },
        },
      ],
    });
    const m = await call(`${s.url}/metrics`, 'GET');
    assert.equal(m.json['rollout/total_experience_count'], 4);
  });

  test('feedback rewards the recorded responses once; commit writes them through the pipeline into the buffer', async () => {
    const [a, b, streamed] = responses;
    const ok = (body: unknown) =>
      call(`${s.url}/feedback`, 'POST', body).then((r) =>
        assert.deepEqual([r.status, r.json], [200, { status: 'success' }]),
      );
    await ok({ reward: 1, msg_ids: [a.id], task_id: 'sums' });
    const unknown = await call(`${s.url}/feedback`, 'POST', {
      reward: 0.25,
      msg_ids: [b.id, 'unknown-id'],
      task_id: 'sums',
      run_id: 1,
    });
    assert.deepEqual(
      [unknown.status, unknown.json],
      [400, { error: 'unknown msg_ids (not response ids of this service): "unknown-id"' }],
    );
    await ok({ reward: 0.25, msg_ids: [b.id], task_id: 'sums', run_id: 1 });
    await ok({ reward: 0.5, msg_ids: [streamed.id], task_id: 'other' });
    await ok({ reward: 7, msg_ids: [a.id], task_id: 'again' }); // already rewarded: nothing changes
    let m = await call(`${s.url}/metrics`, 'GET');
    assert.equal(m.json['rollout/ready_experience_count'], 4);
    const commit = await call(`${s.url}/commit`, 'POST');
    assert.deepEqual([commit.status, commit.json], [200, { status: 'success' }]);
    m = await call(`${s.url}/metrics`, 'GET');
    assert.equal(m.json.explore_step_num, 1);

    const stored = rows<BufferRow>(db, 'SELECT * FROM exps ORDER BY id');
    assert.equal(stored.length, 4);
    const expected = new Map<string, { reward: number; task: string; run: number }>([
      [a.id, { reward: 1, task: 'sums', run: 0 }],
      [b.id, { reward: 0.25, task: 'sums', run: 1 }],
      [streamed.id, { reward: 0.5, task: 'other', run: 0 }],
    ]);
    const byId = new Map(responses.map((r) => [r.id, r]));
    const seen = new Map<string, number>();
    for (const row of stored) {
      const want = expected.get(row.msg_id)!;
      assert.ok(want, `row of ${row.msg_id}`);
      assert.deepEqual(
        [row.reward, row.task_id, row.run_id, row.model_version, row.consumed],
        [want.reward, want.task, want.run, 0, 0],
      );
      const k = seen.get(row.msg_id) ?? 0;
      seen.set(row.msg_id, k + 1);
      const resp = byId.get(row.msg_id);
      const choice = resp.choices[k];
      const exp = JSON.parse(row.experience);
      assert.deepEqual(exp.tokens, [...resp.prompt_token_ids, ...choice.token_ids], 'tokens as served');
      assert.equal(exp.prompt_length, resp.prompt_token_ids.length);
      assert.deepEqual(exp.eid, { batch: '', task: want.task, run: want.run, step: 0, suffix: row.msg_id });
      const lps = floats(row.logprobs);
      assert.deepEqual(
        lps,
        choice.logprobs.content.map((c: { logprob: number }) => c.logprob),
        'log-probs as returned',
      );
      assertClose(lps, rescore(job.modelDir, exp.tokens, exp.prompt_length), 1e-4, 'log-probs vs re-scoring');
      // GRPO's group advantage ran in the pipeline, grouped by task id: "sums" holds rewards 1, 1, 0.25 (mean 0.75);
      // "other" is a group of one, which GRPO scores against mean 0 and std 1.
      const advantages = floats(row.advantages);
      assert.equal(advantages.length, lps.length);
      if (row.task_id === 'other')
        assertClose(
          advantages,
          advantages.map(() => 0.5),
          1e-5,
          'advantages of a group of one',
        );
      else
        assert.ok(
          advantages.every((x) => Math.sign(x) === Math.sign(want.reward - 0.75)),
          `reward ${want.reward}: advantages ${advantages}`,
        );
    }
    const history = rows<{ consumed: number; n: number }>(
      join(jobDir, 'buffer', 'proxy_history.db'),
      'SELECT consumed, COUNT(*) AS n FROM proxy_history GROUP BY consumed',
    );
    assert.deepEqual(history, [{ consumed: 1, n: 4 }]);

    const logged = readFileSync(join(jobDir, 'monitor', 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { role: string; step: number; values: Record<string, number> })
      .filter((l) => l.role === 'explorer');
    assert.equal(logged.length, 1);
    assert.equal(logged[0].step, 1);
    assert.equal(logged[0].values['experience_pipeline/experience_count'], 4);
    assert.equal(logged[0].values['rollout/ready_experience_count'], 4);
    const checked = await checkConfig(readFileSync(config, 'utf8'));
    const predicted = new Set(metricNames(checked.runs[0].resolved, checked.loaded.release).explorer);
    for (const k of Object.keys(logged[0].values)) assert.ok(predicted.has(k), `${k} is predicted by metricNames()`);
  });

  test('a commit with nothing rewarded is an explorer step that writes nothing', async () => {
    assert.equal((await call(`${s.url}/commit`, 'POST')).status, 200);
    const m = await call(`${s.url}/metrics`, 'GET');
    assert.equal(m.json.explore_step_num, 2);
    assert.equal(rows(db, 'SELECT id FROM exps').length, 4);
  });

  test('abort closes the server, finishes the buffer writer and ends the run as stopped', async () => {
    s.controller.abort();
    const r = await s.done;
    assert.equal(r.status, 'stopped', r.error);
    await assert.rejects(fetch(`${s.url}/health`));
    const writers = rows<{ finished_at: string | null }>(db, 'SELECT finished_at FROM exps__writers');
    assert.ok(writers.length === 1 && writers[0].finished_at !== null, 'the buffer writer finished');
  });
});

describe('serve mode bound beyond loopback (listen_address: 0.0.0.0 written)', () => {
  let job: TinyJob;
  let jobDir: string;
  let db: string;
  let history: string;
  let s: Served;
  /** The service, reached through loopback only (it listens on every interface). */
  let base: string;
  let key: string;
  let auth: Record<string, string>;

  before(async () => {
    job = tinyJob(16);
    jobDir = join(job.dir, 'checkpoints', 'tests', 'exposed');
    db = join(job.dir, 'buffer.db');
    history = join(jobDir, 'buffer', 'proxy_history.db');
    s = await serve(
      serveConfig(job, 'exposed', SERVE.replace('explorer:\n', 'explorer:\n  listen_address: 0.0.0.0\n')),
    );
    base = `http://127.0.0.1:${s.url.split(':').pop()}`;
  });
  after(async () => {
    s.controller.abort();
    assert.equal((await s.done).status, 'stopped');
  });

  test('the URL file holds the URL and a generated key, mode 0600; the key is in no log line or event', () => {
    const file = join(jobDir, 'explorer_server_url.txt');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const [url, header, ...rest] = readFileSync(file, 'utf8').split('\n');
    assert.equal(url, s.url);
    assert.deepEqual(rest, ['']);
    const m = /^Authorization: Bearer (twb-[A-Za-z0-9_-]{43})$/.exec(header);
    assert.ok(m, header);
    key = m[1];
    auth = { authorization: `Bearer ${key}` };
    assert.ok(
      s.logs.some(
        (l) =>
          l.startsWith('warning: ') &&
          l.includes('reachable from the network') &&
          l.includes('Authorization: Bearer <key>'),
      ),
      s.logs.join('\n'),
    );
    for (const l of [...s.logs, ...s.events]) assert.ok(!l.includes(key), `the key leaked: ${l}`);
  });

  test('without the key (or with a wrong one) every route but /health answers 401 with an OpenAI error body', async () => {
    const routes: [string, 'GET' | 'POST', unknown][] = [
      ['/v1/chat/completions', 'POST', { messages: [{ role: 'user', content: '1+2' }] }],
      ['/v1/models', 'GET', undefined],
      ['/metrics', 'GET', undefined],
      ['/feedback', 'POST', { reward: 1, msg_ids: [] }],
      ['/commit', 'POST', undefined],
      ['/nowhere', 'GET', undefined],
    ];
    const wrong: Record<string, string>[] = [
      {},
      { authorization: `Bearer ${key}x` },
      { authorization: `Bearer ${key.slice(0, -1)}` },
      { authorization: key },
      { authorization: `Basic ${key}` },
      { authorization: 'Bearer ' },
    ];
    for (const [path, method, body] of routes) {
      for (const headers of wrong) {
        const r = await call(`${base}${path}`, method, body, headers);
        assert.equal(r.status, 401, `${method} ${path} with ${JSON.stringify(headers)}`);
        assert.deepEqual(Object.keys(r.json.error).sort(), ['code', 'message', 'param', 'type']);
        assert.equal(r.json.error.code, 'invalid_api_key');
        assert.equal(r.json.error.type, 'invalid_request_error');
        assert.ok(!r.text.includes(key.slice(4)), 'the reply does not echo the key');
      }
    }
    assert.equal((await call(`${base}/health`, 'GET')).status, 200);
    const m = await call(`${base}/metrics`, 'GET', undefined, auth);
    assert.equal(m.json['rollout/model_0/total_request_count'], 0, 'no unauthorized request was served');
  });

  test('with the key everything works as on loopback', async () => {
    assert.equal((await call(`${base}/v1/models`, 'GET', undefined, auth)).json.data[0].id, 'model');
    const r = await call(
      `${base}/v1/chat/completions`,
      'POST',
      { model: 'model', messages: [{ role: 'user', content: '1+2' }], max_tokens: 6 },
      auth,
    );
    assert.equal(r.status, 200, r.text);
    assert.equal(
      (await call(`${base}/feedback`, 'POST', { reward: 1, msg_ids: [r.json.id], task_id: 't' }, auth)).status,
      200,
    );
    assert.equal((await call(`${base}/commit`, 'POST', undefined, auth)).status, 200);
    assert.deepEqual(
      rows<{ msg_id: string }>(db, 'SELECT msg_id FROM exps').map((x) => x.msg_id),
      [r.json.id],
    );
  });

  test('malformed /feedback and /commit bodies leave the buffer and the history exactly as they were', async () => {
    const post = (path: string, body?: unknown) => call(`${base}${path}`, 'POST', body, auth);
    const ask = async () =>
      (await post('/v1/chat/completions', { messages: [{ role: 'user', content: '4+5' }], max_tokens: 4 })).json
        .id as string;
    const ready = await ask();
    const open = await ask();
    assert.equal((await post('/feedback', { reward: 0.5, msg_ids: [ready], task_id: 'r' })).status, 200);
    const snapshot = () => ({
      exps: rows(db, 'SELECT * FROM exps ORDER BY id'),
      history: rows(history, 'SELECT * FROM proxy_history ORDER BY id'),
    });
    const metrics = async () => (await call(`${base}/metrics`, 'GET', undefined, auth)).json;
    const before = snapshot();
    const metricsBefore = await metrics();
    const feedbacks: unknown[] = [
      '{"reward": 1, "msg_ids": [',
      '',
      'null',
      [open],
      { msg_ids: [open] },
      { reward: 1 },
      { reward: '1', msg_ids: [open] },
      { reward: 1, msg_ids: open },
      { reward: 1, msg_ids: [open, { id: 1 }] },
      { reward: 1, msg_ids: [open, 'chatcmpl-unknown'] },
      { reward: 1, msg_ids: ['x'.repeat(257)] },
      { reward: 1, msg_ids: [open, ''] },
      { reward: 1, msg_ids: Array.from({ length: 4097 }, () => open) },
      { reward: 1, msg_ids: [open], task_id: 't'.repeat(257) },
      { reward: 1, msg_ids: [open], task_id: ['t'] },
      { reward: 1, msg_ids: [open], run_id: 1.5 },
      { reward: 1, msg_ids: [open], run_id: -1 },
      { reward: 1, msg_ids: [open], run_id: '1' },
      '{"reward": 1e999, "msg_ids": ["' + open + '"]}',
    ];
    for (const body of feedbacks) {
      const r = await post('/feedback', body);
      assert.equal(r.status, 400, `feedback ${JSON.stringify(body).slice(0, 80)}: ${r.text.slice(0, 200)}`);
      assert.equal(typeof r.json.error, 'string');
    }
    for (const body of ['{', '[1]', '"commit"', { force: true }, '{"msg_ids": []}']) {
      const r = await post('/commit', body);
      assert.equal(r.status, 400, `commit ${JSON.stringify(body)}: ${r.text}`);
    }
    assert.deepEqual(snapshot(), before, 'rows and their content unchanged');
    assert.deepEqual(await metrics(), metricsBefore);
    // The service is unharmed: the rewarded experience and the open one still commit.
    assert.equal((await post('/feedback', { reward: 0, msg_ids: [open], task_id: 'r' })).status, 200);
    assert.equal((await post('/commit', {})).status, 200);
    assert.deepEqual(
      rows<{ msg_id: string }>(db, 'SELECT msg_id FROM exps ORDER BY id')
        .map((x) => x.msg_id)
        .slice(-2)
        .sort(),
      [ready, open].sort(),
    );
  });
});

describe('serve mode beyond loopback with TRINITY_WORKBENCH_API_KEY', () => {
  test('the key from the environment is the one required; it is written nowhere and logged nowhere', async () => {
    const job = tinyJob(17);
    const key = 'env-key-for-the-test-0123456789';
    process.env.TRINITY_WORKBENCH_API_KEY = key;
    let s: Served | undefined;
    try {
      s = await serve(
        serveConfig(job, 'envkey', SERVE.replace('explorer:\n', 'explorer:\n  listen_address: 0.0.0.0\n')),
      );
      const base = `http://127.0.0.1:${s.url.split(':').pop()}`;
      const file = join(job.dir, 'checkpoints', 'tests', 'envkey', 'explorer_server_url.txt');
      assert.equal(readFileSync(file, 'utf8'), s.url);
      assert.equal(statSync(file).mode & 0o777, 0o600);
      assert.equal((await call(`${base}/v1/models`, 'GET', undefined, { authorization: `Bearer ${key}` })).status, 200);
      const missing = await call(`${base}/v1/models`, 'GET');
      assert.equal(missing.status, 401);
      assert.match(missing.json.error.message, /the value of TRINITY_WORKBENCH_API_KEY/);
      assert.equal(
        (await call(`${base}/v1/models`, 'GET', undefined, { authorization: 'Bearer twb-other' })).status,
        401,
      );
      for (const l of [...s.logs, ...s.events]) assert.ok(!l.includes(key), `the key leaked: ${l}`);
    } finally {
      delete process.env.TRINITY_WORKBENCH_API_KEY;
      s?.controller.abort();
      if (s) assert.equal((await s.done).status, 'stopped');
    }
  });
});

describe("serve mode with a trainer of the same job (Trinity's agentic setup)", () => {
  test('the trainer trains on the committed experiences; the service takes its checkpoint', async () => {
    const job = tinyJob(12);
    const serveCfg = serveConfig(job, 'agent');
    const trainCfg = job.write(
      'train.yaml',
      header(job, 'agent') +
        SERVE.replace('mode: serve', 'mode: train').replace(
          '  sync_method: checkpoint',
          '  sync_method: checkpoint\n  sync_interval: 1\ntrainer:\n  total_steps: 1\n  save_interval: 100',
        ),
    );
    const jobDir = join(job.dir, 'checkpoints', 'tests', 'agent');
    const db = join(job.dir, 'buffer.db');
    const s = await serve(serveCfg);
    const trainLogs: string[] = [];
    const training = runJob(trainCfg, { backend: 'wasm', log: (l, m) => trainLogs.push(`${l}: ${m}`) });
    try {
      const a = await chat(s.url);
      const b = await chat(s.url);
      for (const [r, reward, run] of [
        [a, 1, 0],
        [b, 0, 1],
      ] as const) {
        const fb = await call(`${s.url}/feedback`, 'POST', { reward, msg_ids: [r.json.id], task_id: 'g', run_id: run });
        assert.equal(fb.status, 200);
      }
      assert.equal((await call(`${s.url}/commit`, 'POST')).status, 200);
      const trained = await training;
      assert.equal(trained.status, 'finished', `${trained.error}\n${trainLogs.join('\n')}`);
      assert.ok(existsSync(join(jobDir, 'global_step_1', 'model.safetensors')), 'the trainer saved step 1');
      assert.deepEqual(
        rows<{ consumed: number }>(db, 'SELECT consumed FROM exps').map((r) => r.consumed),
        [1, 1],
        'both read by the trainer',
      );
      await until(
        async () => (await call(`${s.url}/metrics`, 'GET')).json['rollout/model_0/model_version'] === 1,
        'the service to take checkpoint 1',
      );
      assert.ok(s.logs.some((l) => l.includes('Model 0 synchronized to version 1.')));

      const c = await chat(s.url);
      assert.equal(c.status, 200);
      await call(`${s.url}/feedback`, 'POST', { reward: 1, msg_ids: [c.json.id], task_id: 'h' });
      await call(`${s.url}/commit`, 'POST');
      const [row] = rows<BufferRow>(db, 'SELECT * FROM exps WHERE msg_id = ?', c.json.id);
      assert.equal(row.model_version, 1);
      const exp = JSON.parse(row.experience);
      // Sampled by the trained weights: the checkpoint's re-scoring matches, the initial weights' does not.
      const lps = floats(row.logprobs);
      assertClose(
        lps,
        rescore(join(jobDir, 'global_step_1'), exp.tokens, exp.prompt_length),
        1e-4,
        'log-probs vs the checkpoint',
      );
      const before = rescore(job.modelDir, exp.tokens, exp.prompt_length);
      assert.ok(
        lps.some((x, i) => Math.abs(x - before[i]) > 1e-4),
        'the weights changed',
      );
    } finally {
      s.controller.abort();
      const r = await s.done;
      assert.equal(r.status, 'stopped');
    }
  });
});

describe('serve mode of Trinity-RFT v0.3.2 (explorer/api: no feedback)', () => {
  test('api_port; every response goes to the buffer, unrewarded, at the next interval', async () => {
    const job = tinyJob(13);
    const body = SERVE.replace('proxy_port: 0', 'api_port: 0').replace(
      '  trainer_input:',
      '  explorer_input:\n    taskset:\n      name: sums\n      storage_type: file\n      path: data/train.jsonl\n      format: {prompt_key: question, response_key: answer}\n  trainer_input:',
    );
    const path = job.write(
      'old.yaml',
      header(job, 'old').replace('# trinity-version: main', '# trinity-version: v0.3.2') + body,
    );
    const s = await serve(path, /Explorer API Server is started on (\S+) and listening to/);
    try {
      assert.equal((await call(`${s.url}/feedback`, 'POST', { reward: 1, msg_ids: [] })).status, 404);
      assert.equal((await call(`${s.url}/commit`, 'POST')).status, 404);
      const r = await chat(s.url, { temperature: 0 });
      assert.equal(r.status, 200);
      assert.equal(r.json.choices[0].logprobs, null, 'log-probs only when asked before v0.4.0');
      const streamed = await chat(s.url, { stream: true });
      assert.equal(streamed.status, 400);
      const db = join(job.dir, 'buffer.db');
      await until(
        async () => existsSync(db) && rows(db, 'SELECT id FROM exps').length === 1,
        'the interval to write the response',
      );
      const [row] = rows<BufferRow>(db, 'SELECT * FROM exps');
      // Unrewarded: the group advantage counts a missing reward as 0.
      assert.deepEqual([row.msg_id, row.reward, row.task_id], [r.json.id, 0, '']);
      const m = await call(`${s.url}/metrics`, 'GET');
      assert.ok(!('rollout/ready_experience_count' in m.json));
      assert.ok(m.json.explore_step_num >= 1);
    } finally {
      s.controller.abort();
      assert.equal((await s.done).status, 'stopped');
    }
  });
});

describe('serve mode that cannot listen', () => {
  test('a port in use fails the run, naming the address and the key', async () => {
    const job = tinyJob(15);
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as AddressInfo).port;
    try {
      const config = serveConfig(job, 'busy', SERVE.replace('proxy_port: 0', `proxy_port: ${port}`));
      const r = await runJob(config, { backend: 'wasm' });
      assert.equal(r.status, 'failed');
      assert.match(
        r.error ?? '',
        new RegExp(
          `cannot listen on 127\\.0\\.0\\.1:${port} \\(explorer\\.listen_address, explorer\\.proxy_port\\): .*EADDRINUSE`,
        ),
      );
      const writers = rows<{ finished_at: string | null }>(
        join(job.dir, 'buffer.db'),
        'SELECT finished_at FROM exps__writers',
      );
      assert.ok(
        writers.every((w) => w.finished_at !== null),
        'the buffer writer finished',
      );
    } finally {
      blocker.close();
    }
  });
});

/** Requests queued at the service when it is stopped. */
const QUEUED = 40;

describe('serve mode as a process', () => {
  test('SIGTERM closes the service and exits with done: stopped; the requests still queued are refused, not sampled', async () => {
    const job = tinyJob(14);
    const run = start(serveConfig(job, 'proc'));
    const e = await run.waitFor((x) => x.type === 'log' && x.message.startsWith('Starting Trinity Service on'));
    const url = (e as { message: string }).message.replace('Starting Trinity Service on ', '');
    assert.equal((await chat(url)).status, 200);
    // Requests at once queue behind each other (one is sampled at a time); the signal goes as the first comes back,
    // from its callback: a test loop polling for it lets a loaded machine's service sample several more meanwhile,
    // whose answers would then count as sampled after the signal.
    const answers: { status: number; at: number }[] = [];
    let sent = 0;
    const answered = (status: number) => {
      answers.push({ status, at: Date.now() });
      if (sent) return;
      sent = Date.now();
      run.kill('SIGTERM');
    };
    const asked = Array.from({ length: QUEUED }, () =>
      chat(url, { n: 16 }).then(
        (r) => answered(r.status),
        () => answered(0),
      ),
    );
    const { code, at } = await run.exit;
    await Promise.all(asked);
    const answeredAfter = answers.filter((a) => a.status === 200 && a.at > sent).length;
    const seen = `exit ${at - sent} ms after SIGTERM; status@ms ${answers.map((a) => `${a.status}@${a.at - sent}`).join(' ')}`;
    // What was sampled before the handler ran is answered: the request in progress, and on a loaded machine the few
    // the service finished while the signal was on its way (a request here takes a millisecond or two), whose answers
    // this side may read after it sent the signal. The queue behind them is refused, not sampled.
    assert.ok(answeredAfter <= QUEUED / 4, `${answeredAfter} of ${QUEUED} requests answered after SIGTERM (${seen})`);
    assert.ok(
      answers.filter((a) => a.status === 503 || a.status === 0).length >= (QUEUED * 3) / 4 - 1,
      `the queued requests are refused: the service is shutting down (${seen})`,
    );
    assert.equal(code, 130);
    assert.deepEqual(run.events[run.events.length - 1], { type: 'done', status: 'stopped' });
    await assert.rejects(fetch(`${url}/health`));
  });
});
