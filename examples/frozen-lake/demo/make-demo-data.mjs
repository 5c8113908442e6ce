// Writes the agent demo's datasets (`npm run demo:agent`) into demo-data/, from the environment itself: 4×4 maps drawn
// as Trinity draws them from a row's size, p and seed (its get_frozen_lake_data.py fields), in three disjoint sets.
//   sft.jsonl    demonstrations: for each map the conversation frozen_lake_workflow would hold with a player that
//                walks a shortest path (Trinity's system prompt and user messages; each answer ```Up``` etc.), in
//                Trinity's SFT messages format ({"messages": [...]}, format.prompt_type: messages); none for the
//                few maps whose shortest walk is longer than agent_max_steps
//   train.jsonl  GRPO tasks: other maps
//   eval.jsonl   held-out maps: seeds, and boards, in neither of the other sets
// Run with tsx (it reads the environment's TypeScript): node --import tsx examples/frozen-lake/demo/make-demo-data.mjs
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { jsonLines, seededRandom } from '../../seeded-random.mjs';
import { generateRandomMap } from '../../../runtime/rft/environments/frozen-lake/random-map.ts';
import {
  FROZEN_LAKE_SYSTEM_PROMPT,
  FrozenLakeGame,
  parseFrozenLakeAction,
} from '../../../runtime/rft/environments/frozen-lake/frozen-lake-game.ts';
import { frozenLakeUserMessage } from '../../../runtime/rft/workflows/frozen-lake.ts';

export const DEMO_DATA = join(dirname(fileURLToPath(import.meta.url)), 'demo-data');
/** The workflow_args of demo.trinity.yaml (Trinity's defaults but for agent_max_steps). */
export const LAKE = { size: 4, p: 0.8, envMaxSteps: 8, agentMaxSteps: 8 };
const MOVES = [
  ['Left', 0, -1],
  ['Down', 1, 0],
  ['Right', 0, 1],
  ['Up', -1, 0],
];

/** A shortest path from S to G over frozen cells (breadth first, moves in Trinity's action order), as action names. */
export function shortestPath(rows) {
  const n = rows.length;
  const find = (ch) => {
    const i = rows.join('').indexOf(ch);
    return [Math.floor(i / n), i % n];
  };
  const [sr, sc] = find('S');
  const key = (r, c) => r * n + c;
  const from = new Map([[key(sr, sc), null]]);
  const queue = [[sr, sc]];
  while (queue.length) {
    const [r, c] = queue.shift();
    if (rows[r][c] === 'G') {
      const path = [];
      for (let k = key(r, c); from.get(k); k = from.get(k).prev) path.unshift(from.get(k).move);
      return path;
    }
    for (const [move, dr, dc] of MOVES) {
      const [nr, nc] = [r + dr, c + dc];
      if (nr < 0 || nc < 0 || nr >= n || nc >= n || rows[nr][nc] === 'H' || from.has(key(nr, nc))) continue;
      from.set(key(nr, nc), { prev: key(r, c), move });
      queue.push([nr, nc]);
    }
  }
  throw new Error(`no path on ${rows.join('/')}`);
}

/** The conversation frozen_lake_workflow holds with a player that answers ```<move>``` along `path`. */
export function demonstration(rows, seed, path) {
  const game = new FrozenLakeGame(rows, false, seed);
  let observation = game.reset();
  const messages = [{ role: 'system', content: FROZEN_LAKE_SYSTEM_PROMPT }];
  for (const [k, move] of path.entries()) {
    messages.push({ role: 'user', content: frozenLakeUserMessage(observation, k, false, LAKE.agentMaxSteps - k) });
    const answer = `\`\`\`${move}\`\`\``;
    messages.push({ role: 'assistant', content: answer });
    const step = game.step(parseFrozenLakeAction(answer));
    observation = step.observation;
    if (step.done !== (k === path.length - 1) || (step.done && step.reward !== 1))
      throw new Error(`the demonstration on seed ${seed} does not end at G`);
  }
  return messages;
}

/** Distinct maps from distinct seeds: `counts` maps each split to its size; no board appears in two splits. */
export function demoMaps(counts, seed = 20261206) {
  const rand = seededRandom(seed);
  const seen = new Set();
  const boards = new Set();
  const out = {};
  for (const [split, count] of Object.entries(counts)) {
    out[split] = [];
    while (out[split].length < count) {
      const s = Math.floor(rand() * 1_000_000);
      if (seen.has(s)) continue;
      seen.add(s);
      const rows = generateRandomMap(LAKE.size, LAKE.p, s, LAKE.envMaxSteps).rows;
      if (boards.has(rows.join('/'))) continue;
      boards.add(rows.join('/'));
      out[split].push({ seed: s, rows });
    }
  }
  return out;
}

const task = (split) => (m, index) => ({ seed: m.seed, size: LAKE.size, p: LAKE.p, index, uid: `${split}-${index}` });

/**
 * The demo's split sizes. 256 held-out maps: on 64 the greedy success rate has a standard error of about 6 points, as
 * large as the gains measured (docs/runtime.md "The agent demo").
 */
export const DEMO_COUNTS = { sft: 4000, train: 200, eval: 256 };

/** Writes the three files into `dir`; returns their row counts. */
export function writeDemoData(counts = DEMO_COUNTS, dir = DEMO_DATA) {
  const maps = demoMaps(counts);
  mkdirSync(dir, { recursive: true });
  // A map whose shortest walk is longer than agent_max_steps would teach turns the workflow never reaches (it ends
  // the episode first; the last prompt would no longer say how many steps remain): such maps give no demonstration.
  const sft = maps.sft
    .map((m) => ({ m, path: shortestPath(m.rows) }))
    .filter(({ path }) => path.length <= LAKE.agentMaxSteps)
    .map(({ m, path }) => ({ messages: demonstration(m.rows, m.seed, path) }));
  writeFileSync(join(dir, 'sft.jsonl'), jsonLines(sft));
  writeFileSync(join(dir, 'train.jsonl'), jsonLines(maps.train.map(task('train'))));
  writeFileSync(join(dir, 'eval.jsonl'), jsonLines(maps.eval.map(task('eval'))));
  return { sft: sft.length, train: maps.train.length, eval: maps.eval.length };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(writeDemoData());
