/**
 * migrate() against the model's own record of what changed between releases (model/renames.ts): every key Trinity
 * renamed or removed is gone from a migrated file, so the migration cannot drift from the validator's messages.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parse, stringify } from 'yaml';
import { migrate } from '../../../runtime/config/migrate';
import { RENAMES } from '../../../runtime/config/model/renames';
import { NEWEST_RELEASE, RELEASES, releaseIndex } from '../../../runtime/config/releases';

/** Where users write each section that has a renamed key (the migrator walks these places). */
const WHERE: Record<string, string[]> = {
  AlgorithmConfig: ['algorithm'],
  OptimizerConfig: ['algorithm', 'optimizer'],
  ExplorerConfig: ['explorer'],
  TrainerConfig: ['trainer'],
  BufferConfig: ['buffer'],
  ExplorerInput: ['buffer', 'explorer_input'],
  TrainerInput: ['buffer', 'trainer_input'],
  TasksetConfig: ['buffer', 'explorer_input', 'taskset'],
  StorageConfig: ['buffer', 'explorer_input', 'taskset'],
};

/** A value of the shape the old key took (a mapping for the `*_kwargs` ones). */
const valueFor = (key: string): unknown =>
  key.endsWith('_kwargs')
    ? { priority_fn: 'linear_decay' }
    : key.startsWith('use_')
      ? true
      : key.endsWith('_steps') || key.endsWith('_num') || key.endsWith('_port')
        ? 2
        : 'x';

// Data-driven below: an empty table would register nothing and pass.
test('the renames table is there', () =>
  assert.ok(Object.keys(RENAMES).length >= 5, `${Object.keys(RENAMES).length} renames`));

for (const [id, change] of Object.entries(RENAMES)) {
  const [section, key] = id.split('.');
  const from = RELEASES[Math.max(0, releaseIndex(change.in) - 1)];
  test(`${id} (${change.in}) is carried out when migrating from ${from}`, () => {
    const where = WHERE[section];
    assert.ok(where, `no known place for ${section}: add it to WHERE`);
    const doc: Record<string, unknown> = {};
    let at = doc;
    for (const k of where) at = (at[k] = {}) as Record<string, unknown>;
    at[key] = valueFor(key);
    const readFile = (p: string) => (p === 'x' ? 'actor_rollout_ref:\n  actor:\n    ppo_epochs: 1\n' : undefined);
    const m = migrate(stringify(doc), from, NEWEST_RELEASE, { readFile });
    let out = parse(m.text) as Record<string, unknown> | null;
    for (const k of where) out = (out?.[k] ?? null) as Record<string, unknown> | null;
    assert.ok(!(out && key in out), `\`${where.join('.')}.${key}\` is still there after migrating:\n${m.text}`);
    assert.ok(m.changes.length > 0, 'the change is listed');
  });
}

describe('migrate()', () => {
  test('renames and removals follow the release path, and the release comment names the target', () => {
    const from =
      '# trinity-version: v0.4.0\nalgorithm:\n  optimizer:\n    lr: 0.000001\n    lr_decay_style: cosine\nbuffer:\n  pad_token_id: 0\n  batch_size: 8\n';
    const m = migrate(from, 'v0.4.0', 'main');
    assert.equal(
      m.text,
      '# trinity-version: main\nalgorithm:\n  optimizer:\n    lr: 0.000001\n    lr_scheduler_type: cosine\nbuffer:\n  batch_size: 8\n',
    );
    assert.deepEqual(m.changes.map((c) => c.path).sort(), [
      'algorithm.optimizer.lr_scheduler_type',
      'buffer.pad_token_id',
    ]);
  });

  test('a file with nothing to change still has its release comment moved on', () => {
    assert.equal(
      migrate('# trinity-version: v0.5.0\nmode: both\n', 'v0.5.0', 'main').text,
      '# trinity-version: main\nmode: both\n',
    );
  });
});
