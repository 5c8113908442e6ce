/** TRN263: a serve config that writes a non-loopback `explorer.listen_address` is warned, at that key. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { lineColumn } from '../../../runtime/config/load/load-config';
import { checkConfig, writtenIn } from '../../../runtime/config/check-config';

const serve = (release: string, explorer: string, mode = 'serve') => `# trinity-version: ${release}
mode: ${mode}
algorithm:
  algorithm_type: grpo
model:
  model_path: m
buffer:
  train_batch_size: 2
  trainer_input:
    experience_buffer:
      name: exps
      storage_type: sql
      path: sqlite:///buffer.db
explorer:
  proxy_port: 8010
${explorer}`;

async function trn263(text: string) {
  const r = await checkConfig(text, { datasets: false });
  return r.diagnostics
    .filter((d) => d.code === 'TRN263')
    .map((d) => ({
      line: lineColumn(r.loaded.source, d.range[0]).line,
      severity: d.severity,
      path: d.data?.path,
      message: d.message,
    }));
}

describe('TRN263: serve exposed to the network', () => {
  test('0.0.0.0 written in a serve config: a warning on listen_address saying what is exposed and how the key works', async () => {
    const found = await trn263(serve('main', '  listen_address: 0.0.0.0\n'));
    assert.equal(found.length, 1, JSON.stringify(found));
    const [d] = found;
    assert.deepEqual([d.line, d.severity, d.path], [16, 'warning', ['explorer', 'listen_address']]);
    assert.match(d.message, /`explorer\.listen_address` `0\.0\.0\.0` exposes/);
    assert.match(d.message, /`\/commit`, which write rewarded experiences/);
    assert.match(d.message, /Authorization: Bearer <key>.*TRINITY_WORKBENCH_API_KEY.*_server_url\.txt.*0600/);
  });

  test('releases before v0.4.0 have no /commit: every response reaches the buffer', async () => {
    const [d] = await trn263(serve('v0.3.2', '  listen_address: 192.168.1.20\n').replace('proxy_port', 'api_port'));
    assert.match(d.message, /`192\.168\.1\.20`.*every response it serves is written into the experience buffer/);
  });

  test('nothing for loopback, for an address not written, or outside serve mode', async () => {
    for (const address of ['127.0.0.1', 'localhost', '::1', '"[::1]"', '127.0.1.1']) {
      assert.deepEqual(await trn263(serve('main', `  listen_address: ${address}\n`)), [], address);
    }
    assert.deepEqual(await trn263(serve('main', '')), []);
    assert.deepEqual(await trn263(serve('main', '  listen_address: 0.0.0.0\n', 'train')), []);
    assert.deepEqual(await trn263(serve('v0.3.0', '')), []);
  });

  test('writtenIn: the runtime learns whether the address was written', async () => {
    const written = await checkConfig(serve('main', '  listen_address: 0.0.0.0\n'), { datasets: false });
    const defaulted = await checkConfig(serve('main', ''), { datasets: false });
    assert.equal(writtenIn(written, 'explorer.listen_address'), true);
    assert.equal(writtenIn(defaulted, 'explorer.listen_address'), false);
    assert.equal(
      defaulted.runs[0].resolved.explorer.listen_address,
      '0.0.0.0',
      "the resolved config keeps Trinity's default",
    );
  });
});
