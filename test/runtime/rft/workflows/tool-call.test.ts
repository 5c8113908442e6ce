/**
 * tool_call_workflow (Trinity's customized_toolcall_workflows.py @7f9b280, after Tool-N1): Python's json.loads/dumps
 * against Python itself (ints and floats kept apart, sort_keys, ensure_ascii, float repr); the reward's rules as a
 * table, each case naming the rule of compute_score_v0 it exercises; the prompt built from a ToolACE-style row;
 * a run on a real model (n responses, each scored by the reward, runs numbered).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { before, describe, test } from 'node:test';
import { initBackend } from '../../../../runtime/engine/backend';
import { pyJsonDumps, pyJsonLoads, PyJsonError } from '../../../../runtime/rft/rewards/python-json';
import { toolCallReward, ToolCallRewardError } from '../../../../runtime/rft/rewards/tool-call-reward';
import { WorkflowError } from '../../../../runtime/rft/workflows/simple';
import { toolCallMessages, toolCallSystemSuffix, toolCallWorkflow } from '../../../../runtime/rft/workflows/tool-call';
import { loadByteChatModel, rolloutModelOf, workflowTask } from '../../../helpers/byte-chat-model';
import { PYTHON } from '../../../helpers/tfevents';

const JSON_TEXTS = [
  '{"b": 1.0, "a": [1, 1e16, 1e-5, -0.0, 0.1, 2.5e-7, 123456789012345678901234567890]}',
  '{"city": "Z\\u00fcrich", "emoji": "\\ud83d\\ude00", "ctl": "tab\\there\\u0001", "del": "\\u007f"}',
  '[{"name": "weather", "arguments": {"unit": "C", "days": 3, "loc": {"lon": 8.5, "lat": 47.37}}}]',
  '{"z": NaN, "y": Infinity, "x": -Infinity, "w": [true, false, null], "v": {}, "u": []}',
  '{"\\u00e9": 1, "e": 2, "\\ud83d\\ude00": 3, "\\uffff": 4}',
  '  "just a string"  ',
  '-12.50e+3',
];

describe('Python json.loads / json.dumps', () => {
  test('dumps(loads(text)) equals Python for each text, with and without sort_keys', () => {
    const script = `import json, sys
texts = json.load(sys.stdin)
print(json.dumps([[json.dumps(json.loads(t)), json.dumps(json.loads(t), sort_keys=True)] for t in texts]))`;
    const r = spawnSync(PYTHON, ['-c', script], { input: JSON.stringify(JSON_TEXTS), encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const python = JSON.parse(r.stdout) as [string, string][];
    JSON_TEXTS.forEach((t, i) => {
      assert.equal(pyJsonDumps(pyJsonLoads(t)), python[i][0], t);
      assert.equal(pyJsonDumps(pyJsonLoads(t), { sortKeys: true }), python[i][1], t);
    });
  });

  test('what json.loads refuses is refused', () => {
    for (const bad of ['', '{', '[1,]', '{"a" 1}', '01', '"a\\x"', '1 2', "{'a': 1}", '"tab\there"'])
      assert.throws(() => pyJsonLoads(bad), PyJsonError, JSON.stringify(bad));
  });
});

const CALLS = '[{"name": "weather", "arguments": {"city": "Paris", "days": 2}}]';
const TWO = '[{"name": "email", "arguments": {"to": "Bob"}}, {"name": "shop", "arguments": {"item": "banana"}}]';
const think = (calls: string) => `<think>I should call it.</think> <tool_call>${calls}</tool_call>`;

// [response, answer, reward, the rule of compute_score_v0 (customized_toolcall_workflows.py @7f9b280)]
const RULES: [string, string, number, string][] = [
  [think(CALLS), CALLS, 1, 'validate_result == 2: the same (name, json.dumps(arguments, sort_keys=True)) multiset'],
  [think('[{"arguments": {"days": 2, "city": "Paris"}, "name": "weather"}]'), CALLS, 1, 'sort_keys: key order free'],
  [think('{"name": "weather", "arguments": {"city": "Paris", "days": 2}}'), CALLS, 1, 'a dict result becomes [dict]'],
  [think(JSON.stringify(CALLS)), CALLS, 1, 'a str result is json.loads-ed once more'],
  [think(CALLS), JSON.stringify(CALLS), 1, 'a str answer is json.loads-ed once more'],
  [think(CALLS.replace('2}', '2.0}')), CALLS, 0, 'json.dumps keeps 2.0 apart from 2'],
  [think(CALLS.replace('Paris', 'Rome')), CALLS, 0, 'names equal, arguments not: validate_result 1, reward 0'],
  [think(CALLS + ', ' + CALLS), CALLS, 0, 'the same call twice is not once (Counter)'],
  [think(TWO.replace(/^\[(.*), (\{"name": "shop".*)\]$/, '[$2, $1]')), TWO, 1, 'call order free (Counter)'],
  [`<think>a</think> <tool_call>[]</tool_call> <tool_call>${CALLS}</tool_call>`, CALLS, 1, 'the last block counts'],
  [`<think>a</think> <tool_call>${CALLS}</tool_call> <tool_call>[]</tool_call>`, CALLS, 0, 'the last block: [] vs one'],
  [think('[]'), '[]', 1, 'len(result) == len(answer) == 0: full marks'],
  [think('[]'), CALLS, 0, 'one empty, the other not'],
  [`<tool_call>${CALLS}</tool_call>`, CALLS, 0, 'no <think>…</think>'],
  [`<think>a</think><think>b</think> <tool_call>${CALLS}</tool_call>`, CALLS, 0, 'rule 1: <think> exactly once'],
  [`<think>a <tool_call>${CALLS}</tool_call></think>`, CALLS, 0, 'rule 2: </think> before <tool_call>'],
  ['<think>a</think> no call', CALLS, 0, 'no <tool_call> block: result None'],
  ['<think>a</think> <tool_call>[{"name": "weather",</tool_call>', CALLS, 0, 'a block that is not JSON: None'],
  [think('[{"name": "weather"}]'), CALLS, 0, 'validate_format: a call without "arguments"'],
  [think('["weather"]'), CALLS, 0, 'validate_format: a call that is not a dict'],
  [think('[{"name": ["w"], "arguments": {}}]'), CALLS, 0, 'an unhashable name: TypeError caught, 0'],
  [think('""'), '[]', 0, 'a str result loads again: "" is not JSON, so None'],
  [think('{"name": "weather", "arguments": {"city": "Paris", "days": 2}}'), '{"name": "x"}', 0, 'a dict answer'],
];

describe('tool_call_workflow reward (compute_toolcall_reward)', () => {
  for (const [response, answer, reward, rule] of RULES)
    test(`${reward}: ${rule}`, () => assert.equal(toolCallReward(response, answer), reward, response));

  test('where Python raises, the task fails with the reason', () => {
    assert.throws(() => toolCallReward(think('5'), CALLS), ToolCallRewardError);
    assert.throws(() => toolCallReward(think(CALLS), '[{"arguments": {}}]'), /has no "name"/);
    assert.throws(() => toolCallReward(think(CALLS), 'not json'), /answer is not JSON/);
  });
});

const ROW = {
  raw_system: 'You are a helpful assistant with tools.\n',
  tools: '[{"name": "weather", "description": "Weather for a city (°C)", "parameters": {"city": {"type": "string"}}}]',
  conversations: [
    { from: 'user', value: 'Weather in Paris?' },
    { from: 'function_call', value: { name: 'weather', arguments: { city: 'Paris' } } },
    { from: 'observation', value: '{"temp": 21}' },
    { from: 'system', value: 'dropped' },
    { from: 'human', value: 'And Rome?' },
  ],
  answer: '[{"name": "weather", "arguments": {"city": "Rome"}}]',
};

describe('tool_call_workflow prompt (construct_prompt)', () => {
  test('system: raw_system, then the tool prompt with one {"type": "function", ...} line per tool; turns by sender', () => {
    const messages = toolCallMessages(ROW);
    const toolLine =
      '{"type": "function", "function": {"name": "weather", "description": "Weather for a city (\\u00b0C)", "parameters": {"city": {"type": "string"}}}}';
    assert.equal(messages[0].role, 'system');
    assert.equal(messages[0].content, ROW.raw_system + toolCallSystemSuffix(toolLine));
    assert.ok(messages[0].content.includes('<tools>\n' + toolLine + '\n</tools>'));
    assert.ok(messages[0].content.includes('<tool_call>[{"name": <function-name>, "arguments"'), 'braces unescaped');
    assert.deepEqual(messages.slice(1), [
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: '{"name": "weather", "arguments": {"city": "Paris"}}' },
      { role: 'tool', content: '{"temp": 21}' },
      { role: 'user', content: 'And Rome?' },
    ]);
  });

  test('a row without its columns is refused, naming the column', () => {
    assert.throws(() => toolCallMessages({ ...ROW, tools: undefined }), WorkflowError);
    const { raw_system: _, ...noSystem } = ROW;
    assert.throws(() => toolCallMessages(noSystem), /no `raw_system` column/);
    assert.throws(() => toolCallMessages({ ...ROW, tools: '[]' }), /non-empty JSON list/);
  });
});

describe('tool_call_workflow on a real model', () => {
  before(async () => {
    await initBackend({ prefer: 'wasm' });
  });

  test('n responses to the built prompt, each scored by the reward, runs numbered from runIdBase', async () => {
    const model = rolloutModelOf(loadByteChatModel(5, 2048), { maxResponseTokens: 8 }, 4);
    const forced = '<think>x</think><tool_call>[{"name": "weather", "arguments": {"city": "Rome"}}]</tool_call>';
    const wf = toolCallWorkflow({
      model,
      task: workflowTask({ raw: ROW }),
      repeatTimes: 2,
      runIdBase: 3,
      createReward: () => assert.fail('tool_call_workflow scores with its own reward'),
      auxiliaryModels: [],
    });
    assert.equal(wf.repeatable, true);
    const exps = await wf.run();
    assert.deepEqual(
      exps.map((e) => e.eid.run),
      [3, 4],
    );
    const prompt = model.tokenizer.decode(exps[0].tokens.slice(0, exps[0].promptLength));
    assert.ok(prompt.includes('You are a helpful assistant with tools.'), prompt);
    assert.ok(prompt.includes('And Rome?'));
    for (const e of exps) assert.equal(e.reward, toolCallReward(e.responseText ?? '', ROW.answer));
    // The reward that scores these responses gives 1 to the right call, so a model that wrote it would earn it.
    assert.equal(toolCallReward(forced, ROW.answer), 1);
  });
});
