/**
 * TRN321 (the first prompt against the context): a FrozenLake taskset whose first prompt, under the model folder's
 * own tokenizer and chat template, passes `max_prompt_tokens` (prompt truncation on, Trinity's default) or fills
 * `max_model_len` (truncation off). Each boundary is checked both ways (over: warned; at the limit: silent), with N
 * from the real tokenizer on the workflow's own prompt; the last test runs the bundled CLI as a user does.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { checkConfig } from '../../runtime/config/check-config';
import { firstPromptTokens } from '../../runtime/rft/workflows/first-prompt-tokens';
import { cliCheckHost, firstPromptFixture, frozenLakeBudgetConfig as config } from '../helpers/first-prompt-fixture';

const ROW = { seed: 3, size: 4, p: 0.8 };
const { dir, tokens } = firstPromptFixture('twb-episode-budget-', ROW);
const N = tokens(ROW);

async function budgetFindings(model: string) {
  const text = config(model);
  const r = await checkConfig(text, { env: {}, host: cliCheckHost(dir) });
  return r.diagnostics
    .filter((d) => d.code === 'TRN321')
    .map((d) => ({ key: text.slice(d.range[0], d.range[1]), severity: d.severity, message: d.message }));
}

test('the byte tokenizer counts the FrozenLake prompt in the hundreds of tokens', () => {
  assert.ok(N > 300 && N < 4096, `N = ${N}`);
});

test('truncation on: a first prompt over max_prompt_tokens is warned there, as Trinity masks it; at the limit, silent', async () => {
  const model = (p: number) => `  max_model_len: 4096\n  max_prompt_tokens: ${p}\n  max_response_tokens: 64\n`;
  const over = await budgetFindings(model(N - 1));
  assert.equal(over.length, 1, JSON.stringify(over));
  assert.equal(over[0].key, 'max_prompt_tokens');
  assert.equal(over[0].severity, 'warning');
  assert.match(
    over[0].message,
    new RegExp(`is ${N} tokens under model's chat template, more than \`max_prompt_tokens\` ${N - 1}\\.`),
  );
  assert.match(over[0].message, /trains nothing/);
  assert.deepEqual(await budgetFindings(model(N)), []);
});

test('truncation on, max_prompt_tokens derived: the warning lands on max_model_len and says where the limit came from', async () => {
  const [f] = await budgetFindings(`  max_model_len: ${N + 63}\n  max_response_tokens: 64\n`);
  assert.equal(f?.key, 'max_model_len', JSON.stringify(f));
  assert.match(
    f.message,
    new RegExp(`more than \`max_prompt_tokens\` ${N - 1} \\(\`max_model_len\` − \`max_response_tokens\`\\)`),
  );
});

test('truncation off: a first prompt of max_model_len tokens leaves no room for an answer; one more token clears it', async () => {
  const model = (m: number) =>
    `  max_model_len: ${m}\n  max_prompt_tokens: ${m - 1}\n  max_response_tokens: 1\n  enable_prompt_truncation: false\n`;
  const full = await budgetFindings(model(N));
  assert.equal(full.length, 1, JSON.stringify(full));
  assert.equal(full[0].key, 'max_model_len');
  assert.match(full[0].message, new RegExp(`with \`max_model_len\` ${N}, the episode has room for 0 more tokens`));
  assert.deepEqual(await budgetFindings(model(N + 1)), []);
});

test('no tokenizer beside the model: no finding, no error', async () => {
  const bare = realpathSync(mkdtempSync(join(tmpdir(), 'twb-episode-budget-bare-')));
  mkdirSync(join(bare, 'model'));
  writeFileSync(join(bare, 'model', 'config.json'), '{"model_type": "qwen2"}');
  const r = firstPromptTokens(
    { modelPath: 'model', baseDirs: [bare], workflow: 'frozen_lake_workflow', workflowArgs: {}, row: ROW },
    {},
  );
  assert.equal(r, undefined);
});

test('CLI check: the warning at max_prompt_tokens, as file:line', () => {
  writeFileSync(join(dir, 'cli.trinity.yaml'), config(`  max_model_len: 4096\n  max_prompt_tokens: ${N - 1}\n`));
  const r = spawnSync(
    process.execPath,
    [resolve(__dirname, '..', '..', 'dist', 'cli.js'), 'check', 'cli.trinity.yaml'],
    {
      cwd: dir,
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', HF_HUB_OFFLINE: '1' },
    },
  );
  assert.match(r.stdout, new RegExp(`cli\\.trinity\\.yaml:9:3 warning TRN321 .*is ${N} tokens`), r.stdout + r.stderr);
});
