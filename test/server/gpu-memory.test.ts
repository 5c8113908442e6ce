/**
 * The GPU memory estimate through a real LSP connection: the inlay hints at `trainer` and `explorer.rollout_model`,
 * the hover's term-by-term breakdown, Trinity's warning as a diagnostic, and a quick fix from its suggestions that
 * makes the warning go away; `trinityWorkbench.gpu` changes the card; Show Resolved Config carries the estimate.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { TextDocument } from 'vscode-languageserver-textdocument';
import type { CodeAction, Diagnostic, Hover, InlayHint, TextEdit } from 'vscode-languageserver-types';
import { RESOLVED_CONFIG_REQUEST } from '../../server/lsp-messages';
import type { ResolvedConfigResponse } from '../../server/service/resolved-config';
import { PPO_7B_CONFIG as CONFIG } from '../helpers/gpu-memory-config';
import { startInProcess, type TestClient } from '../helpers/lsp';

const lineOf = (text: string, needle: string) => text.slice(0, text.indexOf(needle)).split('\n').length - 1;

async function hints(c: TestClient, uri: string, text: string): Promise<InlayHint[]> {
  return c.request<InlayHint[]>('textDocument/inlayHint', {
    textDocument: { uri },
    range: { start: { line: 0, character: 0 }, end: { line: text.split('\n').length, character: 0 } },
  });
}

const label = (h: InlayHint) => (typeof h.label === 'string' ? h.label : h.label.map((p) => p.value).join(''));

describe('GPU memory in the editor', () => {
  let c: TestClient;
  before(async () => {
    c = await startInProcess();
  });
  after(() => c.close());

  test("hint at trainer and at rollout_model, hover breakdown, Trinity's warning and its quick fix", async () => {
    const uri = 'file:///w/gpu.yaml';
    const diagnostics: Diagnostic[] = await c.open(uri, CONFIG);
    const warnings = diagnostics.filter((d) => d.code === 'TRN273');
    assert.equal(warnings.length, 1, JSON.stringify(diagnostics.map((d) => d.message)));
    assert.equal(warnings[0].range.start.line, lineOf(CONFIG, 'trainer:'));
    assert.match(
      warnings[0].message,
      /^actor ≈ \d+\.\d GiB of 79\.1 peak, \d+ % \(H100-80G\): above Trinity's limit of 80 %/,
    );

    const all = await hints(c, uri, CONFIG);
    const trainer = all.find((h) => h.position.line === lineOf(CONFIG, 'trainer:'));
    assert.match(label(trainer!), /^actor ≈ \d+\.\d GiB of 79\.1 peak, \d+ % · critic ≈ \d+\.\d GiB of 79\.1 peak/);
    const rollout = all.find((h) => h.position.line === lineOf(CONFIG, '  rollout_model:'));
    assert.match(label(rollout!), /^vLLM: weights 14\.2 GiB\/GPU · KV ≤ \d+\.\d GiB · ≤ \d+ × 8192-token seqs$/);

    const hover = await c.request<Hover>('textDocument/hover', {
      textDocument: { uri },
      position: { line: lineOf(CONFIG, 'trainer:'), character: 2 },
    });
    const md = (hover.contents as { value: string }).value;
    for (const term of ['weights: 2 × 1 B', 'optimizer states: 12 B/param', 'gradients', 'activations', '**peak**'])
      assert.ok(md.includes(term), `hover lacks "${term}":\n${md}`);
    assert.match(md, /MEMORY OVERUSE WARNING[\s\S]*To bypass this check, set `ignore_validator_suggestions: true`/);

    const actions = await c.request<CodeAction[]>('textDocument/codeAction', {
      textDocument: { uri },
      range: warnings[0].range,
      context: { diagnostics: [warnings[0]] },
    });
    const titles = actions.map((a) => a.title);
    assert.ok(titles.includes("Bypass Trinity's memory check"), titles.join(' | '));
    const offload = actions.find((a) => a.title === "Turn on FSDP2's CPU offload policy");
    assert.ok(offload, titles.join(' | '));
    const doc = TextDocument.create(uri, 'yaml', 1, CONFIG);
    const fixed = TextDocument.applyEdits(doc, offload.edit!.changes![uri] as TextEdit[]);
    assert.match(fixed, /trainer:\n {2}save_interval: 100\n {2}offload_policy: true\n/);
    const after = await c.change(uri, fixed);
    assert.deepEqual(
      after.filter((d) => d.code === 'TRN273' || d.code === 'TRN274').map((d) => d.message),
      [],
    );

    const resolved = await c.request<ResolvedConfigResponse>(RESOLVED_CONFIG_REQUEST, { uri });
    assert.match(resolved.runs[0].yaml, /^# GPU memory \(estimates, not measurements\):\n# {3}GPU: H100-80G/);
    assert.equal(resolved.runs[0].gpuMemory?.trainer.status, 'estimated');
  });

  test('trinityWorkbench.gpu picks the card: on an H200 the same config is within the limit', async () => {
    const h200 = await startInProcess({ settings: { gpu: 'H200-141G' } });
    try {
      const uri = 'file:///w/gpu-h200.yaml';
      const diagnostics = await h200.open(uri, CONFIG);
      assert.deepEqual(
        diagnostics.filter((d) => d.code === 'TRN273' || d.code === 'TRN274'),
        [],
      );
      const trainer = (await hints(h200, uri, CONFIG)).find((h) => h.position.line === lineOf(CONFIG, 'trainer:'));
      assert.match(label(trainer!), /of 139\.8 peak/);
    } finally {
      await h200.close();
    }
  });

  test('a changed trinityWorkbench.gpu asks the editor for the hints again, which then name the new card', async () => {
    const configuration: Record<string, unknown> = { gpu: 'H100-80G' };
    const c2 = await startInProcess({ configuration, inlayHintRefresh: true });
    try {
      let refreshes = 0;
      c2.conn.onRequest('workspace/inlayHint/refresh', () => {
        refreshes++;
        return null;
      });
      const uri = 'file:///w/gpu-change.yaml';
      await c2.open(uri, CONFIG);
      const trainer = async () =>
        label((await hints(c2, uri, CONFIG)).find((h) => h.position.line === lineOf(CONFIG, 'trainer:'))!);
      assert.match(await trainer(), /of 79\.1 peak/);
      const before = refreshes;
      configuration.gpu = 'H200-141G';
      await c2.conn.sendNotification('workspace/didChangeConfiguration', { settings: null });
      const t0 = Date.now();
      while (refreshes === before && Date.now() - t0 < 5000) await new Promise((r) => setTimeout(r, 20));
      assert.ok(refreshes > before, 'no workspace/inlayHint/refresh after the setting changed');
      assert.match(await trainer(), /of 139\.8 peak/);
    } finally {
      await c2.close();
    }
  });
});
