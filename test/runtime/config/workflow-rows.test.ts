/**
 * The task-row keys a workflow reads itself (FrozenLake's size, p, seed), looked for in the first rows of a real
 * local taskset file by the full check.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { checkConfig } from '../../../runtime/config/check-config';

function frozenLake(dir: string, rows: object[], extraArgs = ''): string {
  writeFileSync(join(dir, 'train.jsonl'), rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return [
    'mode: explore',
    'model:',
    '  model_path: m',
    '  max_model_len: 14436',
    'buffer:',
    '  explorer_input:',
    '    taskset:',
    `      path: ${dir}`,
    '      workflow_args:',
    '        agent_max_steps: 10',
    ...(extraArgs ? [extraArgs] : []),
    '    default_workflow_type: frozen_lake_workflow',
    '',
  ].join('\n');
}

const check = (text: string) => checkConfig(text, { release: 'main', host: { baseDirs: ['/'], exists: existsSync } });
const rowFindings = async (text: string) => (await check(text)).diagnostics.filter((d) => d.code === 'TRN317');

describe('task rows a workflow reads', () => {
  test("rows as Trinity's get_frozen_lake_data.py writes them (seed, size, p, index, uid): no finding", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fl-rows-'));
    const rows = [0, 1, 2].map((i) => ({ seed: 100 + i, size: 4 + i, p: 0.8, index: i, uid: `train-${i}` }));
    assert.deepEqual(await rowFindings(frozenLake(dir, rows)), []);
  });

  test('rows without size are an error (the task hangs), without seed a warning, each saying how many rows', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fl-rows-'));
    const rows = [{ question: 'a' }, { question: 'b', size: 4, p: 0.8, seed: 1 }, { question: 'c', p: 0.7 }];
    const text = frozenLake(dir, rows);
    const found = await rowFindings(text);
    const by = (key: string) => found.find((d) => d.message.includes(`lack \`${key}\``));
    assert.equal(by('size')?.severity, 'error');
    assert.match(
      by('size')!.message,
      /2 of the first 3 rows .* takes 1: a 1×1 map .* never returns and the task hangs/,
    );
    assert.equal(by('seed')?.severity, 'warning');
    assert.match(by('seed')!.message, /2 of the first 3 rows/);
    assert.equal(by('p')?.severity, 'warning');
    assert.match(by('p')!.message, /1 of the first 3 rows/);
    assert.equal(text.slice(0, found[0].range[0]).split('\n').length, 8, 'at the taskset path');
  });

  test('a fixed map in workflow_args.desc needs no map keys in the rows', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fl-rows-'));
    const text = frozenLake(dir, [{ question: 'a' }], '        desc: ["SFFF", "FHFH", "FFFH", "HFFG"]');
    assert.deepEqual(await rowFindings(text), []);
  });
});
