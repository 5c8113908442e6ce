/**
 * TRN321 (the first prompt against the context): a FrozenLake taskset whose first prompt, under the model folder's
 * own tokenizer and chat template, passes `max_prompt_tokens` (prompt truncation on, Trinity's default) or fills
 * `max_model_len` (truncation off). Each boundary is checked both ways (over: warned; at the limit: silent), with N
 * from the real tokenizer on the workflow's own prompt; then TRN322, the turns that fit after it (the context, then FrozenLake's 10240-token budget), each boundary both ways
 * against the turns' prompts counted here; the last test runs the bundled CLI as a user does.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { checkConfig } from '../../runtime/config/check-config';
import { promptTokens } from '../../runtime/rft/workflows/prompt-tokens';
import { cliCheckHost, firstPromptFixture, frozenLakeBudgetConfig as config } from '../helpers/first-prompt-fixture';

const ROW = { seed: 3, size: 4, p: 0.8 };
const { dir, tokens, turnTokens: turnsOf } = firstPromptFixture('twb-episode-budget-', ROW);
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

/** TRN321's and TRN322's findings for a config of `model` lines and `workflow_args`, as the CLI checks it. */
async function turnFindings(model: string, args: { agent_max_steps: number }) {
  const text = config(model, args);
  const r = await checkConfig(text, { env: {}, host: cliCheckHost(dir) });
  return r.diagnostics
    .filter((d) => d.code === 'TRN322' || d.code === 'TRN321')
    .map((d) => ({ code: d.code, key: text.slice(d.range[0], d.range[1]), message: d.message }));
}

test('TRN322, the context: three turns need turn 3 prompt + 1 tokens of max_model_len; one fewer leaves two turns', async () => {
  const [l0, l1, l2] = turnsOf(ROW, { agent_max_steps: 3 }, 3);
  assert.ok(l1 > l0 && l2 > l1, `${l0} ${l1} ${l2}`);
  const model = (m: number) => `  max_model_len: ${m}\n  max_prompt_tokens: ${l0}\n  max_response_tokens: ${m - l0}\n`;
  assert.deepEqual(await turnFindings(model(l2 + 1), { agent_max_steps: 3 }), []);
  const over = await turnFindings(model(l2), { agent_max_steps: 3 });
  assert.equal(over.length, 1, JSON.stringify(over));
  assert.equal(over[0].code, 'TRN322');
  assert.equal(over[0].key, 'max_model_len');
  assert.match(
    over[0].message,
    new RegExp(
      `^At most 2 of the episode's 3 turns \\(\`agent_max_steps\`\\) can happen: the first prompt of .* is ${l0} tokens under model's chat template, and each turn adds ${l1 - l0} tokens .*turn 3's prompt would be ${l2} tokens, which fills \`max_model_len\` ${l2}`,
    ),
  );
  assert.match(over[0].message, new RegExp(`lower \`agent_max_steps\` to 2\\.$`));
});

test("TRN322, the budget: turns stop where 10240 tokens follow the first prompt (Trinity's FrozenLake budget)", async () => {
  const model = '  max_model_len: 32768\n  max_prompt_tokens: 4096\n  max_response_tokens: 28672\n';
  // A fixed 24×24 map: each turn adds some 800 tokens, so the budget runs out within a few turns (cheap to count).
  const desc = ['S' + 'F'.repeat(23), ...Array(22).fill('F'.repeat(24)), 'F'.repeat(23) + 'G'];
  const args = (n: number) => ({ desc, agent_max_steps: n });
  const [l0, l1] = turnsOf(ROW, args(2), 2);
  const turns = Math.ceil(10240 / (l1 - l0)) + 1;
  const ls = turnsOf(ROW, args(turns), turns);
  const k = ls.findIndex((l) => l - ls[0] >= 10240);
  assert.ok(k > 2 && ls[k] < 32768, `turn ${k}`);
  const fewer = turnsOf(ROW, args(k), k);
  assert.ok(fewer[k - 1] - fewer[0] < 10240);
  assert.deepEqual(await turnFindings(model, args(k)), []);
  const [f] = await turnFindings(model, args(turns));
  assert.equal(f?.code, 'TRN322', JSON.stringify(f));
  assert.equal(f.key, '"agent_max_steps"');
  assert.match(
    f.message,
    new RegExp(
      `^At most ${k} of the episode's ${turns} turns .*turn ${k + 1}'s prompt would be ${ls[k]} tokens, ${ls[k] - ls[0]} of them after the first prompt: all of the 10240`,
    ),
  );
});

test('no tokenizer beside the model: no finding, no error', async () => {
  const bare = realpathSync(mkdtempSync(join(tmpdir(), 'twb-episode-budget-bare-')));
  mkdirSync(join(bare, 'model'));
  writeFileSync(join(bare, 'model', 'config.json'), '{"model_type": "qwen2"}');
  const r = promptTokens(
    {
      modelPath: 'model',
      baseDirs: [bare],
      workflow: 'frozen_lake_workflow',
      workflowArgs: {},
      row: ROW,
      turns: 1,
      format: { promptKey: 'prompt', systemPrompt: null, replyPrefix: null, rewardFn: null },
    },
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
