/**
 * Downloading from a Hugging Face-style hub (a real HTTP server on localhost standing in for HF_ENDPOINT): only when
 * allowed, into the cache layout huggingface_hub reads, complete files only, and the model then loads from there.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { initModel, saveModel, loadModel } from '../../../runtime/engine/lm/checkpoint';
import { newModelConfigJson, parseModelConfig } from '../../../runtime/engine/lm/config';
import { ensureModelDir } from '../../../runtime/engine/lm/hub-download';
import { buildByteTokenizer, tokenizerFromJson } from '../../../runtime/engine/tokenizer';

const SHA = '0123456789abcdef0123456789abcdef01234567';
let server: Server;
let endpoint: string;
let source: string;
const requests: string[] = [];
let truncate = false;

before(async () => {
  await tf.setBackend('cpu');
  source = join(mkdtempSync(join(tmpdir(), 'twb-hub-')), 'model');
  const tokenizer = tokenizerFromJson(buildByteTokenizer());
  const m = initModel(
    parseModelConfig(
      newModelConfigJson({
        family: 'qwen2',
        layers: 1,
        hidden: 16,
        heads: 4,
        vocabSize: tokenizer.vocabSize,
        maxPositions: 16,
        eosTokenIds: [...tokenizer.eosTokenIds],
      }),
    ),
    3,
  );
  await saveModel(m, source, { tokenizer, files: { 'README.md': '# not needed' } });
  m.dispose();
  server = createServer((req, res) => {
    requests.push(req.url ?? '');
    if (req.url === '/api/models/acme/tiny/revision/main') {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ sha: SHA, siblings: readdirSync(source).map((f) => ({ rfilename: f })) }));
      return;
    }
    const m = /^\/acme\/tiny\/resolve\/([0-9a-f]+)\/(.+)$/.exec(req.url ?? '');
    if (m && m[1] === SHA && existsSync(join(source, m[2]))) {
      const body = readFileSync(join(source, m[2]));
      res.setHeader('content-length', String(body.length));
      res.end(truncate && m[2] === 'model.safetensors' ? body.subarray(0, 100) : body);
      if (truncate && m[2] === 'model.safetensors') res.socket?.destroy();
      return;
    }
    res.statusCode = 404;
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const addr = server.address() as { port: number };
  endpoint = `http://127.0.0.1:${addr.port}`;
});

after(() => server.close());

describe('hub downloads', () => {
  test('without permission a missing hub id is an error that says how to allow it, and nothing is fetched', async () => {
    const home = mkdtempSync(join(tmpdir(), 'twb-hf-'));
    requests.length = 0;
    await assert.rejects(
      ensureModelDir('acme/tiny', { env: { HF_HOME: home, HF_ENDPOINT: endpoint } }),
      /TRINITY_WORKBENCH_ALLOW_DOWNLOAD=1/,
    );
    await assert.rejects(
      ensureModelDir('acme/tiny', {
        env: { HF_HOME: home, HF_ENDPOINT: endpoint, TRINITY_WORKBENCH_ALLOW_DOWNLOAD: '1', HF_HUB_OFFLINE: '1' },
      }),
      /HF_HUB_OFFLINE/,
    );
    assert.deepEqual(requests, []);
  });

  test('an allowed download lands in the HF cache layout with progress, loads, and is not fetched again', async () => {
    const home = mkdtempSync(join(tmpdir(), 'twb-hf-'));
    const env = { HF_HOME: home, HF_ENDPOINT: endpoint, TRINITY_WORKBENCH_ALLOW_DOWNLOAD: '1' };
    const progress: string[] = [];
    const dir = await ensureModelDir('acme/tiny', { env, log: (m) => progress.push(m) });
    assert.equal(dir, join(home, 'hub', 'models--acme--tiny', 'snapshots', SHA));
    assert.equal(readFileSync(join(home, 'hub', 'models--acme--tiny', 'refs', 'main'), 'utf8'), SHA);
    assert.ok(!existsSync(join(dir, 'README.md')), 'only the files a model needs are fetched');
    assert.ok(
      progress.some((p) => /downloading acme\/tiny\/model\.safetensors: 100% of [\d.]+ MB/.test(p)),
      progress.join('\n'),
    );
    const a = loadModel(dir);
    const b = loadModel(source);
    assert.deepEqual(a.variables()[0].dataSync(), b.variables()[0].dataSync());
    a.dispose();
    b.dispose();
    requests.length = 0;
    assert.equal(await ensureModelDir('acme/tiny', { env }), dir);
    assert.deepEqual(requests, [], 'cached: no request');
  });

  test('a download cut short leaves no file that looks complete', async () => {
    const home = mkdtempSync(join(tmpdir(), 'twb-hf-'));
    truncate = true;
    try {
      requests.length = 0;
      await assert.rejects(
        ensureModelDir('acme/tiny', {
          env: { HF_HOME: home, HF_ENDPOINT: endpoint, TRINITY_WORKBENCH_ALLOW_DOWNLOAD: '1' },
        }),
        /model\.safetensors|terminated|ended after/,
      );
      assert.ok(requests.includes(`/acme/tiny/resolve/${SHA}/model.safetensors`), 'the truncated file was requested');
    } finally {
      truncate = false;
    }
    const snapshot = join(home, 'hub', 'models--acme--tiny', 'snapshots', SHA);
    assert.ok(!existsSync(join(snapshot, 'model.safetensors')));
    assert.ok(!readdirSync(snapshot).some((f) => f.includes('incomplete')));
  });
});
