/**
 * TRN321 in the editor: the first prompt of a FrozenLake taskset, counted with the model folder's own tokenizer, is
 * checked by the language server after the document's other diagnostics are out (never in the validation an edit
 * waits for), published at the key the CLI names with the CLI's message; it clears when the budget is raised, with
 * no file change, and comes back when the dataset file is rewritten with a longer first prompt (a bigger map), with
 * no file event. TRN322 (the turns that fit after the first prompt) comes the same way. A single-turn workflow's
 * prompts are counted on every row, not the first 20 (the worker thread counts them).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, test } from 'node:test';
import type { Diagnostic } from 'vscode-languageserver-types';
import { checkConfig } from '../../runtime/config/check-config';
import {
  budgetConfig,
  cliCheckHost,
  firstPromptFixture,
  frozenLakeBudgetConfig,
} from '../helpers/first-prompt-fixture';
import { startInProcess, type TestClient } from '../helpers/lsp';

const SMALL = { seed: 3, size: 4, p: 0.8 };
const BIG = { seed: 3, size: 8, p: 0.8 };
const { dir, dataFile, tokens, turnTokens } = firstPromptFixture('twb-lsp-episode-budget-', SMALL, 8192);
const N = tokens(SMALL);
const N_BIG = tokens(BIG);

const config = (maxPromptTokens: number) =>
  frozenLakeBudgetConfig(`  max_model_len: 8192\n  max_prompt_tokens: ${maxPromptTokens}\n  max_response_tokens: 64\n`);

const file = join(dir, 'budget.trinity.yaml');
const uri = pathToFileURL(file).toString();
const budget = (ds: Diagnostic[]) => ds.filter((d) => d.code === 'TRN321');

/** What `trinity-workbench check` reports for the text (its host, as runtime/cli/check.ts gives it). */
async function cliFindings(text: string) {
  const r = await checkConfig(text, { env: {}, host: cliCheckHost(dir) });
  return r.diagnostics.filter((d) => d.code === 'TRN321');
}

let c: TestClient;
before(async () => {
  c = await startInProcess({ rootUri: pathToFileURL(dir).toString() });
});
after(() => c.close());

test('the bigger map makes a longer first prompt (the test needs both sides of the budget)', () => {
  assert.ok(N > 300 && N_BIG > N + 50, `N = ${N}, N_BIG = ${N_BIG}`);
});

test('over the budget: TRN321 follows the first publish, at max_prompt_tokens, with the CLI message', async () => {
  const text = config(N - 1);
  const found = c.nextDiagnostics(uri, (ds) => budget(ds).length > 0, 10_000);
  // The validation an edit waits for does not count prompts: the finding comes in a later publish.
  assert.deepEqual(budget(await c.open(uri, text)), []);
  const [d] = budget(await found);
  const [cli] = await cliFindings(text);
  assert.ok(cli, 'the CLI reports TRN321 for this config');
  assert.equal(d.message, cli.message);
  assert.match(
    d.message,
    new RegExp(`is ${N} tokens under model's chat template, more than \`max_prompt_tokens\` ${N - 1}\\.`),
  );
  const lines = text.split('\n');
  assert.equal(lines[d.range.start.line].slice(d.range.start.character, d.range.end.character), 'max_prompt_tokens');
  assert.equal(d.severity, 2);
});

test('raising max_prompt_tokens clears it with no file change; a longer first prompt on disk brings it back', async () => {
  const cleared = c.nextDiagnostics(uri, (ds) => budget(ds).length === 0, 10_000);
  await c.change(uri, config(N));
  await cleared;

  // Rewritten in place: VS Code reports files that come or go, not changes of content (the client's watcher leaves
  // those out), so the server sees it by itself.
  const back = c.nextDiagnostics(uri, (ds) => budget(ds).length > 0, 10_000);
  writeFileSync(dataFile, JSON.stringify(BIG) + '\n');
  const [d] = budget(await back);
  assert.match(
    d.message,
    new RegExp(`is ${N_BIG} tokens under model's chat template, more than \`max_prompt_tokens\` ${N}\\.`),
  );
  assert.equal(d.message, (await cliFindings(config(N)))[0]?.message);
});

test('an edit elsewhere keeps the finding where it is, and a disable comment silences it', async () => {
  const text = config(N);
  const shifted = `# a comment line\n${text}`;
  const ds = await c.change(uri, shifted);
  const [d] = budget(ds);
  assert.ok(d, 'still shown on the edited version');
  const lines = shifted.split('\n');
  assert.equal(lines[d.range.start.line].slice(d.range.start.character, d.range.end.character), 'max_prompt_tokens');
  const silenced = shifted.replace(
    `  max_prompt_tokens: ${N}`,
    `  # trinity-disable-next-line TRN321\n  max_prompt_tokens: ${N}`,
  );
  assert.deepEqual(budget(await c.change(uri, silenced)), []);
});

test('TRN322 through the server: the turns that fit max_model_len, at that key, with the CLI message', async () => {
  writeFileSync(dataFile, JSON.stringify(SMALL) + '\n');
  const [l0, , l2] = turnTokens(SMALL, { agent_max_steps: 3 }, 3);
  const text = frozenLakeBudgetConfig(
    `  max_model_len: ${l2}\n  max_prompt_tokens: ${l0}\n  max_response_tokens: ${l2 - l0}\n`,
    { agent_max_steps: 3 },
  );
  const turnsUri = pathToFileURL(join(dir, 'turns.trinity.yaml')).toString();
  const found = c.nextDiagnostics(turnsUri, (ds) => ds.some((d) => d.code === 'TRN322'), 10_000);
  await c.open(turnsUri, text);
  const [d] = (await found).filter((x) => x.code === 'TRN322');
  const cli = await checkConfig(text, { env: {}, host: cliCheckHost(dir) });
  assert.equal(d.message, cli.diagnostics.find((x) => x.code === 'TRN322')?.message);
  assert.match(d.message, /^At most 2 of the episode's 3 turns/);
  const line = text.split('\n')[d.range.start.line];
  assert.equal(line.slice(d.range.start.character, d.range.end.character), 'max_model_len');
});

test('TRN321 for a single-turn workflow through the server: the longest prompt is row 45 of 60, with the CLI message', async () => {
  const long = `Sum the numbers ${Array.from({ length: 60 }, (_, i) => i).join(', ')}.`;
  const rows = Array.from({ length: 60 }, (_, i) => ({ question: i === 44 ? long : `What is ${i} + 1?`, answer: '1' }));
  writeFileSync(join(dir, 'data', 'sixty.jsonl'), rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  const text = budgetConfig(
    '  max_model_len: 4096\n  max_prompt_tokens: 64\n  max_response_tokens: 256\n',
    '      path: data/sixty.jsonl\n      default_workflow_type: simple_workflow\n      format:\n        prompt_key: question\n        response_key: answer\n',
  );
  const simpleUri = pathToFileURL(join(dir, 'simple.trinity.yaml')).toString();
  const found = c.nextDiagnostics(simpleUri, (ds) => budget(ds).length > 0, 15_000);
  await c.open(simpleUri, text);
  const [d] = budget(await found);
  const cli = await checkConfig(text, { env: {}, host: cliCheckHost(dir) });
  assert.equal(d.message, cli.diagnostics.find((x) => x.code === 'TRN321')?.message);
  assert.match(
    d.message,
    /^The longest prompt in all 60 rows of `buffer\.explorer_input\.taskset\.path` \(row 45, `simple_workflow`\)/,
  );
});
