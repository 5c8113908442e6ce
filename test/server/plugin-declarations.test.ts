/**
 * A JavaScript plugin's `workflowReads` declaration in the editor, over a real LSP connection with the plugin folder
 * in trinityWorkbench.pluginDirs: the shipped agents-plugin example (copied, so its data can be rewritten) opens with
 * no warning once its dataset pass is done; a row without a declared column gets TRN317 naming the declaration, and
 * the fixed row clears it with no edit; a declared `workflow_args` key has hover, completion and did-you-mean.
 * Without a declaration, the prompt/response columns are still asked for and the message says how to declare them.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, test } from 'node:test';
import type { CompletionList, Diagnostic, Hover } from 'vscode-languageserver-types';
import { startInProcess, type TestClient } from '../helpers/lsp';

const EXAMPLE = resolve(__dirname, '..', '..', 'examples', 'agents-plugin');
const codes = (ds: Diagnostic[]) => ds.map((d) => `${d.code}@${d.range.start.line}: ${d.message}`);
/** Errors and warnings (LSP severity 1 and 2). */
const problems = (ds: Diagnostic[]) => ds.filter((d) => (d.severity ?? 1) <= 2);

describe('plugin workflowReads declarations (language server)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tw-lsp-plugin-decl-'));
  cpSync(EXAMPLE, dir, { recursive: true });
  const undeclared = mkdtempSync(join(tmpdir(), 'tw-lsp-plugin-undecl-'));
  // The example's workflow without its declaration, reading ctx.task.taskDesc: the inference asks for the prompt.
  writeFileSync(
    join(undeclared, 'reader.mjs'),
    'export const workflows = { reader_lake: (ctx) => ({ run: async () => ctx.task.taskDesc }) };\n',
  );
  const file = join(dir, 'step-wise-lake.trinity.yaml');
  const uri = pathToFileURL(file).href;
  const text = readFileSync(file, 'utf8');
  const data = join(dir, 'data', 'lake.jsonl');
  const rows = readFileSync(data, 'utf8');
  let c: TestClient;
  before(async () => {
    c = await startInProcess({ configuration: { pluginDirs: [join(dir, 'plugins'), undeclared] } });
  });
  after(async () => {
    await c.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(undeclared, { recursive: true, force: true });
  });

  test('the example opens with no warning; a row without a declared column gets TRN317 until it is fixed', async () => {
    assert.deepEqual(codes(problems(await c.open(uri, text))), []);
    // The dataset pass publishes only what it changes: a row without `size` shows it ran with the declaration.
    const flagged = c.nextDiagnostics(uri, (ds) => ds.some((d) => d.code === 'TRN317'), 15_000);
    writeFileSync(data, rows.replace('"size": 3, ', ''));
    const ds = await flagged;
    assert.deepEqual(
      problems(ds).map((d) => d.code),
      ['TRN317'],
      codes(ds).join('\n'),
    );
    const [d] = problems(ds);
    assert.match(
      d.message,
      /^1 of the first 3 rows of `buffer\.explorer_input\.taskset\.path` lack `size`, which `step_wise_lake` reads from each task row \(declared in plugins\/step-wise-lake\.mjs\); such a task's `ctx\.task\.raw\.size` is undefined\.$/,
    );
    assert.equal(d.severity, 2);
    assert.equal(text.split('\n')[d.range.start.line].trim(), 'path: data/lake.jsonl');
    // The data fixed on disk: the same pass, with nothing to warn about (no TRN305 for prompt or response).
    const cleared = c.nextDiagnostics(uri, (ds) => !ds.some((x) => x.code === 'TRN317'), 15_000);
    writeFileSync(data, rows);
    assert.deepEqual(codes(problems(await cleared)), []);
  });

  test('declared workflow_args: hover, completion, and a misspelt key flagged with its fix', async () => {
    const withArgs = text.replace(
      '        max_tokens: 8\n',
      '        max_tokens: 8\n      workflow_args:\n        max_step: 3\n',
    );
    const argsUri = pathToFileURL(join(dir, 'args.trinity.yaml')).href;
    const ds = await c.open(argsUri, withArgs);
    const flagged = ds.filter((d) => d.code === 'TRN316');
    assert.equal(flagged.length, 1, codes(ds).join('\n'));
    assert.match(
      flagged[0].message,
      /`step_wise_lake` does not read `workflow_args\.max_step`: its plugin declares what it reads \(`workflowReads` in plugins\/step-wise-lake\.mjs\), and not this\. Did you mean `max_steps`\? It reads `max_steps` \(declared in plugins\/step-wise-lake\.mjs\)/,
    );
    const lines = withArgs.split('\n');
    const argLine = lines.findIndex((l) => l.includes('max_step: 3'));
    assert.equal(flagged[0].range.start.line, argLine);

    const fixed = withArgs.replace('max_step: 3', 'max_steps: 0');
    const bad = await c.change(argsUri, fixed);
    assert.ok(!bad.some((d) => d.code === 'TRN316'), codes(bad).join('\n'));
    const low = bad.filter((d) => d.code === 'TRN313');
    assert.equal(low.length, 1, codes(bad).join('\n'));
    assert.match(
      low[0].message,
      /^`workflow_args\.max_steps` is 0, below 1: in `step_wise_lake` the plugin declares an integer ≥ 1 \(`workflowReads` in plugins\/step-wise-lake\.mjs\)\.$/,
    );

    const hover = await c.request<Hover>('textDocument/hover', {
      textDocument: { uri: argsUri },
      position: { line: argLine, character: 10 },
    });
    const value = (hover.contents as { value: string }).value;
    assert.match(value, /\*\*`max_steps`\*\* · integer ≥ 1/);
    assert.match(value, /Model calls \(moves\) per episode\./);
    assert.match(value, /Default: `2`\. Read by `step_wise_lake` \(declared in plugins\/step-wise-lake\.mjs\)/);

    const empty = withArgs.replace('        max_step: 3\n', '        \n');
    await c.change(argsUri, empty);
    const list = await c.request<CompletionList>('textDocument/completion', {
      textDocument: { uri: argsUri },
      position: { line: argLine, character: 8 },
    });
    const items = (Array.isArray(list) ? list : list.items).filter((i) => i.label === 'max_steps');
    assert.equal(items.length, 1);
    assert.equal(items[0].detail, 'integer ≥ 1 = 2');
  });

  test('an undeclared plugin workflow: the prompt column it names is asked for, and the message says how to declare', async () => {
    const readerUri = pathToFileURL(join(dir, 'reader.trinity.yaml')).href;
    const found = c.nextDiagnostics(readerUri, (ds) => ds.some((d) => d.code === 'TRN305'), 15_000);
    await c.open(
      readerUri,
      text.replace('default_workflow_type: step_wise_lake', 'default_workflow_type: reader_lake'),
    );
    const ds = (await found).filter((d) => d.code === 'TRN305');
    assert.equal(ds.length, 1, codes(ds).join('\n'));
    assert.match(
      ds[0].message,
      /`buffer\.explorer_input\.taskset\.format\.prompt_key` is `prompt`, .*every task would get an empty prompt if `reader_lake` reads it\. A JavaScript plugin declares the columns its workflow reads in `export const workflowReads` \(docs\/runtime\.md, "Plugins"\)/,
    );
    assert.equal(ds[0].severity, 2);
  });
});
