/**
 * Agent run health in the editor over a real LSP connection: the recorded FrozenLake run whose episodes end on the
 * token budget (test/fixtures/run-health/lake-budget) puts TRN407 on `max_model_len` and TRN408 on the taskset's
 * `agent_max_steps`, and the hover of `agent_max_steps` shows the agent metrics it drives. The recorded run whose every
 * answer names no move (lake-invalid, with its monitor/rollouts.jsonl) puts TRN409 on `model_path`; (its threshold,
 * `trinityWorkbench.runHealth.invalidEndedShare`, is moved in test/runtime/config/run-health.test.ts).
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import type { Hover } from 'vscode-languageserver-types';
import { startInProcess, type TestClient } from '../helpers/lsp';

const FIXTURE = 'test/fixtures/run-health/lake-budget';
const CONFIG = readFileSync(join(FIXTURE, 'config.trinity.yaml'), 'utf8');
const lineOf = (key: string) => CONFIG.split('\n').findIndex((l) => l.trimStart().startsWith(`${key}:`));

describe('agent run health over LSP', () => {
  let dir: string;
  let c: TestClient;
  let uri: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agent-health-'));
    const monitor = join(dir, 'checkpoints', 'health', 'lake-budget', 'monitor');
    mkdirSync(monitor, { recursive: true });
    copyFileSync(join(FIXTURE, 'metrics.jsonl'), join(monitor, 'metrics.jsonl'));
    writeFileSync(join(dir, 'config.trinity.yaml'), CONFIG);
    uri = pathToFileURL(join(dir, 'config.trinity.yaml')).toString();
    c = await startInProcess({ rootUri: pathToFileURL(dir).toString() });
  });
  after(async () => {
    await c.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('budget-ended episodes on max_model_len, one outcome per group on agent_max_steps', async () => {
    const ds = await c.open(uri, CONFIG);
    const at = (code: string) => ds.filter((d) => d.code === code).map((d) => d.range.start.line);
    assert.deepEqual(at('TRN407'), [lineOf('max_model_len')]);
    assert.deepEqual(at('TRN408'), [lineOf('agent_max_steps')]);
    const cut = ds.find((d) => d.code === 'TRN407')!;
    assert.match(cut.message, /At least 60% of episodes .* max_model_len \(2048\)/);
  });

  test('the hover of agent_max_steps shows the episode metrics of the run', async () => {
    const line = lineOf('agent_max_steps');
    const h = await c.request<Hover>('textDocument/hover', {
      textDocument: { uri },
      position: { line, character: CONFIG.split('\n')[line].indexOf('agent_max_steps') + 2 },
    });
    const md = (h.contents as { value: string }).value;
    assert.match(md, /Turns the model gets per episode/);
    assert.match(md, /`rollout\/env_steps\/mean` .* last 1\.75 \(step 6\)/);
    assert.match(md, /`rollout\/env_done\/mean`/);
  });
});

describe('agent episodes that end on an invalid action, over LSP', () => {
  const FIX = 'test/fixtures/run-health/lake-invalid';
  const TEXT = readFileSync(join(FIX, 'config.trinity.yaml'), 'utf8');
  const line = (key: string) => TEXT.split('\n').findIndex((l) => l.trimStart().startsWith(`${key}:`));
  let dir: string;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'agent-invalid-'));
    const monitor = join(dir, 'checkpoints', 'health', 'lake-invalid', 'monitor');
    mkdirSync(monitor, { recursive: true });
    for (const f of ['metrics.jsonl', 'rollouts.jsonl']) copyFileSync(join(FIX, f), join(monitor, f));
    writeFileSync(join(dir, 'config.trinity.yaml'), TEXT);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  async function diagnostics() {
    const client = await startInProcess({ rootUri: pathToFileURL(dir).toString() });
    try {
      return await client.open(pathToFileURL(join(dir, 'config.trinity.yaml')).toString(), TEXT);
    } finally {
      await client.close();
    }
  }

  test('TRN409 on model_path, counted from the run’s rollout records', async () => {
    const ds = await diagnostics();
    const invalid = ds.filter((d) => d.code === 'TRN409');
    assert.deepEqual(
      invalid.map((d) => d.range.start.line),
      [line('model_path')],
    );
    assert.match(
      invalid[0].message,
      /^20 of the 20 recorded episodes over the last 5 steps \(100%\) ended on an invalid action/,
    );
    // The same run without the records' invalidActions (as an older runtime wrote them): no verdict.
    const monitor = join(dir, 'checkpoints', 'health', 'lake-invalid', 'monitor');
    const lines = readFileSync(join(monitor, 'rollouts.jsonl'), 'utf8').trim().split('\n');
    const older = lines.map((l) => {
      const o = JSON.parse(l) as { samples: Record<string, unknown>[] };
      for (const r of o.samples) delete r.invalidActions;
      return JSON.stringify(o);
    });
    writeFileSync(join(monitor, 'rollouts.jsonl'), older.join('\n') + '\n');
    const without = await diagnostics();
    assert.equal(without.filter((d) => d.code === 'TRN409').length, 0);
    assert.ok(without.some((d) => d.code === 'TRN408'));
  });
});
