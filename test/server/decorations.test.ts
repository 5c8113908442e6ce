/** Inlay hints, document links and semantic tokens through the language server. */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { DocumentLink, InlayHint, SemanticTokens } from 'vscode-languageserver-types';
import { URI } from 'vscode-uri';
import { startInProcess, type TestClient } from '../helpers/lsp';

const CONFIG = `mode: both
algorithm:
  algorithm_type: grpo
  repeat_times: 8
model:
  model_path: \${oc.env:TRINITY_MODEL_PATH,Qwen/Qwen2.5-0.5B}
  max_prompt_tokens: 256
  max_response_tokens: 512
cluster:
  node_num: 1
  gpu_per_node: 2
buffer:
  batch_size: 4
  explorer_input:
    taskset:
      path: ./data/train.jsonl
`;

describe('editor decorations', () => {
  let c: TestClient;
  let dir: string;
  let uri: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tw-deco-'));
    mkdirSync(join(dir, 'data'));
    writeFileSync(join(dir, 'data', 'train.jsonl'), '{"prompt": "1+1", "response": "2"}\n');
    writeFileSync(join(dir, 'run.yaml'), CONFIG);
    uri = URI.file(join(dir, 'run.yaml')).toString();
    c = await startInProcess({ rootUri: URI.file(dir).toString() });
    await c.open(uri, CONFIG);
  });
  after(() => c.close());

  test('inlay hints show what Trinity fills in, on the line that drives it', async () => {
    const hints = await c.request<InlayHint[]>('textDocument/inlayHint', {
      textDocument: { uri },
      range: { start: { line: 0, character: 0 }, end: { line: 20, character: 0 } },
    });
    const at = (line: number) => hints.filter((h) => h.position.line === line).map((h) => h.label);
    assert.ok(at(12).includes('→ train_batch_size: 32'), JSON.stringify(hints.map((h) => [h.position.line, h.label])));
    assert.ok(at(7).includes('→ max_model_len: 768'));
    assert.ok(hints.every((h) => typeof h.tooltip === 'string' && h.tooltip.length > 0));
  });

  test('inlay hints can be turned off', async () => {
    const off = await startInProcess({ settings: { inlayHints: false } });
    try {
      await off.open('file:///x/run.yaml', CONFIG);
      const hints = await off.request<InlayHint[]>('textDocument/inlayHint', {
        textDocument: { uri: 'file:///x/run.yaml' },
        range: { start: { line: 0, character: 0 }, end: { line: 20, character: 0 } },
      });
      assert.deepEqual(hints, []);
    } finally {
      await off.close();
    }
  });

  test('local dataset paths are links to the files', async () => {
    const links = await c.request<DocumentLink[]>('textDocument/documentLink', { textDocument: { uri } });
    assert.equal(links.length, 1);
    assert.equal(links[0].target, URI.file(join(dir, 'data', 'train.jsonl')).toString());
    assert.equal(links[0].range.start.line, 15);
  });

  test('interpolations are highlighted: braces, resolver and path', async () => {
    const tokens = await c.request<SemanticTokens>('textDocument/semanticTokens/full', { textDocument: { uri } });
    // One interpolation: `${` (macro), `oc.env` (function), `}` (macro) -> three tokens of five numbers.
    assert.equal(tokens.data.length, 15);
    assert.deepEqual(tokens.data.slice(0, 5), [5, 14, 2, 0, 0]);
    assert.deepEqual(tokens.data.slice(5, 10), [0, 2, 6, 1, 0]);
  });
});
