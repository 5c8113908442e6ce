/**
 * A Trinity run's episodes, from Trinity's own SQLite experience buffer, in the Rollouts tab of Debian's Chromium:
 * real FrozenLake episodes (agent-records.ts) stored as Trinity v0.5.2/main stores them (TRXP `experience_bytes`
 * in the ExperienceModel table, by Python's pickle: test/helpers/trinity-buffer.ts), found through the run's
 * config (job-rollouts.ts), read by `trinity-workbench rollouts` (dist/cli.js) in a Node process as the editor
 * reads them, their tokens decoded by the config's model folder, posted as the panel posts them; then read back from
 * the DOM: the groups, each episode's turns and roles, its trained-token spans against the stored action mask and
 * their texts against the run's own records (and by id, for an episode read without a tokenizer).
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { readBufferRollouts, rolloutsOfJob } from '../../client/dashboard/job-rollouts';
import { buildByteTokenizer, writeTokenizerFiles } from '../../runtime/engine/tokenizer';
import type { RolloutSample } from '../../runtime/protocol';
import { trinitySpecOf, writeTrinityBuffer } from '../helpers/trinity-buffer';
import { frozenLakeRecords } from './agent-records';
import { maskSpansShown } from './mask-spans';
import { DashboardPage, ROOT, showTab, THEMES, type ThemeName } from './harness';

// The step transcripts.test.ts records too: the records are made once per process.
const STEP = 7;
let dash: DashboardPage;
let page: Page;
let samples: RolloutSample[];
let origin: string;

const record = (k: string) => samples.find((s) => `${s.task}#${s.run}` === k)!;

before(async () => {
  const { exps, samples: recorded } = await frozenLakeRecords(STEP);
  samples = recorded;
  const dir = mkdtempSync(join(tmpdir(), 'twb-trinity-run-'));
  writeTrinityBuffer({
    file: join(dir, 'lake.db'),
    table: 'frozen_lake_buffer',
    layout: 'v0.4',
    format: 'trxp',
    rows: exps.map((e, i) => {
      const spec = trinitySpecOf(e);
      // The explorer-side GRPO advantage, spread over the tokens as Trinity's advantage_fn stores it.
      const a = samples[i].advantage;
      return { experience: a === undefined ? spec : { ...spec, advantages: spec.action_mask!.map(() => a) } };
    }),
  });
  // The run's model folder beside its config: the byte tokenizer the episodes were made with.
  mkdirSync(join(dir, 'model'));
  writeFileSync(join(dir, 'model', 'config.json'), JSON.stringify({ model_type: 'qwen2' }));
  writeTokenizerFiles(join(dir, 'model'), buildByteTokenizer());
  // The run's resolved config names the buffer and the model by paths relative to the config's folder.
  const resolved = {
    model: { model_path: 'model' },
    buffer: {
      trainer_input: {
        experience_buffer: { name: 'frozen_lake_buffer', storage_type: 'sql', path: 'sqlite:///lake.db' },
      },
    },
  };
  const job = join(dir, 'checkpoints', 'lake', 'run');
  mkdirSync(job, { recursive: true });
  const found = rolloutsOfJob(job, resolved, dir, 20)!;
  assert.ok(found && 'buffer' in found, 'the buffer is found from the config');
  origin = found.origin;
  const read = await readBufferRollouts(process.execPath, join(ROOT, 'dist', 'cli.js'), found.buffer, 20, found.model);
  assert.equal(read.error, undefined);
  assert.equal(read.note, undefined);
  assert.equal(read.steps.length, 1);
  // One episode again as a buffer read without a tokenizer gives it (task 7/9): its tokens have ids only.
  const bare = read.steps[0].samples.find((x) => x.episode?.task === '7/0' && x.episode.run === 0)!;
  read.steps[0].samples.push({ ...bare, episode: { ...bare.episode!, task: '7/9', tokenTexts: undefined } });
  dash = await DashboardPage.open({ width: 1200, height: 1000 });
  page = dash.page;
  await dash.post({
    type: 'init',
    run: { key: 'k', title: 'frozen lake (Trinity)', jobDir: job, status: 'finished' },
    series: [],
  });
  for (const r of read.steps) await dash.post({ type: 'rollouts', ...r, origin });
  await showTab(page, 'rollouts');
  await dash.frames();
});

after(async () => {
  await dash?.close();
});

async function open(k: string): Promise<void> {
  await page.click(`.episode-card[data-key="${k}"]`);
  await page.evaluate(() => (globalThis as any).__rollouts.transcripts.fillAll());
}

async function tokensShown(on: boolean): Promise<void> {
  if ((await page.$eval('#episode-tokens', (el: any) => el.checked)) !== on) await page.click('#episode-tokens');
  await dash.frames();
  await page.evaluate(() => (globalThis as any).__rollouts.transcripts.fillAll());
}

describe('a Trinity run’s episodes from its SQLite experience buffer', () => {
  test('the groups and each episode’s reward and advantage are the stored experiences’', async () => {
    assert.equal(origin, 'experience buffer lake.db (table frozen_lake_buffer)');
    assert.equal(await page.textContent('#episodes-caption'), '7 episodes in 4 groups');
    const cards = await page.$$eval('#episode-groups .episode-card', (els) =>
      els.map((b: any) => ({
        key: b.dataset.key,
        facts: Object.fromEntries([...b.querySelectorAll('dd')].map((dd: any) => [dd.classList[0], dd.textContent])),
      })),
    );
    assert.deepEqual(
      cards.map((c) => c.key),
      ['7/0#0', '7/0#1', '7/0#2', '7/1#0', '7/1#1', '7/2#0', '7/9#0'],
    );
    for (const c of cards.slice(0, 5)) {
      const r = record(c.key);
      assert.equal(c.facts.reward, String(Number(r.reward.toFixed(4))), c.key);
      assert.equal(c.facts.advantage, String(Number(r.advantage!.toFixed(4))), c.key);
      assert.equal(c.facts['env-steps'], String(r.metrics!.env_steps), c.key);
    }
  });

  test('an episode’s transcript: its messages in order, roles and text as stored; <script> stays text', async () => {
    for (const k of ['7/0#0', '7/0#2', '7/1#1']) {
      await open(k);
      const turns = await page.$$eval('#transcript-turns .turn', (els) =>
        els.map((t: any) => ({ role: t.dataset.role, text: t.querySelector('.turn-text').textContent })),
      );
      assert.deepEqual(
        turns,
        record(k).messages!.map((m) => ({ role: m.role, text: m.content })),
        k,
      );
    }
    assert.equal(await page.$$eval('#transcript-turns script', (s) => s.length), 0);
  });

  test("trained tokens: the spans read back equal the stored action mask, each token's text the run's own", async () => {
    for (const k of ['7/0#0', '7/0#1', '7/1#0']) {
      await open(k);
      await tokensShown(true);
      const [{ mask, text }] = await maskSpansShown(page);
      const r = record(k);
      assert.deepEqual(mask, r.actionMask, k);
      // Trinity stores ids; the config's model folder decodes them to the texts our own run recorded.
      assert.equal(text, r.tokenTexts!.join(''), k);
      assert.doesNotMatch((await page.textContent('#transcript'))!, /Token texts were not recorded/);
    }
    // Read without a tokenizer, each token is shown by id.
    await open('7/9#0');
    const [{ text }] = await maskSpansShown(page);
    assert.equal(
      text,
      record('7/0#0')
        .responseTokens!.map((id) => `#${id} `)
        .join(''),
    );
    assert.match((await page.textContent('#transcript'))!, /Token texts were not recorded: tokens are shown by id\./);
    await tokensShown(false);
  });

  test('screenshots in light, dark and high contrast: the groups, a transcript, its trained tokens', async () => {
    mkdirSync(join(ROOT, 'test-results'), { recursive: true });
    await open('7/0#0');
    for (const name of Object.keys(THEMES) as ThemeName[]) {
      await dash.setTheme(name);
      await tokensShown(false);
      await page.screenshot({ path: join(ROOT, 'test-results', `trinity-buffer-${name}.png`), fullPage: true });
      await tokensShown(true);
      await page
        .locator('#transcript')
        .screenshot({ path: join(ROOT, 'test-results', `trinity-buffer-tokens-${name}.png`) });
    }
    await tokensShown(false);
  });
});
