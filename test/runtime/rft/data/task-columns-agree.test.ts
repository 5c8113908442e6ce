/**
 * The checker and the runtime agree on which `format` columns each workflow the runtime runs reads: for every one,
 * a taskset whose rows lack the prompt (or the response) column gets TRN305 from `checkConfig` exactly when the
 * runtime's readTasks refuses it naming that column. One table (runtime/config/model/task-columns.ts) decides both.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { describe, it } from 'node:test';
import { checkConfig } from '../../../../runtime/config/check-config';
import { DataError } from '../../../../runtime/config/datasets/data-error';
import { readTasks } from '../../../../runtime/rft/data/tasks';
import { knownWorkflows } from '../../../../runtime/rft/workflows/registry';
import { scratchDir } from './helpers';

const scratch = scratchDir('rft-task-columns-');
const COLUMNS = { prompt_key: 'ask', response_key: 'truth_col' } as const;
type FormatKey = keyof typeof COLUMNS;

/** Rows with every column a workflow might read except `missing`. */
function writeRows(dir: string, missing: FormatKey): string {
  const row: Record<string, unknown> = {
    ask: 'What is 2 + 2?',
    truth_col: '4',
    question: 'What is 2 + 2?',
    size: 4,
    p: 0.8,
    seed: 7,
    answer: '4',
  };
  delete row[COLUMNS[missing]];
  return scratch.write(`${dir}/train.jsonl`, JSON.stringify(row) + '\n');
}

function config(path: string, workflow: string): string {
  return [
    'mode: explore',
    'model:',
    '  model_path: m',
    '  max_model_len: 1024',
    'buffer:',
    '  explorer_input:',
    '    taskset:',
    `      path: ${path}`,
    '      split: train',
    `      default_workflow_type: ${workflow}`,
    '      format:',
    `        prompt_key: ${COLUMNS.prompt_key}`,
    `        response_key: ${COLUMNS.response_key}`,
    '',
  ].join('\n');
}

async function checkerFlags(dir: string, workflow: string, key: FormatKey): Promise<boolean> {
  const r = await checkConfig(config(dir, workflow), {
    release: 'main',
    host: { baseDirs: ['/'], exists: existsSync },
  });
  return r.diagnostics.some((d) => d.code === 'TRN305' && d.message.includes(`format.${key}\``));
}

async function runtimeRefuses(dir: string, workflow: string, key: FormatKey): Promise<boolean> {
  try {
    await readTasks(
      { path: dir, default_workflow_type: workflow, format: { ...COLUMNS } },
      { baseDir: '/', workflows: knownWorkflows() },
    );
    return false;
  } catch (e) {
    assert.ok(e instanceof DataError, `${workflow}: ${String(e)}`);
    assert.equal(e.key, COLUMNS[key], `${workflow}: ${e.message}`);
    return true;
  }
}

describe('task columns: the checker and the runtime read the same ones', () => {
  it('for every workflow the runtime runs, a missing prompt or response column is flagged by both or neither', async () => {
    const disagree: string[] = [];
    let flagged = 0;
    for (const workflow of knownWorkflows()) {
      for (const key of Object.keys(COLUMNS) as FormatKey[]) {
        const dir = `${scratch.path}/${workflow}-${key}`;
        writeRows(dir.slice(scratch.path.length + 1), key);
        const checker = await checkerFlags(dir, workflow, key);
        const runtime = await runtimeRefuses(dir, workflow, key);
        if (checker !== runtime) disagree.push(`${workflow} without ${key}: checker ${checker}, runtime ${runtime}`);
        if (checker) flagged++;
      }
    }
    assert.deepEqual(disagree, []);
    assert.ok(flagged >= 10, `the prompt/answer workflows are flagged (${flagged})`);
  });

  it("math_eval_workflow: rows of `question` and `answer` run without a prompt column, as Trinity's MathEvalWorkflow", async () => {
    const path = scratch.write('math-eval/train.jsonl', JSON.stringify({ question: 'What is 2 + 2?', answer: '4' }));
    const r = await readTasks(
      { path, default_workflow_type: 'math_eval_workflow', format: { response_key: 'answer' } },
      { baseDir: '/' },
    );
    assert.equal(r.tasks.length, 1);
    assert.equal(r.tasks[0].truth, '4');
  });
});
