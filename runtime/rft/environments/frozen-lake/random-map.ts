/**
 * FrozenLake maps as Trinity draws them (trinity/common/workflows/envs/frozen_lake/utils.py @1764513, adapted from
 * rLLM's environments/frozenlake/frozenlake.py): `generate_random_map(size, p, seed, max_steps)` seeds Gymnasium's
 * `seeding.np_random(seed)` (= `np.random.default_rng(seed)`), then repeats until the board is valid: a size × size
 * board of F (probability p) and H by `choice(["F", "H"], (size, size), p=[p, 1 − p])`, then start and goal cells by
 * four `integers(0, size)` draws (redrawn together while they coincide), S and G written over the board. Valid means
 * the depth-first search of `is_valid` reaches G within `max_steps` moves. Unlike Gymnasium's own generator, start
 * and goal are random cells, not the corners.
 */
import { defaultRng } from '../../numpy/numpy-random';

export interface FrozenLakeMap {
  /** One string per row of S, F, H, G. */
  rows: string[];
  /** (row, col) of G. */
  goal: [number, number];
}

/**
 * Trinity's `is_valid`: a depth-first search (a stack, neighbours pushed down, right, up, left) from S over cells
 * that are not holes, where a cell is expanded once, at the step count it is first popped with, and not past
 * `maxSteps`; true as soon as a neighbour of an expanded cell is G. The search order decides the answer (a cell
 * first reached by a long detour is not expanded again), so it is kept exactly.
 */
export function isValidBoard(board: readonly (readonly string[])[], size: number, maxSteps: number): boolean {
  let start: [number, number] | undefined;
  for (let r = 0; r < board.length && !start; r++)
    for (let c = 0; c < board[r].length; c++)
      if (board[r][c] === 'S') {
        start = [r, c];
        break;
      }
  if (!start) throw new Error('is_valid: the board has no start cell');
  const frontier: [number, number, number][] = [[start[0], start[1], 0]];
  const discovered = new Set<number>();
  const directions: [number, number][] = [
    [1, 0],
    [0, 1],
    [-1, 0],
    [0, -1],
  ];
  while (frontier.length > 0) {
    const [r, c, steps] = frontier.pop()!;
    if (steps > maxSteps) continue;
    if (discovered.has(r * size + c)) continue;
    discovered.add(r * size + c);
    for (const [dr, dc] of directions) {
      const rn = r + dr;
      const cn = c + dc;
      if (rn < 0 || rn >= size || cn < 0 || cn >= size) continue;
      if (board[rn][cn] === 'G') return true;
      if (board[rn][cn] !== 'H') frontier.push([rn, cn, steps + 1]);
    }
  }
  return false;
}

/** Trinity's `generate_random_map(size, p, seed, max_steps)`. */
export function generateRandomMap(size: number, p: number, seed: number, maxSteps: number): FrozenLakeMap {
  if (!Number.isInteger(size) || size < 2) throw new RangeError(`frozen lake size must be an integer ≥ 2, got ${size}`);
  if (!Number.isInteger(seed) || seed < 0)
    throw new RangeError(`frozen lake seed must be a non-negative integer, got ${seed}`);
  const frozen = Math.min(1, p);
  const rng = defaultRng(seed);
  for (;;) {
    const cells = rng.choiceWeighted([frozen, 1 - frozen], size * size);
    const board = Array.from({ length: size }, (_, r) => cells.slice(r * size, (r + 1) * size).map((i) => 'FH'[i]));
    let start: [number, number];
    let goal: [number, number];
    do {
      start = [rng.integers(0, size), rng.integers(0, size)];
      goal = [rng.integers(0, size), rng.integers(0, size)];
    } while (start[0] === goal[0] && start[1] === goal[1]);
    board[start[0]][start[1]] = 'S';
    board[goal[0]][goal[1]] = 'G';
    if (isValidBoard(board, size, maxSteps)) return { rows: board.map((row) => row.join('')), goal };
  }
}
