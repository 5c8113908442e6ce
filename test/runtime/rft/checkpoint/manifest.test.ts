/**
 * Checkpoints that prove themselves: a real checkpoint (tfjs weights, optimizer state, a critic subdirectory) is
 * written with its manifest; truncating, flipping one bit of or deleting any file is named with why; a resume takes
 * the newest intact checkpoint, sets the damaged newer ones aside and moves the pointer; with none intact it refuses,
 * naming each.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { initModel } from '../../../../runtime/engine/lm/checkpoint';
import { buildCharTokenizer, tokenizerFromJson } from '../../../../runtime/engine/tokenizer';
import {
  newestIntactCheckpoint,
  NoIntactCheckpoint,
  POINTER_FILE,
} from '../../../../runtime/rft/checkpoint/checkpoint-choice';
import { saveCheckpoint } from '../../../../runtime/rft/checkpoint/checkpoints';
import { MANIFEST_FILE, verifyCheckpoint } from '../../../../runtime/rft/checkpoint/manifest';
import { tinyQwen2Config } from '../../../helpers/tiny-qwen2';

const tokenizer = tokenizerFromJson(buildCharTokenizer('0123456789+='));
const config = tinyQwen2Config({ vocabSize: tokenizer.vocabSize, eosTokenIds: [...tokenizer.eosTokenIds] });

before(async () => {
  await tf.setBackend('cpu');
});

async function save(jobDir: string, step: number): Promise<string> {
  const model = initModel(config, step);
  try {
    const n = model.variables().length;
    const optimizer = {
      step,
      m: Array.from({ length: n }, () => new Float32Array(4).fill(step)),
      v: Array.from({ length: n }, () => new Float32Array(4).fill(1)),
    };
    return await saveCheckpoint(
      jobDir,
      step,
      model,
      tokenizer,
      optimizer,
      { step, extra: { explorerStep: step } },
      (d) => writeFileSync(join(d, 'pending_experiences.jsonl'), '[]\n'),
    );
  } finally {
    model.dispose();
  }
}

const fresh = (): string => mkdtempSync(join(tmpdir(), 'twb-manifest-'));
const log = (): { lines: string[]; fn: (level: string, m: string) => void } => {
  const lines: string[] = [];
  return { lines, fn: (level, m) => lines.push(`${level}: ${m}`) };
};

function flipBit(path: string, at: number): void {
  const b = new Uint8Array(readFileSync(path));
  b[at] ^= 0x10;
  writeFileSync(path, b);
}

describe('checkpoint manifest', () => {
  test('lists every file with its size, is written last, and verifies', async () => {
    const dir = await save(fresh(), 3);
    const manifest = JSON.parse(readFileSync(join(dir, MANIFEST_FILE), 'utf8')) as {
      step: number;
      files: { path: string; size: number }[];
    };
    assert.equal(manifest.step, 3);
    const listed = manifest.files.map((f) => f.path);
    assert.deepEqual(
      listed,
      readdirSync(dir)
        .filter((n) => n !== MANIFEST_FILE)
        .sort(),
    );
    assert.ok(listed.includes('optimizer.safetensors') && listed.includes('pending_experiences.jsonl'));
    for (const f of manifest.files) assert.equal(f.size, readFileSync(join(dir, f.path)).length, f.path);
    assert.deepEqual(verifyCheckpoint(dir), { status: 'intact' });
    assert.deepEqual(
      readdirSync(join(dir, '..')).filter((n) => n.startsWith('.')),
      [],
      'no temporary directory is left',
    );
  });

  test('a truncated file is named with its size and the size the manifest records', async () => {
    const dir = await save(fresh(), 2);
    const size = readFileSync(join(dir, 'optimizer.safetensors')).length;
    truncateSync(join(dir, 'optimizer.safetensors'), 100);
    assert.deepEqual(verifyCheckpoint(dir), {
      status: 'damaged',
      file: 'optimizer.safetensors',
      reason: `100 bytes, the manifest says ${size}`,
    });
  });

  test('one flipped bit in the weights is found by the checksum; in the manifest, the manifest is named', async () => {
    const dir = await save(fresh(), 2);
    flipBit(join(dir, 'model.safetensors'), 200);
    const v = verifyCheckpoint(dir);
    assert.equal(v.status, 'damaged');
    assert.equal(v.status === 'damaged' && v.file, 'model.safetensors');
    assert.match(v.status === 'damaged' ? v.reason : '', /SHA-256 differs/);

    const other = await save(fresh(), 2);
    const text = readFileSync(join(other, MANIFEST_FILE), 'utf8');
    writeFileSync(
      join(other, MANIFEST_FILE),
      text.replace(/"size": (\d)/, (_, d: string) => `"size": ${(Number(d) + 1) % 10}`),
    );
    const w = verifyCheckpoint(other);
    assert.equal(w.status === 'damaged' && w.file, MANIFEST_FILE);
  });

  test('a missing file is damaged; a checkpoint without a manifest (an older runtime wrote it) is unverified', async () => {
    const dir = await save(fresh(), 2);
    rmSync(join(dir, 'trainer_state.json'));
    assert.deepEqual(verifyCheckpoint(dir), { status: 'damaged', file: 'trainer_state.json', reason: 'missing' });
    const legacy = await save(fresh(), 2);
    rmSync(join(legacy, MANIFEST_FILE));
    assert.deepEqual(verifyCheckpoint(legacy), { status: 'unverified' });
  });
});

describe('the checkpoint a resume takes', () => {
  test('the newest intact one: a damaged newer one is set aside with a warning naming the file; the pointer moves', async () => {
    const job = fresh();
    await save(job, 2);
    await save(job, 4);
    truncateSync(join(job, 'global_step_4', 'optimizer.safetensors'), 1000);
    const { lines, fn } = log();
    assert.deepEqual(newestIntactCheckpoint(job, fn), { step: 2, dir: join(job, 'global_step_2') });
    assert.match(
      lines[0],
      /^warning: checkpoint global_step_4 is damaged: optimizer\.safetensors: 1000 bytes, the manifest says \d+; it is set aside as global_step_4\.damaged and the run resumes from global_step_2$/,
    );
    assert.ok(existsSync(join(job, 'global_step_4.damaged', 'optimizer.safetensors')), 'kept for inspection');
    assert.ok(!existsSync(join(job, 'global_step_4')));
    assert.equal(readFileSync(join(job, POINTER_FILE), 'utf8'), '2\n');
  });

  test('an intact checkpoint newer than the pointer (a kill between the rename and the pointer) is taken', async () => {
    const job = fresh();
    await save(job, 2);
    await save(job, 3);
    writeFileSync(join(job, POINTER_FILE), '2\n');
    const { lines, fn } = log();
    assert.equal(newestIntactCheckpoint(job, fn)?.step, 3);
    assert.deepEqual(lines, [`info: ${POINTER_FILE} now names global_step_3 (it named 2)`]);
    assert.equal(readFileSync(join(job, POINTER_FILE), 'utf8'), '3\n');
  });

  test('none intact: refused, naming every checkpoint and why, and nothing is moved', async () => {
    const job = fresh();
    await save(job, 1);
    await save(job, 2);
    truncateSync(join(job, 'global_step_1', 'model.safetensors'), 10);
    rmSync(join(job, 'global_step_2', 'config.json'));
    assert.throws(
      () => newestIntactCheckpoint(job, () => {}),
      (e: Error) =>
        e instanceof NoIntactCheckpoint &&
        e.message.includes('global_step_2: config.json: missing') &&
        /global_step_1: model\.safetensors: 10 bytes, the manifest says \d+/.test(e.message) &&
        e.message.includes('continue_from_checkpoint: false'),
    );
    assert.deepEqual(
      readdirSync(job)
        .filter((n) => n.startsWith('global_step_'))
        .sort(),
      ['global_step_1', 'global_step_2'],
    );
  });

  test('a job without checkpoints resumes from nothing', () => {
    assert.equal(
      newestIntactCheckpoint(fresh(), () => {}),
      undefined,
    );
  });
});
