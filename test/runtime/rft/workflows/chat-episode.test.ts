/**
 * Concatenated multi-turn episodes on a real model and a real chat template (ChatML on the byte-level tokenizer):
 * the experience is the prompt, each turn's sampled ids exactly, and the template's tokens between turns written out
 * by hand here; the action mask is 1 exactly on the sampled ids; log-probs are 0 where the mask is 0 and equal the
 * model's own scores of the whole sequence where it is 1; the token budget, a dropped last message, the cut at
 * max_model_len − 1 (reward 0) and Trinity's prompt-truncation answer follow Trinity.
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { initBackend } from '../../../../runtime/engine/backend';
import type { Pretrained } from '../../../../runtime/engine/pretrained';
import { forcedTurns, IM_END, loadByteChatModel, rolloutModelOf } from '../../../helpers/byte-chat-model';
import type { ChatMessage } from '../../../../runtime/engine/tokenizer';
import type { RolloutLimits, RolloutModel } from '../../../../runtime/rft/models/rollout-model';
import { ChatEpisode, PROMPT_TRUNCATED_RESPONSE } from '../../../../runtime/rft/workflows/multi-turn/chat-episode';
import { glueAfterAssistant } from '../../../../runtime/rft/workflows/multi-turn/template-glue';

let pretrained: Pretrained;

before(async () => {
  await initBackend({ prefer: 'wasm' });
  pretrained = loadByteChatModel(5, 256);
});

function rolloutModel(limits: Partial<RolloutLimits> = {}, seed = 11): RolloutModel {
  return rolloutModelOf(pretrained, limits, seed);
}

const encode = (text: string) => pretrained.tokenizer.encode(text, { addSpecialTokens: false });
const OPENING: ChatMessage[] = [
  { role: 'system', content: 'You walk.' },
  { role: 'user', content: 'Where now?' },
];
const PROMPT =
  '<|im_start|>system\nYou walk.<|im_end|>\n<|im_start|>user\nWhere now?<|im_end|>\n<|im_start|>assistant\n';

/** ChatML between a turn and the next generation prompt, as the template writes it (its own <|im_end|> unless sampled). */
function chatmlGlue(userText: string, sampledStop: boolean): string {
  return `${sampledStop ? '' : '<|im_end|>'}\n<|im_start|>user\n${userText}<|im_end|>\n<|im_start|>assistant\n`;
}

describe('template glue', () => {
  test("ChatML's text between turns, without the stop token the model already sampled", () => {
    const render = (m: readonly ChatMessage[]) =>
      pretrained.tokenizer.applyChatTemplate(m, { addGenerationPrompt: true });
    const messages: ChatMessage[] = [
      ...OPENING,
      { role: 'assistant', content: 'A ``` B' },
      { role: 'user', content: 'ok' },
    ];
    assert.equal(glueAfterAssistant(render, messages, 2, null), chatmlGlue('ok', false));
    assert.equal(glueAfterAssistant(render, messages, 2, '<|im_end|>'), chatmlGlue('ok', true));
    // A stop token the template does not write (here <|endoftext|>) stays sampled and the template's own follows.
    assert.equal(glueAfterAssistant(render, messages, 2, '<|endoftext|>'), chatmlGlue('ok', false));
  });
});

describe('a concatenated episode', () => {
  test('tokens are the prompt, the sampled ids and the template between them; mask and log-probs follow', async () => {
    const model = rolloutModel();
    const episode = ChatEpisode.open(model, OPENING);
    const t1 = await episode.respond({ temperature: 1 });
    episode.rewardTurn(0);
    episode.addMessage({ role: 'user', content: 'Left.' });
    const t2 = await episode.respond({ temperature: 1, max_tokens: 5 });
    episode.rewardTurn(1);
    const exp = episode.toExperience({ reward: 1, info: { env_steps: 2, label: 'x' } });

    const prompt = encode(PROMPT);
    const glue = encode(chatmlGlue('Left.', t1.ids[t1.ids.length - 1] === IM_END));
    assert.deepEqual(exp.tokens, [...prompt, ...t1.ids, ...glue, ...t2.ids]);
    assert.equal(exp.promptLength, prompt.length);
    assert.ok(t1.ids.length > 0 && t1.ids.length <= 6 && t2.ids.length <= 5);
    assert.deepEqual(exp.actionMask, [...t1.ids.map(() => 1), ...glue.map(() => 0), ...t2.ids.map(() => 1)]);
    assert.deepEqual(exp.logprobs, [...t1.logprobs, ...glue.map(() => 0), ...t2.logprobs]);

    // The sampled log-probs are the model's scores of this very sequence (what the trainer recomputes).
    const scored = await model.logprobs(exp.tokens, 1);
    exp.actionMask!.forEach((m, i) => {
      if (m === 1)
        assert.ok(
          Math.abs(exp.logprobs![i] - scored[exp.promptLength + i - 1]) < 2e-5,
          `token ${i}: sampled vs scored`,
        );
    });

    // The ids are kept even where their text would tokenise differently (bytes that are not whole UTF-8 characters).
    const retokenised = [t1, t2].filter(
      (t) => JSON.stringify(encode(t.text)) !== JSON.stringify(t.ids.filter((id) => id !== IM_END)),
    );
    assert.ok(retokenised.length > 0, 'this seed samples a byte sequence whose text does not round-trip');

    assert.deepEqual(exp.messages, [
      ...OPENING,
      { role: 'assistant', content: t1.text },
      { role: 'user', content: 'Left.' },
      { role: 'assistant', content: t2.text },
    ]);
    assert.deepEqual(exp.turnRewards, [0, 1]);
    assert.deepEqual(exp.metrics, { env_steps: 2 });
    assert.equal(exp.reward, 1);
    assert.equal(exp.truncated, false);
  });

  test('a turn ending on its stop token: the template does not repeat it', async () => {
    const model = rolloutModel();
    const episode = ChatEpisode.open(model, OPENING, forcedTurns(model, ['```Up```', '```Up```']));
    await episode.respond();
    episode.addMessage({ role: 'user', content: 'Fell.' });
    await episode.respond();
    const exp = episode.toExperience({ reward: 0 });
    const up = [...encode('```Up```'), IM_END];
    const glue = encode(chatmlGlue('Fell.', true));
    assert.deepEqual(exp.tokens, [...encode(PROMPT), ...up, ...glue, ...up]);
    assert.equal(
      pretrained.tokenizer.decode(exp.tokens, { skipSpecialTokens: false }),
      `${PROMPT}\`\`\`Up\`\`\`<|im_end|>${chatmlGlue('Fell.', true)}\`\`\`Up\`\`\`<|im_end|>`,
    );
    assert.deepEqual(exp.actionMask, [...up.map(() => 1), ...glue.map(() => 0), ...up.map(() => 1)]);
  });

  test('the budget counts every token after the first prompt; a dropped message leaves the experience at the last turn', async () => {
    const episode = ChatEpisode.open(rolloutModel({}, 12), OPENING);
    assert.equal(episode.responseTokens, 0);
    const t1 = await episode.respond();
    assert.equal(episode.responseTokens, t1.ids.length);
    episode.addMessage({ role: 'user', content: 'Again.' });
    const glue = encode(chatmlGlue('Again.', t1.ids[t1.ids.length - 1] === IM_END));
    assert.equal(episode.responseTokens, t1.ids.length + glue.length);
    assert.deepEqual(episode.dropPendingMessages(), [{ role: 'user', content: 'Again.' }]);
    assert.equal(episode.responseTokens, t1.ids.length);
    const exp = episode.toExperience({ reward: 0, truncated: true });
    assert.deepEqual(exp.tokens, [...encode(PROMPT), ...t1.ids]);
    assert.equal(exp.truncated, true);
    assert.equal(exp.messages!.length, 3);
  });

  test('a conversation longer than max_model_len − 1 is cut there, truncated, with reward 0', async () => {
    const promptLength = encode(PROMPT).length;
    const episode = ChatEpisode.open(rolloutModel({ maxModelLen: promptLength + 4 }, 13), OPENING);
    const t1 = await episode.respond({ max_tokens: 50 });
    assert.equal(t1.ids.length, 4, 'the turn may sample only what max_model_len leaves');
    assert.equal(t1.finishReason, 'length');
    const exp = episode.toExperience({ reward: 1 });
    assert.equal(exp.tokens.length, promptLength + 3);
    assert.deepEqual(exp.actionMask, [1, 1, 1]);
    assert.equal(exp.logprobs!.length, 3);
    assert.equal(exp.truncated, true);
    assert.equal(exp.reward, 0);
  });

  test("a prompt over max_prompt_tokens with truncation on gets Trinity's fixed answer, masked out", async () => {
    const episode = ChatEpisode.open(rolloutModel({ enablePromptTruncation: true, maxPromptTokens: 10 }), OPENING);
    const t = await episode.respond();
    assert.equal(t.promptTruncated, true);
    assert.equal(t.text, PROMPT_TRUNCATED_RESPONSE);
    const exp = episode.toExperience({ reward: 1 });
    assert.deepEqual(exp.tokens, [...encode(PROMPT), ...encode(PROMPT_TRUNCATED_RESPONSE)]);
    assert.ok(exp.actionMask!.every((m) => m === 0));
    assert.ok(exp.logprobs!.every((l) => l === 0));
  });

  test('misuse is refused with the reason', async () => {
    const episode = ChatEpisode.open(rolloutModel(), OPENING);
    assert.throws(() => episode.addMessage({ role: 'assistant', content: 'x' }), /respond\(\)/);
    assert.throws(() => episode.toExperience({ reward: 0 }), /no model turn/);
    await episode.respond();
    await assert.rejects(episode.respond(), /needs a message after the model’s last turn/);
    episode.toExperience({ reward: 0 });
    assert.throws(() => episode.addMessage({ role: 'user', content: 'late' }), /has ended/);
  });
});
