/**
 * Episodes read back from Trinity-RFT's own SQLite experience table: `experience_bytes` in each form Trinity wrote
 * (a plain pickle of the Experience with torch tensors up to v0.5.0, TRXP from v0.5.2), written by Python's pickle
 * with stand-ins for Trinity's and torch's classes (test/helpers/trinity-buffer.ts), read by rolloutsFromBuffer.
 * The expected records are written out by hand from the experiences given.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { rolloutsFromBuffer } from '../../runtime/metrics/buffer-rollouts';
import {
  pythonBytes,
  writeTrinityBuffer,
  type TrinityBufferSpec,
  type TrinityExperienceSpec,
} from '../helpers/trinity-buffer';

const fresh = () => join(mkdtempSync(join(tmpdir(), 'twb-trinity-buf-')), 'buffer.db');

/** A two-turn FrozenLake-like episode: 3 prompt tokens, then the model's 2, the environment's 2, the model's 2. */
const episode: TrinityExperienceSpec = {
  eid: { batch: 4, task: 1, run: 2, step: 0 },
  tokens: [151644, 8948, 198, 151643, 17, 151645, 872, 35, 36],
  prompt_length: 3,
  action_mask: [true, true, false, false, true, true],
  advantages: [-0.75, -0.75, -0.75, -0.75, -0.75, -0.75],
  logprobs: [-0.5, -1.25, 0, 0, -2, -0.125],
  reward: 0.25,
  info: { env_steps: 2, env_done: 0, note: 'not a number' },
  metrics: { test_score: 0.5 },
  truncate_status: 'response_truncated',
  prompt_text: 'You are walking on a frozen lake.',
  response_text: '```Left``` <script>alert(1)</script>',
  messages: [
    { role: 'system', content: 'You are walking on a frozen lake.' },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'Current Observation: ' },
        { type: 'text', text: '_P_' },
      ],
    },
    { role: 'assistant', content: '```Left``` <script>alert(1)</script>' },
    { role: 'environment', content: 'not a role the transcript shows' },
    { role: 'tool', content: null },
  ],
};

const expected = {
  prompt: 'You are walking on a frozen lake.',
  response: '```Left``` <script>alert(1)</script>',
  messages: [
    { role: 'system', content: 'You are walking on a frozen lake.' },
    { role: 'user', content: 'Current Observation: _P_' },
    { role: 'assistant', content: '```Left``` <script>alert(1)</script>' },
    { role: 'tool', content: '' },
  ],
  task: '4/1',
  run: 2,
  step: 0,
  responseTokens: [151643, 17, 151645, 872, 35, 36],
  actionMask: [1, 1, 0, 0, 1, 1],
  metrics: { env_steps: 2, env_done: 0, test_score: 0.5 },
  truncated: true,
  advantage: -0.75,
};

function read(spec: Omit<TrinityBufferSpec, 'file' | 'table'>, steps?: number, perStep?: number) {
  const file = fresh();
  writeTrinityBuffer({ file, table: 'lake_buffer', ...spec });
  return rolloutsFromBuffer({ file, table: 'lake_buffer' }, steps, perStep);
}

describe('Trinity’s experience table: experience_bytes read as episodes', () => {
  const forms: [string, Omit<TrinityBufferSpec, 'file' | 'table' | 'rows'>][] = [
    ['v0.3.x: the v0.3 columns, pickle.dumps of the Experience', { layout: 'v0.3', format: 'pickle', fields: 'v0.3' }],
    [
      'v0.4.0 / v0.5.0: task_id/run_id/model_version columns, pickle.dumps',
      { layout: 'v0.4', format: 'pickle', fields: 'v0.5' },
    ],
    ['v0.5.2 / main: TRXP (pickled metadata + safetensors)', { layout: 'v0.4', format: 'trxp' }],
  ];
  for (const [name, form] of forms)
    test(name, () => {
      // The reward column wins over the pickled one, as ExperienceModel.to_experience sets it.
      const got = read({ ...form, rows: [{ experience: episode, reward: 1.5, model_version: 9 }] });
      const v03 = form.fields === 'v0.3';
      // v0.3's Experience has no truncate_status attribute: the writer sets only the release's own.
      const want = v03 ? { ...expected, truncated: undefined } : expected;
      assert.deepEqual(got, [{ step: 4, samples: [JSON.parse(JSON.stringify({ ...want, reward: 1.5 }))] }]);
    });

  test('the latest steps by eid.batch, newest rows of each, oldest step first', () => {
    const rows = [1, 2, 3, 3, 3].map((batch, i) => ({
      experience: { ...episode, eid: { ...episode.eid, batch, run: i }, prompt_text: `row ${i}` },
    }));
    const got = read({ layout: 'v0.4', format: 'trxp', rows }, 2, 2)!;
    assert.deepEqual(
      got.map((s) => [s.step, s.samples.map((x) => x.prompt)]),
      [
        [2, ['row 1']],
        [3, ['row 3', 'row 4']],
      ],
    );
  });

  test('a pickle naming any other global is refused unread, the row says why; nothing runs', () => {
    const marker = join(mkdtempSync(join(tmpdir(), 'twb-pwn-')), 'ran');
    const evil = pythonBytes(
      `pickle.dumps(type('X', (), {'__reduce__': lambda s: (os.system, (${JSON.stringify(`touch ${marker}`)},))})())`,
    );
    const trxpCut = pythonBytes(`b'TRXP' + bytes([1]) + (1000).to_bytes(8, 'little') + (0).to_bytes(8, 'little')`);
    const got = read({ layout: 'v0.4', format: 'pickle', rows: [{ raw: evil }, { raw: trxpCut }, { raw: '8004' }] })!;
    assert.equal(existsSync(marker), false);
    assert.deepEqual(
      got[0].samples.map((s) => s.response),
      [
        '[experience_bytes not read: refused global posix.system: only the classes an experience holds are read]',
        '[experience_bytes not read: TRXP lengths (1000 + 0) run past the 21-byte blob]',
        '[experience_bytes not read: pickle ends early at byte 2 (wanted 1 more)]',
      ],
    );
  });

  test('v0.3.x: a row whose bytes cannot be read keeps its prompt and response columns', () => {
    const file = fresh();
    writeTrinityBuffer({
      file,
      table: 'b',
      layout: 'v0.3',
      format: 'pickle',
      fields: 'v0.3',
      rows: [{ experience: episode }],
    });
    writeTrinityBuffer({
      file,
      table: 'b',
      layout: 'v0.3',
      format: 'pickle',
      rows: [
        {
          raw: pythonBytes(`pickle.dumps(print)`),
          experience: { ...episode, prompt_text: 'Q', response_text: 'A' },
        } as never,
      ],
    });
    const got = rolloutsFromBuffer({ file, table: 'b' })!;
    // The unreadable row has no eid: its step is the table's (v0.3 has no step column: 0).
    assert.deepEqual(
      got.map((s) => [s.step, s.samples.map((x) => [x.prompt, x.response, x.reward])]),
      [
        [0, [['Q', 'A', 0.25]]],
        [4, [[expected.prompt, expected.response, 0.25]]],
      ],
    );
  });
});
