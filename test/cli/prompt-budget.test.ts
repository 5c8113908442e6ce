/**
 * TRN321 for single-turn workflows: the longest prompt among a local taskset's first rows, built as Trinity's
 * simple_workflow and math_workflow build it (workflow.py @64b001d `format_messages`: the format's system prompt,
 * the row's `prompt_key` column, the reply prefix continued; math_workflow's DeepSeek-R1 system prompt for
 * `math_reward`; math_eval_workflow's fixed Qwen2.5-Math prompt; math_boxed_workflow's plain text with `use_base`;
 * on_policy_distill_math_workflow's prompt; tool_call_workflow's from the row's tools and conversations) and counted with the model folder's byte tokenizer, against `max_prompt_tokens`: at the limit
 * silent, one token under it warned, naming the row. The expected counts are the template rendered here.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { checkConfig } from '../../runtime/config/check-config';
import { loadTokenizer, type ChatMessage } from '../../runtime/engine/tokenizer';
import { COUNT_MS, ROW_BOUND } from '../../runtime/config/check/episode-budget';
import { toolCallMessages } from '../../runtime/rft/workflows/tool-call';
import { budgetConfig, cliCheckHost, firstPromptFixture } from '../helpers/first-prompt-fixture';

const { dir } = firstPromptFixture('twb-prompt-budget-', { seed: 1, size: 4, p: 0.8 });
const QUESTIONS = [
  'What is 2 + 2?',
  `Sum the numbers ${Array.from({ length: 60 }, (_, i) => i).join(', ')}.`,
  'Is 7 prime?',
];
writeFileSync(
  join(dir, 'data', 'math.jsonl'),
  QUESTIONS.map((q) => JSON.stringify({ question: q, answer: '1' })).join('\n') + '\n',
);
const tokenizer = loadTokenizer(join(dir, 'model'));

/** The prompt's tokens as the rollout model renders it: the reply prefix continues the generation prompt. */
function tokens(messages: ChatMessage[], replyPrefix = ''): number {
  return tokenizer.encode(tokenizer.applyChatTemplate(messages, { addGenerationPrompt: true }) + replyPrefix, {
    addSpecialTokens: false,
  }).length;
}

const config = (workflow: string, maxPromptTokens: number, format: string) =>
  budgetConfig(
    `  max_model_len: 4096\n  max_prompt_tokens: ${maxPromptTokens}\n  max_response_tokens: 256\n`,
    `      path: data/math.jsonl
      default_workflow_type: ${workflow}
      default_reward_fn_type: math_reward
      format:
        prompt_key: question
        response_key: answer
${format}`,
  );

async function budget(text: string) {
  const r = await checkConfig(text, { env: {}, host: cliCheckHost(dir) });
  return r.diagnostics
    .filter((d) => d.code === 'TRN321')
    .map((d) => ({ key: text.slice(d.range[0], d.range[1]), message: d.message }));
}

test('simple_workflow: the longest of the rows, with system prompt and reply prefix, against max_prompt_tokens', async () => {
  const format = '        system_prompt: Answer with the number only.\n        reply_prefix: "The answer is"\n';
  const n = tokens(
    [
      { role: 'system', content: 'Answer with the number only.' },
      { role: 'user', content: QUESTIONS[1] },
    ],
    'The answer is',
  );
  assert.deepEqual(await budget(config('simple_workflow', n, format)), []);
  const [f, ...rest] = await budget(config('simple_workflow', n - 1, format));
  assert.deepEqual(rest, []);
  assert.equal(f?.key, 'max_prompt_tokens', JSON.stringify(f));
  assert.match(
    f.message,
    new RegExp(
      `^The longest prompt in all 3 rows of \`buffer\\.explorer_input\\.taskset\\.path\` \\(row 2, \`simple_workflow\`\\) is ${n} tokens under model's chat template, more than \`max_prompt_tokens\` ${n - 1}\\.`,
    ),
  );
});

test('math_workflow adds the DeepSeek-R1 system prompt for math_reward: over a budget the bare question fits', async () => {
  const bare = tokens([{ role: 'user', content: QUESTIONS[1] }]);
  assert.deepEqual(await budget(config('simple_workflow', bare, '')), []);
  const [f] = await budget(config('math_workflow', bare, ''));
  const n = Number(/is (\d+) tokens/.exec(f?.message ?? '')?.[1]);
  assert.ok(n > bare + 50, `math_workflow's prompt is ${n} tokens, the bare question ${bare}`);
  assert.match(f.message, /\(row 2, `math_workflow`\)/);
});

test("math_eval_workflow: Qwen2.5-Math's fixed prompt around the row's question, whatever prompt_key says", async () => {
  const n = tokens([
    { role: 'system', content: 'You are a helpful assistant.' },
    {
      role: 'user',
      content: `${QUESTIONS[1]}\nPlease reason step by step, and put your final answer within \\boxed{}.`,
    },
  ]);
  assert.deepEqual(await budget(config('math_eval_workflow', n, '')), []);
  const [f] = await budget(config('math_eval_workflow', n - 1, ''));
  assert.match(f?.message ?? '', new RegExp(`\\(row 2, \`math_eval_workflow\`\\) is ${n} tokens`));
});

test('every row is counted, not the first 20: the longest prompt at row 45 of 60 is found and named, "all 60 rows"', async () => {
  const rows = Array.from({ length: 60 }, (_, i) => ({
    question: i === 44 ? QUESTIONS[1] : `What is ${i} + 1?`,
    answer: '1',
  }));
  writeFileSync(join(dir, 'data', 'sixty.jsonl'), rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  const n = tokens([{ role: 'user', content: QUESTIONS[1] }]);
  const text = config('simple_workflow', n - 1, '').replace('path: data/math.jsonl', 'path: data/sixty.jsonl');
  const [f, ...rest] = await budget(text);
  assert.deepEqual(rest, []);
  assert.match(
    f?.message ?? '',
    new RegExp(
      `^The longest prompt in all 60 rows of \`buffer\\.explorer_input\\.taskset\\.path\` \\(row 45, \`simple_workflow\`\\) is ${n} tokens`,
    ),
  );
  assert.deepEqual(
    await budget(config('simple_workflow', n, '').replace('path: data/math.jsonl', 'path: data/sixty.jsonl')),
    [],
  );
});

test('past the row bound the count stops there and says so; a longer prompt beyond it is not seen', async () => {
  const long = `Sum the numbers ${Array.from({ length: 90 }, (_, i) => i).join(', ')}.`;
  const rows = Array.from({ length: ROW_BOUND + 5 }, (_, i) => ({
    question: i === 9 ? QUESTIONS[1] : i === ROW_BOUND + 2 ? long : `What is ${i} + 1?`,
    answer: '1',
  }));
  writeFileSync(join(dir, 'data', 'many.jsonl'), rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  const n = tokens([{ role: 'user', content: QUESTIONS[1] }]);
  const text = config('simple_workflow', n - 1, '').replace('path: data/math.jsonl', 'path: data/many.jsonl');
  const started = Date.now();
  const [f] = await budget(text);
  const took = Date.now() - started;
  // Under the time bound (a loaded machine may be slower: then the message names the time instead).
  const stop =
    took < COUNT_MS ? `\\(counting stops at ${ROW_BOUND} rows\\)` : `\\(counting stops after ${COUNT_MS / 1000} s\\)`;
  assert.match(
    f?.message ?? '',
    new RegExp(
      `^The longest prompt in the first \\d+ rows of \`buffer\\.explorer_input\\.taskset\\.path\` ${stop} \\(row 10, \`simple_workflow\`\\) is ${n} tokens`,
    ),
  );
});

test('math_boxed_workflow with use_base: the plain-text prompt Trinity sends to a base model, counted without a template', async () => {
  // customized_math_workflows.py @2994bb2 `format_prompt`: "System:" + the default boxed prompt, "\\nUser:\\n", the
  // task, "\\nAssistant:\\n"; generate() encodes it with special tokens (none for this tokenizer).
  const text = `System:Please reason step by step, and put your final answer within \\boxed{}.\nUser:\n${QUESTIONS[1]}\nAssistant:\n`;
  const n = tokenizer.encode(text, { addSpecialTokens: true }).length;
  const args = '      workflow_args:\n        use_base: true\n';
  assert.deepEqual(await budget(config('math_boxed_workflow', n, args)), []);
  const [f] = await budget(config('math_boxed_workflow', n - 1, args));
  assert.match(
    f?.message ?? '',
    new RegExp(
      `\\(row 2, \`math_boxed_workflow\`\\) is ${n} tokens under model's tokenizer \\(plain text: \`use_base\` sends no chat template\\)`,
    ),
  );
});

test('on_policy_distill_math_workflow: its Qwen2.5-Math prompt around the row, counted', async () => {
  const n = tokens([
    { role: 'system', content: 'You are a helpful assistant.' },
    {
      role: 'user',
      content: `${QUESTIONS[1]}\nPlease reason step by step, and put your final answer within \\boxed{}.`,
    },
  ]);
  assert.deepEqual(await budget(config('on_policy_distill_math_workflow', n, '')), []);
  const [f] = await budget(config('on_policy_distill_math_workflow', n - 1, ''));
  assert.match(f?.message ?? '', new RegExp(`\\(row 2, \`on_policy_distill_math_workflow\`\\) is ${n} tokens`));
});

test("tool_call_workflow: the prompt built from the row's raw_system, tools and conversations, counted", async () => {
  const row = {
    raw_system: 'You are a helpful assistant with tools.\n',
    tools: '[{"name": "weather", "description": "Weather for a city", "parameters": {"city": {"type": "string"}}}]',
    conversations: [{ from: 'human', value: 'Weather in Rome?' }],
    answer: '[{"name": "weather", "arguments": {"city": "Rome"}}]',
  };
  writeFileSync(join(dir, 'data', 'tools.jsonl'), JSON.stringify(row) + '\n');
  const n = tokens(toolCallMessages(row));
  const at = (budgetTokens: number) =>
    config('tool_call_workflow', budgetTokens, '').replace('path: data/math.jsonl', 'path: data/tools.jsonl');
  assert.deepEqual(await budget(at(n)), []);
  const [f] = await budget(at(n - 1));
  assert.match(
    f?.message ?? '',
    new RegExp(`^The first prompt of .*\\(row 1, \`tool_call_workflow\`\\) is ${n} tokens`),
  );
});
