/**
 * Trinity's Sudoku rules as a table of (board, answer) → (reward, episode over) cases, each quoting the line of
 * sudoku_workflow.py / sudoku_judge.py (fork copy @837f826) it checks; the prompt text; generated puzzles; and the
 * workflow on a real model, whose random answer ends the episode with −1 after one experience.
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { initBackend } from '../../../../runtime/engine/backend';
import {
  applySudokuAnswer,
  generateSudoku,
  isValidSudoku,
  sudokuPrompt,
  type Board,
} from '../../../../runtime/rft/environments/sudoku/sudoku';
import { sudokuWorkflow } from '../../../../runtime/rft/workflows/sudoku';
import { loadByteChatModel, rolloutModelOf, workflowTask } from '../../../helpers/byte-chat-model';

const SOLUTION: Board = [
  [5, 3, 4, 6, 7, 8, 9, 1, 2],
  [6, 7, 2, 1, 9, 5, 3, 4, 8],
  [1, 9, 8, 3, 4, 2, 5, 6, 7],
  [8, 5, 9, 7, 6, 1, 4, 2, 3],
  [4, 2, 6, 8, 5, 3, 7, 9, 1],
  [7, 1, 3, 9, 2, 4, 8, 5, 6],
  [9, 6, 1, 5, 3, 7, 2, 8, 4],
  [2, 8, 7, 4, 1, 9, 6, 3, 5],
  [3, 4, 5, 2, 8, 6, 1, 7, 9],
];
/** The solution with (0,0), (0,1) and (4,4) emptied. */
const PUZZLE: Board = SOLUTION.map((row, r) => row.map((v, c) => ((r === 0 && c < 2) || (r === 4 && c === 4) ? 0 : v)));

describe("Trinity's Sudoku rules", () => {
  const cases: { answer: string; board?: Board; reward: number; source: string }[] = [
    { answer: '0 0 5\n0 1 3', reward: 0, source: '# Intermediate step: reward=0.0' },
    {
      answer: '0 0 5\n0 1 3\n4 4 5',
      reward: 1,
      source: 'if self.judge.is_solved(self.board, self.solution): reward=1.0',
    },
    { answer: '0 0 3', reward: -1, source: 'not self.judge.is_valid(self.board) (3 twice in row 0)' },
    { answer: '0 2 4', reward: -1, source: 'if self.board[r][c] != 0: invalid_move = True' },
    { answer: 'put 5 at 0 0', reward: -1, source: 'if len(parts) != 3: return None' },
    { answer: '0 0 x', reward: -1, source: 'r, c, v = map(int, parts) / except ValueError: return None' },
    { answer: '9 0 5', reward: -1, source: 'if not (0 <= r <= 8 and 0 <= c <= 8 and 1 <= v <= 9): return None' },
    { answer: '   \n ', reward: -1, source: 'if not actions ...: return None' },
    {
      answer: '0 0 5\n0 1 3\n4 4 5\n1 1 1\n2 2 2\n3 3 3',
      reward: -1,
      source: 'len(actions) > self.max_moves_per_step',
    },
  ];
  for (const c of cases) {
    test(`${JSON.stringify(c.answer)} → reward ${c.reward}: ${c.source}`, () => {
      const board = PUZZLE.map((row) => [...row]);
      const reward = applySudokuAnswer(board, SOLUTION, c.answer);
      assert.equal(reward, c.reward);
    });
  }

  test('the judge: zeros are empty; a repeat in a row, column or 3×3 block is invalid', () => {
    assert.equal(isValidSudoku(PUZZLE), true);
    const col = PUZZLE.map((row) => [...row]);
    col[0][0] = 8; // column 0 holds 8 at row 3
    assert.equal(isValidSudoku(col), false);
    const block = PUZZLE.map((row) => [...row]);
    block[4][4] = 7; // 7 is at (3,3) of the middle block, not in row 4 or column 4
    assert.equal(isValidSudoku(block), false);
  });

  test("the prompt: Trinity's rules and format, step counters, the board row by row", () => {
    const p = sudokuPrompt(PUZZLE, 3, false);
    assert.ok(p.startsWith('You are playing a Sudoku game.\n\nRules:\n- The board is 9x9.\n'));
    assert.ok(p.includes('- You may output up to 5 moves per step.\n\n'));
    assert.ok(
      p.endsWith(
        'Current step: 3\nRemaining steps: 17\n\nCurrent board:\n0 0 4 6 7 8 9 1 2\n' +
          PUZZLE.slice(1)
            .map((r) => r.join(' '))
            .join('\n') +
          '\n',
      ),
    );
    assert.ok(sudokuPrompt(PUZZLE, 1, true).endsWith('Please follow the rules and output format strictly.'));
  });

  test('generated puzzles: a full valid solution, half its cells cleared, the rest kept; one per seed', () => {
    for (const seed of [0, 1, 7]) {
      const { puzzle, solution } = generateSudoku(seed);
      assert.equal(isValidSudoku(solution), true);
      assert.ok(solution.flat().every((v) => v >= 1 && v <= 9));
      assert.equal(puzzle.flat().filter((v) => v === 0).length, 40);
      puzzle.forEach((row, r) => row.forEach((v, c) => v !== 0 && assert.equal(v, solution[r][c])));
      assert.deepEqual(generateSudoku(seed), { puzzle, solution });
    }
  });
});

describe('sudoku_workflow', () => {
  before(async () => {
    await initBackend({ prefer: 'wasm' });
  });

  test("a model's unparsable answer: one experience of the board's prompt, reward −1, episode over", async () => {
    const model = rolloutModelOf(loadByteChatModel(17, 1024), {}, 2);
    const task = workflowTask({ raw: { puzzle: PUZZLE, solution: SOLUTION } });
    const exps = await sudokuWorkflow({
      model,
      task,
      repeatTimes: 1,
      runIdBase: 3,
      createReward: () => {
        throw new Error('unused');
      },
      auxiliaryModels: [],
    }).run();
    assert.equal(exps.length, 1);
    assert.equal(exps[0].reward, -1);
    assert.equal(exps[0].eid.run, 3);
    assert.equal(exps[0].promptText, model.renderChat([{ role: 'user', content: sudokuPrompt(PUZZLE, 0, false) }]));
  });

  test('a row without a 9×9 puzzle is refused, naming the key', () => {
    assert.throws(
      () =>
        sudokuWorkflow({
          model: undefined as never,
          task: { raw: { puzzle: [[1]], solution: SOLUTION } } as never,
          repeatTimes: 1,
          runIdBase: 0,
          createReward: () => {
            throw new Error();
          },
          auxiliaryModels: [],
        }),
      /`puzzle` must be a 9×9 list/,
    );
  });
});
