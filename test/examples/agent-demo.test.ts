/**
 * The agent demo (examples/frozen-lake/demo, `npm run demo:agent`): its demonstrations are exactly the conversations
 * Trinity's frozen_lake_workflow holds when the player walks a shortest path (replayed through the real workflow
 * and chat template), its held-out maps share no seed or board with the maps it trains on, and the whole pipeline
 * (data, learned tokenizer, model, SFT then GRPO with evals, the table) runs end to end on a smoke schedule. The full
 * run's numbers (3 seeds, about 2 minutes each) are in docs/runtime.md; CI has no room for them.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { before, describe, test } from 'node:test';
import { initBackend } from '../../runtime/engine/backend';
import type { Pretrained } from '../../runtime/engine/pretrained';
import { frozenLakeWorkflow } from '../../runtime/rft/workflows/frozen-lake';
import { generateRandomMap } from '../../runtime/rft/environments/frozen-lake/random-map';
import { forcedTurns, loadByteChatModel, rolloutModelOf, workflowTask } from '../helpers/byte-chat-model';
import {
  DEMO_COUNTS,
  LAKE,
  demoMaps,
  demonstration,
  shortestPath,
  writeDemoData,
  // @ts-expect-error: a plain .mjs module (the demo's scripts), no declaration file
} from '../../examples/frozen-lake/demo/make-demo-data.mjs';
// @ts-expect-error: a plain .mjs module (the demo's scripts), no declaration file
import { FlatGroups } from '../../examples/frozen-lake/demo/flat-groups.mjs';
// @ts-expect-error: a plain .mjs module (the demo's scripts), no declaration file
import { writeDemoTokenizer } from '../../examples/frozen-lake/demo/demo-tokenizer.mjs';
import { loadTokenizer } from '../../runtime/engine/tokenizer';
import { FROZEN_LAKE_INVALID_HINT } from '../../runtime/rft/environments/frozen-lake/frozen-lake-game';

const ROOT = resolve(__dirname, '..', '..');

let pretrained: Pretrained;
before(async () => {
  await initBackend({ prefer: 'wasm' });
  pretrained = loadByteChatModel(5, 4096);
});

describe('the agent demo', () => {
  test('each demonstration is the conversation frozen_lake_workflow holds on a shortest path, ending at G', async () => {
    const maps = demoMaps({ sft: 6 }).sft;
    for (const { seed, rows } of maps) {
      const path = shortestPath(rows) as string[];
      const messages = demonstration(rows, seed, path) as { role: string; content: string }[];
      const answers = messages.filter((m) => m.role === 'assistant').map((m) => m.content);
      const model = rolloutModelOf(pretrained, { maxResponseTokens: 16 }, 3);
      const [exp] = await frozenLakeWorkflow({
        model,
        task: workflowTask({
          raw: { seed, size: LAKE.size, p: LAKE.p },
          workflowArgs: { env_max_steps: LAKE.envMaxSteps, agent_max_steps: LAKE.agentMaxSteps },
        }),
        repeatTimes: 1,
        runIdBase: 0,
        createReward: () => {
          throw new Error('no reward function');
        },
        auxiliaryModels: [],
        turnSampler: () => forcedTurns(model, answers),
      }).run();
      assert.deepEqual(exp.messages, messages, `seed ${seed}`);
      assert.equal(exp.reward, 1);
      assert.deepEqual(exp.info, { env_steps: path.length, env_done: 1, test_score: 1 });
      assert.deepEqual(generateRandomMap(LAKE.size, LAKE.p, seed, LAKE.envMaxSteps).rows, rows);
    }
  });

  test("every answer is a shortest-path move from the P of its own prompt's map, read back from the text", () => {
    // Independent of the demo's path finder and of the game: the grid parsed from each user message, distances to G
    // by breadth first search over the parsed cells, and the answer must take P one step closer to G.
    const moves: Record<string, [number, number]> = { Left: [0, -1], Down: [1, 0], Right: [0, 1], Up: [-1, 0] };
    const maps = demoMaps({ sft: 400 }).sft as { seed: number; rows: string[] }[];
    let turns = 0;
    for (const { seed, rows } of maps) {
      const messages = demonstration(rows, seed, shortestPath(rows)) as { role: string; content: string }[];
      for (let i = 2; i < messages.length; i += 2) {
        const grid = messages[i - 1].content
          .split('\n')
          .slice(1, 1 + LAKE.size)
          .map((line) =>
            line
              .split('\t')
              .map((c) => c.trim())
              .filter(Boolean),
          );
        const find = (ch: string) => {
          const r = grid.findIndex((row) => row.includes(ch));
          return [r, grid[r].indexOf(ch)];
        };
        const [[pr, pc], [gr, gc]] = [find('P'), find('G')];
        const toGoal = new Map<string, number>([[`${gr},${gc}`, 0]]);
        for (const queue = [[gr, gc]]; queue.length; ) {
          const [r, c] = queue.shift()!;
          for (const [dr, dc] of Object.values(moves)) {
            const [nr, nc] = [r + dr, c + dc];
            if (grid[nr]?.[nc] === undefined || grid[nr][nc] === 'O' || toGoal.has(`${nr},${nc}`)) continue;
            toGoal.set(`${nr},${nc}`, toGoal.get(`${r},${c}`)! + 1);
            queue.push([nr, nc]);
          }
        }
        const answer = /^```(\w+)```$/.exec(messages[i].content)![1];
        const [dr, dc] = moves[answer];
        const here = toGoal.get(`${pr},${pc}`)!;
        assert.equal(toGoal.get(`${pr + dr},${pc + dc}`), here - 1, `seed ${seed} turn ${i / 2}: ${answer}`);
        turns++;
      }
    }
    assert.ok(turns > 1000, `${turns} turns`);
  });

  test("the demo's tokenizer: each row of the map one token, Trinity's system message a few dozen", () => {
    // Under GPT-2's word pieces a row was 8 tokens and the system message 275: the 2-layer model never learned where
    // P and G are (docs/runtime.md "The agent demo").
    const dir = mkdtempSync(join(tmpdir(), 'demo-tokenizer-'));
    const maps = demoMaps({ sft: 400 }).sft as { seed: number; rows: string[] }[];
    const conversations = maps.map((m) => ({ messages: demonstration(m.rows, m.seed, shortestPath(m.rows)) }));
    writeFileSync(join(dir, 'sft.jsonl'), conversations.map((c) => JSON.stringify(c)).join('\n'));
    writeDemoTokenizer(join(dir, 'sft.jsonl'), dir);
    const tok = loadTokenizer(dir);
    const [system, firstPrompt] = conversations[0].messages as { content: string }[];
    const pieces = tok.encode(firstPrompt.content).map((id) => tok.decode([id]));
    assert.deepEqual(
      pieces.slice(1, 1 + LAKE.size),
      firstPrompt.content
        .split('\n')
        .slice(1, 1 + LAKE.size)
        .map((row) => `${row}\n`),
    );
    assert.ok(tok.encode(system.content).length <= 30, `${tok.encode(system.content).length} system tokens`);
    assert.equal(tok.encode(FROZEN_LAKE_INVALID_HINT).length, 1);
    assert.equal(tok.decode(tok.encode(firstPrompt.content)), firstPrompt.content);
    rmSync(dir, { recursive: true });
  });

  test('a shortest path: the hand-checked map, and no path through a hole', () => {
    // Breadth first, moves tried Left, Down, Right, Up: of equally short paths, the one found first.
    // S (0,0) to G (3,3) around the holes: six moves; (3,1) is reached before (2,2), so the path turns down there.
    assert.deepEqual(shortestPath(['SHFF', 'FHFH', 'FFFH', 'HFFG']), [
      'Down',
      'Down',
      'Right',
      'Down',
      'Right',
      'Right',
    ]);
    // S (2,0) to G (0,3): five moves either way round the holes; the way along row 2 is found first.
    assert.deepEqual(shortestPath(['FFFG', 'FHHF', 'SFFF', 'FFFF']), ['Right', 'Right', 'Right', 'Up', 'Up']);
    assert.throws(() => shortestPath(['SH', 'HG']), /no path/);
  });

  test('held-out maps: no seed and no board of the SFT or GRPO maps', () => {
    // The demo's own splits (4,000 demonstrations, 200 GRPO maps, 256 held-out maps).
    const maps = demoMaps(DEMO_COUNTS) as Record<string, { seed: number; rows: string[] }[]>;
    const trained = [...maps.sft, ...maps.train];
    const seeds = new Set(trained.map((m) => m.seed));
    const boards = new Set(trained.map((m) => m.rows.join('/')));
    assert.equal(maps.eval.length, 256);
    for (const m of maps.eval) {
      assert.ok(!seeds.has(m.seed) && !boards.has(m.rows.join('/')), `eval seed ${m.seed}`);
    }
  });

  test('no demonstration outlasts agent_max_steps: the workflow would end the episode before its last turns', (t) => {
    // Among the demo's 4,000 SFT maps a few need 9 moves: their last prompt would no longer say how many steps remain.
    const dir = mkdtempSync(join(tmpdir(), 'agent-demo-data-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const maps = demoMaps(DEMO_COUNTS).sft as { seed: number; rows: string[] }[];
    const tooLong = maps.filter((m) => shortestPath(m.rows).length > LAKE.agentMaxSteps).length;
    assert.ok(tooLong > 0, 'the draw has maps longer than agent_max_steps: the filter is exercised');
    const counts = writeDemoData(DEMO_COUNTS, dir);
    assert.equal(counts.sft, maps.length - tooLong);
    const rows = readFileSync(join(dir, 'sft.jsonl'), 'utf8').trim().split('\n');
    assert.equal(rows.length, counts.sft);
    for (const row of rows) {
      const messages = JSON.parse(row).messages as { role: string; content: string }[];
      assert.ok(messages.filter((m) => m.role === 'assistant').length <= LAKE.agentMaxSteps);
      const last = messages.filter((m) => m.role === 'user').at(-1)!.content;
      assert.match(last, /steps remaining is [1-9]\d*\.$/);
    }
  });

  test('npm run demo:agent, end to end on the smoke schedule: SFT, evals before and after GRPO, the table', (t) => {
    // In a folder of its own: the full demo's data, model and job directories are left as they are.
    const workDir = mkdtempSync(join(tmpdir(), 'agent-demo-'));
    t.after(() => rmSync(workDir, { recursive: true, force: true }));
    const r = spawnSync(
      process.execPath,
      ['--import', 'tsx', 'examples/frozen-lake/demo/demo.mjs', '--smoke', '--seeds', '7', '--work-dir', workDir],
      { cwd: ROOT, encoding: 'utf8' },
    );
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr.slice(-3000)}`);
    assert.match(r.stdout, /^Backend: wasm/m);
    const row = /^7\s+([\d.]+)%\s+([\d.]+)%\s+([+-][\d.]+) pts/m.exec(r.stdout);
    assert.ok(row, r.stdout);
    const jobs = join(workDir, 'checkpoints', 'seed-7', 'trinity-workbench-demo', 'frozen-lake');
    const lines = (stage: string) =>
      readFileSync(join(jobs, stage, 'monitor', 'metrics.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { role: string; step: number; values: Record<string, number> });
    const sft = lines('sft_warmup').filter((l) => l.role === 'trainer');
    assert.deepEqual(
      sft.map((l) => l.step),
      [1, 2],
    );
    // Every assistant turn of a demonstration is trained on (enable_concatenated_multi_turn): the response runs from
    // the first answer (with <|im_end|> and its newline) over the later turns.
    assert.ok(
      sft.some((l) => l.values['response_length/max'] > 20),
      JSON.stringify(sft[0].values),
    );
    const evals = lines('grpo').filter((l) => 'eval/lake-eval/test_score/mean@1' in l.values);
    assert.deepEqual(
      evals.map((l) => l.step),
      [0, 1],
    );
    assert.equal(evals[0].values['eval/lake-eval/test_score/mean@1'], Number(row[1]) / 100);

    // Each GRPO step's line says what GRPO had to learn from: groups whose episodes all got one reward (their
    // advantages are 0), read here from the buffer the trainer trained on, and the trainer's pg_loss and entropy.
    const rewards = new Map<number, number[]>();
    for (const l of readFileSync(join(jobs, 'grpo', 'buffer', 'experience_buffer.jsonl'), 'utf8')
      .trim()
      .split('\n')) {
      const e = JSON.parse(l) as { eid: { batch: number; task: number }; reward: number };
      if (e.eid.batch === 1) rewards.set(e.eid.task, [...(rewards.get(e.eid.task) ?? []), e.reward]);
    }
    const flat = [...rewards.values()].filter((r) => r.every((x) => x === r[0])).length;
    const trained = lines('grpo').find((l) => l.role === 'trainer' && l.step === 1)!.values;
    assert.match(
      r.stderr,
      new RegExp(
        `GRPO step 1 +trained: flat groups ${flat}/${rewards.size} +reward ${trained['critic/score/mean'].toFixed(3)} +pg_loss ${trained['actor/pg_loss'].toFixed(3)} +entropy ${trained['actor/entropy_loss'].toFixed(3)} `,
      ),
      r.stderr,
    );
    assert.equal(
      readFileSync(join(workDir, 'demo-data', 'eval.jsonl'), 'utf8')
        .trim()
        .split('\n').length,
      4,
    );
  });

  test('flat groups: counted per explorer step from the buffer as it grows, a half-written line left for later', () => {
    const dir = mkdtempSync(join(tmpdir(), 'flat-groups-'));
    const file = join(dir, 'experience_buffer.jsonl');
    const line = (batch: number, task: number, reward: number) => JSON.stringify({ eid: { batch, task }, reward });
    const flatGroups = new FlatGroups(file);
    assert.deepEqual(flatGroups.of(1), { flat: 0, groups: 0 }, 'no buffer yet');
    // Step 1: task 0 all 0 (flat), task 1 mixed, task 2 all 1 (flat); its last line is still being written.
    const step1 = [line(1, 0, 0), line(1, 0, 0), line(1, 1, 0), line(1, 1, 1), line(1, 2, 1), line(1, 2, 1)];
    const last = line(1, 0, 1);
    writeFileSync(file, `${step1.join('\n')}\n${last.slice(0, 10)}`);
    assert.deepEqual(flatGroups.of(1), { flat: 2, groups: 3 });
    // The rest of the line makes task 0 mixed; step 2 follows.
    appendFileSync(file, `${last.slice(10)}\n${line(2, 0, 0)}\n${line(2, 0, 0)}\n`);
    assert.deepEqual(flatGroups.of(1), { flat: 1, groups: 3 });
    assert.deepEqual(flatGroups.of(2), { flat: 1, groups: 1 });
    rmSync(dir, { recursive: true });
  });
});
