/**
 * Entry of the prompt-count worker thread (bundled as dist/prompt-tokens-worker.js): prompt-tokens.ts, with
 * its tokenizers cached per folder and modification time, run here so that a tokenizer's load never holds up the
 * language server's thread (prompt-tokens-thread.ts).
 */
import { parentPort } from 'node:worker_threads';
import { promptTokens } from '../../runtime/rft/workflows/prompt-tokens';
import type { PromptTokensAnswer, PromptTokensAsk } from './prompt-tokens-thread';

const port = parentPort;
if (!port) throw new Error('prompt-tokens-worker must run in a worker thread');
port.on('message', (m: PromptTokensAsk) => {
  let answer: PromptTokensAnswer;
  try {
    answer = { id: m.id, tokens: promptTokens(m.req, m.env) };
  } catch (e) {
    answer = { id: m.id, error: (e as Error).message };
  }
  port.postMessage(answer);
});
