/**
 * A Trinity run's episodes read from its SQLite buffer (written by Python's pickle, test/helpers/trinity-buffer.ts)
 * through `trinity-workbench rollouts` (dist/cli.js) as the dashboard reads them (job-rollouts.ts), when the config's
 * `model.model_path` holds no tokenizer: the samples keep their ids and the reader says why. The decoded texts, with a
 * tokenizer, are checked in Chromium against the run's own records (test/dashboard/trinity-episodes.test.ts).
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { readBufferRollouts, rolloutsOfJob } from '../../client/dashboard/job-rollouts';
import { buildByteTokenizer, loadTokenizer, writeTokenizerFiles } from '../../runtime/engine/tokenizer';
import { writeTrinityBuffer } from '../helpers/trinity-buffer';

const CLI = resolve(__dirname, '..', '..', 'dist', 'cli.js');
const dir = realpathSync(mkdtempSync(join(tmpdir(), 'twb-rollout-texts-')));
mkdirSync(join(dir, 'model'));
writeFileSync(join(dir, 'model', 'config.json'), JSON.stringify({ model_type: 'qwen2' }));
writeTokenizerFiles(join(dir, 'model'), buildByteTokenizer());
mkdirSync(join(dir, 'bare'));
writeFileSync(join(dir, 'bare', 'config.json'), JSON.stringify({ model_type: 'qwen2' }));

// The byte tokenizer: one token per byte of the text; the answer ends with <|im_end|>, a special token.
const tokenizer = loadTokenizer(join(dir, 'model'));
const prompt = tokenizer.encode('Go:', { addSpecialTokens: false });
const answer = [...tokenizer.encode('```Up```', { addSpecialTokens: false }), tokenizer.tokenToId('<|im_end|>')!];
writeTrinityBuffer({
  file: join(dir, 'lake.db'),
  table: 'lake',
  layout: 'v0.4',
  format: 'trxp',
  rows: [
    {
      experience: {
        eid: { batch: 1, task: 0, run: 0, step: 0 },
        tokens: [...prompt, ...answer],
        prompt_length: prompt.length,
        action_mask: answer.map(() => true),
        reward: 1,
        messages: [
          { role: 'user', content: 'Go:' },
          { role: 'assistant', content: '```Up```' },
        ],
      },
    },
  ],
});
const job = join(dir, 'checkpoints', 'lake', 'run');
mkdirSync(job, { recursive: true });
const resolvedWith = (modelPath: string) => ({
  model: { model_path: modelPath },
  buffer: { trainer_input: { experience_buffer: { name: 'lake', storage_type: 'sql', path: 'sqlite:///lake.db' } } },
});

async function read(modelPath: string) {
  const found = rolloutsOfJob(job, resolvedWith(modelPath), dir, 20);
  assert.ok(found && 'buffer' in found);
  const r = await readBufferRollouts(process.execPath, CLI, found.buffer, 20, found.model);
  assert.equal(r.error, undefined);
  return { note: r.note, sample: r.steps[0].samples[0] };
}

test('a model folder without a tokenizer: token ids only, and the note says why', async () => {
  const { note, sample } = await read('bare');
  assert.equal(sample.episode?.tokenTexts, undefined);
  assert.deepEqual(sample.episode?.responseTokens, answer);
  assert.match(note ?? '', /^no tokenizer for bare: .*tokenizer\.json.*: token ids only, not their text \(1 sample\)$/);
});
