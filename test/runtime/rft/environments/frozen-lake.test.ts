/**
 * FrozenLake as Trinity plays it: maps for a set of seeds equal NumPy's own draws of Trinity's generator (Debian's
 * python3-numpy as the oracle), Gymnasium's rules as a table of (map, cell, action) → (next cell, reward, done) cases
 * each quoting the source line it comes from, slippery moves following the env's seeded generator step by step (the
 * same oracle), and Trinity's observation text, action parsing and invalid-action rule.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';
import {
  FrozenLakeGame,
  INVALID_ACTION,
  parseFrozenLakeAction,
} from '../../../../runtime/rft/environments/frozen-lake/frozen-lake-game';
import { GymFrozenLake } from '../../../../runtime/rft/environments/frozen-lake/gym-frozen-lake';
import { generateRandomMap, isValidBoard } from '../../../../runtime/rft/environments/frozen-lake/random-map';
import { PYTHON } from '../../../helpers/tfevents';

/** Runs `script` (reading JSON on stdin, writing JSON) in Debian's Python with NumPy. */
function numpyOracle<T>(script: string, input: unknown): T {
  const r = spawnSync(PYTHON, ['-c', script], { input: JSON.stringify(input), encoding: 'utf8' });
  assert.equal(
    r.status,
    0,
    `the NumPy oracle failed (is python3-numpy installed? npm test's set-up installs it):\n${r.stderr}`,
  );
  return JSON.parse(r.stdout) as T;
}

// Trinity's generate_random_map (envs/frozen_lake/utils.py) written against NumPy itself: gymnasium's
// seeding.np_random(seed) is np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed))).
const MAP_ORACLE = `
import json, sys
import numpy as np
def is_valid(board, n, max_steps):
    frontier, seen = [], set()
    sr, sc = np.where(np.array(board) == "S")
    frontier.append((sr[0], sc[0], 0))
    while frontier:
        r, c, steps = frontier.pop()
        if steps > max_steps:
            continue
        if (r, c) not in seen:
            seen.add((r, c))
            for x, y in [(1, 0), (0, 1), (-1, 0), (0, -1)]:
                rn, cn = r + x, c + y
                if rn < 0 or rn >= n or cn < 0 or cn >= n:
                    continue
                if board[rn][cn] == "G":
                    return True
                if board[rn][cn] != "H":
                    frontier.append((rn, cn, steps + 1))
    return False
out = []
for case in json.load(sys.stdin):
    size, p, seed, max_steps = case["size"], case["p"], case["seed"], case["max_steps"]
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed)))
    valid = False
    while not valid:
        p = min(1, p)
        board = rng.choice(["F", "H"], (size, size), p=[p, 1 - p]).tolist()
        while True:
            sr, sc = int(rng.integers(0, size)), int(rng.integers(0, size))
            gr, gc = int(rng.integers(0, size)), int(rng.integers(0, size))
            if (sr, sc) != (gr, gc):
                break
        board[sr][sc] = "S"
        board[gr][gc] = "G"
        valid = is_valid(board, size, max_steps)
    out.append({"rows": ["".join(r) for r in board], "goal": [gr, gc]})
print(json.dumps(out))
`;

describe('FrozenLake maps', () => {
  test("Trinity's generate_random_map: the same maps as NumPy for every seed, size and p tried", () => {
    const cases: { size: number; p: number; seed: number; max_steps: number }[] = [];
    for (const seed of [0, 1, 2, 3, 7, 42, 123, 2024, 99991, 4294967296])
      for (const [size, p, maxSteps] of [
        [2, 0.8, 8],
        [4, 0.8, 8],
        [4, 0.6, 3],
        [6, 0.7, 8],
        [5, 1, 2],
      ])
        cases.push({ size, p, seed, max_steps: maxSteps });
    const expected = numpyOracle<{ rows: string[]; goal: [number, number] }[]>(MAP_ORACLE, cases);
    cases.forEach((c, i) => {
      const got = generateRandomMap(c.size, c.p, c.seed, c.max_steps);
      assert.deepEqual(got, expected[i], `size ${c.size}, p ${c.p}, seed ${c.seed}, max_steps ${c.max_steps}`);
    });
    // Not Gymnasium's generator: start and goal are drawn, not the corners.
    assert.ok(expected.some((m) => m.rows[0][0] !== 'S'));
  });

  test('is_valid: a goal beyond max_steps (counted as the search first meets a cell) is not reachable', () => {
    const board = ['SFFF', 'HHHF', 'FFFF', 'GHHH'].map((r) => r.split(''));
    // The only path is 9 moves long: S→(0,3)→(2,3)→(2,0)→G; the goal is found from a cell popped at step 8.
    assert.equal(isValidBoard(board, 4, 8), true);
    assert.equal(isValidBoard(board, 4, 7), false);
  });

  test('bad sizes and seeds are refused with the value', () => {
    assert.throws(() => generateRandomMap(1, 0.8, 1, 8), /size must be an integer ≥ 2, got 1/);
    assert.throws(() => generateRandomMap(4, 0.8, -1, 8), /seed must be a non-negative integer, got -1/);
  });
});

describe("Gymnasium's FrozenLake rules", () => {
  // (map, cell, gym action) → (next cell, reward, terminated), non-slippery; each quotes the line of
  // gymnasium/envs/toy_text/frozen_lake.py (@04b863d) it checks.
  const MAP = ['SFFH', 'FHFF', 'FFFG'];
  const cases: { s: number; a: number; next: number; reward: number; done: boolean; source: string }[] = [
    { s: 0, a: 0, next: 0, reward: 0, done: false, source: 'if a == LEFT: col = max(col - 1, 0)' },
    { s: 0, a: 3, next: 0, reward: 0, done: false, source: 'elif a == UP: row = max(row - 1, 0)' },
    { s: 0, a: 2, next: 1, reward: 0, done: false, source: 'elif a == RIGHT: col = min(col + 1, ncol - 1)' },
    { s: 0, a: 1, next: 4, reward: 0, done: false, source: 'elif a == DOWN: row = min(row + 1, nrow - 1)' },
    { s: 8, a: 1, next: 8, reward: 0, done: false, source: 'row = min(row + 1, nrow - 1) (bottom edge)' },
    { s: 2, a: 2, next: 3, reward: 0, done: true, source: 'terminated = bytes(newletter) in b"GH"' },
    { s: 4, a: 2, next: 5, reward: 0, done: true, source: 'reward = float(newletter == b"G") (a hole: 0)' },
    { s: 10, a: 2, next: 11, reward: 1, done: true, source: 'reward = float(newletter == b"G")' },
    { s: 7, a: 1, next: 11, reward: 1, done: true, source: 'reward = float(newletter == b"G") (from above)' },
    { s: 5, a: 2, next: 5, reward: 0, done: true, source: 'if letter in b"GH": li.append((1.0, s, 0, True))' },
    { s: 11, a: 0, next: 11, reward: 0, done: true, source: 'if letter in b"GH": li.append((1.0, s, 0, True))' },
  ];
  for (const c of cases) {
    test(`cell ${c.s}, action ${c.a} → ${c.next}, reward ${c.reward}, done ${c.done}: ${c.source}`, () => {
      const env = new GymFrozenLake(MAP, false);
      env.reset(0);
      env.s = c.s;
      const r = env.step(c.a);
      assert.deepEqual([r.state, r.reward, r.terminated, r.prob], [c.next, c.reward, c.done, 1]);
    });
  }

  test('slippery: the intended and both perpendicular moves, 1/3 each (`for b in [(a - 1) % 4, a, (a + 1) % 4]`)', () => {
    const env = new GymFrozenLake(MAP, true);
    assert.deepEqual(
      env.transitions(6, 0).map((t) => [t.next, t.prob]),
      [
        [2, 1 / 3], // (a − 1) mod 4 = up
        [5, 1 / 3], // left, as asked
        [10, 1 / 3], // (a + 1) mod 4 = down
      ],
    );
  });

  test("slippery moves follow the env's generator, reseeded by reset(seed), draw for draw as NumPy", () => {
    const map = ['SFFF', 'FFFF', 'FFFF', 'FFFG'];
    const actions = [2, 1, 1, 2, 3, 0, 1, 2, 2, 1, 1, 2, 1];
    const oracle = numpyOracle<number[][]>(
      `
import json, sys
import numpy as np
rows, actions, seeds = json.load(sys.stdin)
n = len(rows[0])
def inc(s, a):
    r, c = divmod(s, n)
    if a == 0: c = max(c - 1, 0)
    elif a == 1: r = min(r + 1, len(rows) - 1)
    elif a == 2: c = min(c + 1, n - 1)
    else: r = max(r - 1, 0)
    return r * n + c
out = []
for seed in seeds:
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed)))
    start = np.array([c == "S" for c in "".join(rows)], dtype="float64")
    s = int(np.argmax(np.cumsum(start / start.sum()) > rng.random()))
    path = [s]
    for a in actions:
        if "".join(rows)[s] in "GH":
            rng.random(); path.append(s); continue
        moves = [(a - 1) % 4, a, (a + 1) % 4]
        i = int(np.argmax(np.cumsum([1.0 / 3.0] * 3) > rng.random()))
        s = inc(s, moves[i])
        path.append(s)
    out.append(path)
print(json.dumps(out))
`,
      [map, actions, [0, 5, 42]],
    );
    [0, 5, 42].forEach((seed, k) => {
      const env = new GymFrozenLake(map, true);
      const path = [env.reset(seed)];
      for (const a of actions) path.push(env.step(a).state);
      assert.deepEqual(path, oracle[k], `seed ${seed}`);
    });
  });
});

describe("Trinity's FrozenLake game", () => {
  test('the observation: S shown as frozen, P for the player, X in a hole, √ on the goal, tab-separated cells', () => {
    const game = new FrozenLakeGame(['SFH', 'FFG'], false, 0);
    assert.equal(game.reset(), ' P \t _ \t O \t\n _ \t _ \t G \t');
    game.step(3); // right
    assert.equal(game.render(), ' _ \t P \t O \t\n _ \t _ \t G \t');
    const hole = game.step(3);
    assert.deepEqual(hole, { observation: ' _ \t _ \t X \t\n _ \t _ \t G \t', reward: 0, done: true, moved: true });
    const goal = new FrozenLakeGame(['SG'], false, 0);
    goal.reset();
    assert.deepEqual(goal.step(3), { observation: ' _ \t √ \t', reward: 1, done: true, moved: true });
  });

  test('the invalid action and actions outside 1-4 change nothing (reward 0, not done); a wall bump does not move', () => {
    const game = new FrozenLakeGame(['SF', 'FG'], false, 0);
    const start = game.reset();
    for (const a of [INVALID_ACTION, 5, -1])
      assert.deepEqual(game.step(a), { observation: start, reward: 0, done: false, moved: false });
    assert.deepEqual(game.step(4), { observation: start, reward: 0, done: false, moved: false });
  });

  test('action parsing: the last ``` block, trimmed and lower-cased; words or the digits 1-4; else invalid', () => {
    const cases: [string, number][] = [
      ['I go ```Up```', 4],
      ['```left``` then ```  DOWN \n```', 2],
      ['```3```', 3],
      ['```0```', 0],
      ['```5```', 0],
      ['```up```, ```north```', 0],
      ['Up', 0],
      ['```constructor```', 0],
      ['``` Right```trailing', 3],
    ];
    for (const [text, action] of cases) assert.equal(parseFrozenLakeAction(text), action, JSON.stringify(text));
  });
});
