/**
 * Trinity's Sudoku environment (trinity/common/workflows/envs/sudoku/: sudoku_judge.py, sudoku_generator.py and the
 * prompt and move parsing of sudoku_workflow.py; read from the only copy in the code index, a fork at
 * yanxi-chen/Trinity-RFT@837f826): boards are rows of numbers, 0 for empty.
 * - Valid: no number (zeros aside) twice in a row, a column or a √size × √size block; solved: equal to the solution.
 * - Moves: the response's non-empty lines, each "row col value" (0-8, 0-8, 1-9); any other line, no line, or more
 *   than 5 moves make the whole answer invalid.
 * - A generated puzzle: a full board by randomized backtracking (cells in row order, candidates shuffled), then
 *   `size² // 2` cells (medium) cleared in shuffled order. Trinity shuffles with Python's unseeded `random`; here the
 *   shuffles are NumPy's default_rng(seed), so a seed gives one puzzle, not Trinity's.
 */
import { defaultRng, type NumpyGenerator } from '../../numpy/numpy-random';

export type Board = number[][];

export const SUDOKU_MAX_STEPS = 20;
export const SUDOKU_MAX_MOVES_PER_STEP = 5;

export function isValidSudoku(board: Board): boolean {
  const size = board.length;
  const block = Math.floor(Math.sqrt(size));
  const distinct = (cells: number[]) => {
    const nums = cells.filter((v) => v !== 0);
    return new Set(nums).size === nums.length;
  };
  for (const row of board) if (!distinct(row)) return false;
  for (let c = 0; c < size; c++) if (!distinct(board.map((row) => row[c]))) return false;
  for (let br = 0; br < size; br += block)
    for (let bc = 0; bc < size; bc += block) {
      const cells: number[] = [];
      for (let r = br; r < br + block; r++) for (let c = bc; c < bc + block; c++) cells.push(board[r][c]);
      if (!distinct(cells)) return false;
    }
  return true;
}

export function isSolvedSudoku(board: Board, solution: Board): boolean {
  return board.length === solution.length && board.every((row, r) => row.every((v, c) => v === solution[r][c]));
}

/** `parse_action`: the moves of a response, or null when it is not a list of 1-5 valid "row col value" lines. */
export function parseSudokuMoves(text: string): [number, number, number][] | null {
  const moves: [number, number, number][] = [];
  for (const raw of text.trim().split(/\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/)) {
    const line = raw.trim();
    if (!line) continue;
    const parts = line.split(/\s+/);
    if (parts.length !== 3 || !parts.every((p) => /^[+-]?\d+$/.test(p))) return null;
    const [r, c, v] = parts.map(Number);
    if (!(r >= 0 && r <= 8 && c >= 0 && c <= 8 && v >= 1 && v <= 9)) return null;
    moves.push([r, c, v]);
  }
  return moves.length === 0 || moves.length > SUDOKU_MAX_MOVES_PER_STEP ? null : moves;
}

/**
 * One step of `run`: the answer's moves applied to `board` in place, in order; the step's reward: −1 when the answer
 * does not parse, a move fills a non-empty cell or the board breaks the rules, 1 when it is solved, else 0.
 */
export function applySudokuAnswer(board: Board, solution: Board, answer: string): -1 | 0 | 1 {
  const moves = parseSudokuMoves(answer);
  if (moves === null) return -1;
  for (const [r, c, v] of moves) {
    if (board[r][c] !== 0) return -1;
    board[r][c] = v;
  }
  if (!isValidSudoku(board)) return -1;
  return isSolvedSudoku(board, solution) ? 1 : 0;
}

/** `_build_prompt`: the rules, the allowed format, the step counters and the board; a hint after a no-op step. */
export function sudokuPrompt(board: Board, step: number, unchanged: boolean): string {
  let prompt =
    'You are playing a Sudoku game.\n\n' +
    'Rules:\n' +
    '- The board is 9x9.\n' +
    '- 0 means empty.\n' +
    '- Numbers 1–9 must appear exactly once in every row, column, and 3x3 block.\n' +
    '- You may only fill empty cells.\n\n' +
    'Task:\n' +
    '- In each step, output ONE OR MORE valid moves.\n' +
    `- You may output up to ${SUDOKU_MAX_MOVES_PER_STEP} moves per step.\n\n` +
    'Output format (STRICT):\n' +
    'row col value\n' +
    'row col value\n\n' +
    'Example:\n' +
    '0 2 4\n' +
    '1 3 5\n\n' +
    `Current step: ${step}\n` +
    `Remaining steps: ${SUDOKU_MAX_STEPS - step}\n\n` +
    `Current board:\n${board.map((row) => row.join(' ')).join('\n')}\n`;
  if (unchanged)
    prompt +=
      '\nYour previous response was invalid or had no effect. Please follow the rules and output format strictly.';
  return prompt;
}

/** `SudokuGenerator(size).generate("medium")` with NumPy's seeded shuffles. */
export function generateSudoku(seed: number, size = 9): { puzzle: Board; solution: Board } {
  const block = Math.floor(Math.sqrt(size));
  if (block * block !== size) throw new RangeError('Size must be a perfect square');
  const rng = defaultRng(seed);
  const board: Board = Array.from({ length: size }, () => new Array<number>(size).fill(0));
  fill(board, size, block, rng);
  const solution = board.map((row) => [...row]);
  const cells = rng.shuffle(Array.from({ length: size * size }, (_, i) => i));
  for (const cell of cells.slice(0, Math.floor((size * size) / 2))) board[Math.floor(cell / size)][cell % size] = 0;
  return { puzzle: board, solution };
}

function fill(board: Board, size: number, block: number, rng: NumpyGenerator): boolean {
  const empty = board.flat().indexOf(0);
  if (empty < 0) return true;
  const r = Math.floor(empty / size);
  const c = empty % size;
  for (const v of rng.shuffle(Array.from({ length: size }, (_, i) => i + 1))) {
    if (!fits(board, r, c, v, size, block)) continue;
    board[r][c] = v;
    if (fill(board, size, block, rng)) return true;
    board[r][c] = 0;
  }
  return false;
}

function fits(board: Board, r: number, c: number, v: number, size: number, block: number): boolean {
  if (board[r].includes(v)) return false;
  for (let i = 0; i < size; i++) if (board[i][c] === v) return false;
  const br = Math.floor(r / block) * block;
  const bc = Math.floor(c / block) * block;
  for (let i = br; i < br + block; i++) for (let j = bc; j < bc + block; j++) if (board[i][j] === v) return false;
  return true;
}
