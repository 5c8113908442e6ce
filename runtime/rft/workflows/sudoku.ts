/**
 * `sudoku_workflow` (trinity/common/workflows/envs/sudoku/sudoku_workflow.py, fork copy @837f826): up to 20 steps,
 * each one user message with the board (no system prompt, the model's default sampling), one response, one
 * experience. The moves are applied in order; the step's reward is −1 and the episode ends when the answer does not
 * parse, fills a non-empty cell, changes nothing or breaks the rules; 1 and the end when the board is solved; else 0
 * and the next step (with the no-progress hint when the board did not change). The row's `puzzle` and `solution`
 * (9×9 lists) are the game; without them a puzzle is generated (from the row's `seed`, else 0).
 */
import type { Experience } from '../experience';
import {
  applySudokuAnswer,
  generateSudoku,
  isSolvedSudoku,
  SUDOKU_MAX_STEPS,
  sudokuPrompt,
  type Board,
} from '../environments/sudoku/sudoku';
import { WorkflowError } from './simple';
import type { Workflow, WorkflowContext } from './types';

function boardOf(v: unknown, key: string): Board {
  if (!Array.isArray(v) || v.length !== 9 || v.some((row) => !Array.isArray(row) || row.length !== 9))
    throw new WorkflowError(`sudoku_workflow: the task's \`${key}\` must be a 9×9 list of numbers`);
  return (v as unknown[][]).map((row) =>
    row.map((x) => {
      if (!Number.isInteger(x)) throw new WorkflowError(`sudoku_workflow: the task's \`${key}\` must hold integers`);
      return x as number;
    }),
  );
}

export function sudokuWorkflow(ctx: WorkflowContext): Workflow {
  const raw = ctx.task.raw;
  const game =
    'puzzle' in raw && 'solution' in raw
      ? { puzzle: boardOf(raw.puzzle, 'puzzle'), solution: boardOf(raw.solution, 'solution') }
      : generateSudoku(typeof raw.seed === 'number' ? raw.seed : 0);
  return {
    repeatable: false,
    run: async () => {
      const board = game.puzzle.map((row) => [...row]);
      let last: Board | null = null;
      const exps: Experience[] = [];
      for (let step = 0; step < SUDOKU_MAX_STEPS; step++) {
        const unchanged = last !== null && isSolvedSudoku(board, last);
        const [resp] = await ctx.model.chat([{ role: 'user', content: sudokuPrompt(board, step, unchanged) }]);
        last = board.map((row) => [...row]);
        const reward = applySudokuAnswer(board, game.solution, resp.responseText ?? '');
        exps.push({ ...resp, reward, eid: { ...resp.eid, run: ctx.runIdBase } });
        if (reward !== 0) break;
      }
      return exps;
    },
  };
}
