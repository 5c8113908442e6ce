/**
 * TRN321: the first prompt of an episode against the rollout model's context, counted with the model's own
 * tokenizer and chat template (`CheckHost.promptTokens`): a multi-turn workflow's on the first row of a local
 * taskset, then the turns that fit (TRN322, turn-budget.ts) from the same count; a single-turn workflow's (simple,
 * math, math_boxed, math_eval, as simple.ts builds them) on every row of the taskset up to a bound (ROW_BOUND rows,
 * COUNT_MS of counting: the message says which), the longest reported.
 *
 * What Trinity does with a prompt too long (trinity/common/models/model.py @e83f13c, `_handle_prompt_truncation`
 * and `convert_messages_to_experience`): with `enable_prompt_truncation` on and the prompt longer than
 * `max_prompt_tokens`, the model is not called; the experience holds the prompt cut to `max_prompt_tokens`, the
 * fixed text "[This experience is masked out due to overlong prompt]", reward 0 and `prompt_truncated`, so it
 * trains nothing. With it off, vLLM is asked for the whole prompt and refuses one that leaves no room under
 * `max_model_len`.
 */
import type { CheckContext, PromptFormat } from './check-context';
import { statSync } from 'node:fs';
import { peekDataset } from '../datasets/peek-dataset';
import type { DatasetPeek } from '../datasets/peek-result';
import type { TasksetPath } from '../config-path';
import { workflowTypePath } from './tasksets';
import { checkTurnBudget, COUNTED_TURNS, turnLimitOf } from './turn-budget';

/** Rows a single-turn prompt is counted on at most, and the bytes read for them. */
export const ROW_BOUND = 2000;
const ROW_BYTES = 16 * 1024 * 1024;
/** Counting stops after this long (the language server's worker thread, or the CLI's own). */
export const COUNT_MS = 3000;
/** Rows counted at once between looks at the clock. */
const CHUNK = 50;

/** What was counted: the rows and whether they are all of the split (else the bound that stopped it). */
interface Counted {
  rows: Record<string, unknown>[];
  all: boolean;
  stoppedBy?: 'rows' | 'time';
}

export async function checkEpisodeBudget(
  ctx: CheckContext,
  base: TasksetPath,
  peek: DatasetPeek,
  local?: string,
): Promise<void> {
  const count = ctx.host.promptTokens;
  const modelPath = ctx.get('model.model_path');
  const row = peek.rows[0];
  if (!count || typeof modelPath !== 'string' || !row || ctx.get(`${base}.format.workflow_key`)) return;
  const workflow = ctx.get(workflowTypePath(ctx, base));
  if (typeof workflow !== 'string') return;
  const workflowArgs = (ctx.get(`${base}.workflow_args`) ?? {}) as Record<string, unknown>;
  const limit = turnLimitOf(ctx, base, workflow);
  const turns = Math.min(limit?.turns ?? 1, COUNTED_TURNS);
  const format = promptFormat(ctx, base);
  // A multi-turn episode is counted on its first row (one map); a single-turn prompt on every row, up to the bound.
  const counted: Counted = limit ? { rows: [row], all: false } : await rowsToCount(ctx, base, peek, local);
  const ask = (r: Record<string, unknown>) =>
    count({ modelPath, baseDirs: ctx.host.baseDirs ?? [], workflow, workflowArgs, row: r, turns, format });
  const counts: (number[] | undefined)[] = [];
  const deadline = Date.now() + COUNT_MS;
  for (let i = 0; i < counted.rows.length; i += CHUNK) {
    if (i > 0 && Date.now() > deadline) {
      counted.all = false;
      counted.stoppedBy = 'time';
      break;
    }
    counts.push(...(await Promise.all(counted.rows.slice(i, i + CHUNK).map(ask))));
    if (i === 0 && counts[0] === undefined) break; // the workflow's prompt or the tokenizer is unknown here
  }
  const rows = counted.rows.slice(0, counts.length);
  let longest = -1;
  counts.forEach((c, i) => {
    if (c?.[0] !== undefined && (longest < 0 || c[0] > counts[longest]![0])) longest = i;
  });
  if (longest < 0) return;
  const prompts = counts[longest]!;
  const n = prompts[0];
  const bound =
    counted.stoppedBy === 'time'
      ? ` (counting stops after ${COUNT_MS / 1000} s)`
      : counted.stoppedBy === 'rows'
        ? ` (counting stops at ${ROW_BOUND} rows)`
        : '';
  const which =
    rows.length > 1
      ? `the longest prompt in ${counted.all ? `all ${rows.length}` : `the first ${rows.length}`} rows of \`${base}.path\`${bound} (row ${longest + 1}`
      : `the first prompt of \`${base}.path\` (row 1`;
  // math_boxed_workflow with `use_base` sends plain text through `generate`, no chat template.
  const raw = /^(async_)?math_boxed_workflow$/.test(workflow) && workflowArgs.use_base === true;
  const under = raw
    ? `${modelPath}'s tokenizer (plain text: \`use_base\` sends no chat template)`
    : `${modelPath}'s chat template`;
  const first = `${which}, \`${workflow}\`) is ${n} tokens under ${under}`;
  if (!checkFirstPrompt(ctx, n, first) && limit) checkTurnBudget(ctx, base, limit, prompts, first);
}

/** What a single-turn workflow's prompt is built from besides the row (Trinity's `FormatConfig` and reward). */
function promptFormat(ctx: CheckContext, base: TasksetPath): PromptFormat {
  const text = (v: unknown) => (typeof v === 'string' ? v : null);
  return {
    promptKey: text(ctx.get(`${base}.format.prompt_key`)) ?? 'prompt',
    systemPrompt: text(ctx.get(`${base}.format.system_prompt`)),
    replyPrefix: text(ctx.get(`${base}.format.reply_prefix`)),
    rewardFn: text(ctx.get(`${base}.default_reward_fn_type`)),
  };
}

/** TRN321; whether it reported. */
function checkFirstPrompt(ctx: CheckContext, n: number, first: string): boolean {
  const truncation = ctx.get('model.enable_prompt_truncation') === true;
  const p = ctx.get('model.max_prompt_tokens');
  if (truncation && typeof p === 'number' && n > p) {
    const derived = ctx.written('model.max_prompt_tokens') ? '' : ' (`max_model_len` − `max_response_tokens`)';
    ctx.report(
      'TRN321',
      `${capital(first)}, more than \`max_prompt_tokens\` ${p}${derived}. With \`enable_prompt_truncation\` on, Trinity does not call the model for it: the experience holds the prompt cut to ${p} tokens and a fixed text, with reward 0, and trains nothing. Raise \`max_prompt_tokens\` to at least ${n} (and \`max_model_len\` with it).`,
      budgetKey(ctx),
    );
    return true;
  }
  const m = ctx.get('model.max_model_len');
  if (typeof m !== 'number' || n < m) return false;
  ctx.report(
    'TRN321',
    `${capital(first)}; with \`max_model_len\` ${m}, the episode has room for ${m - n} more tokens: not one token of an answer, and vLLM refuses the request. Raise \`max_model_len\` above ${n}.`,
    ctx.written('model.max_model_len') ? 'model.max_model_len' : 'model',
  );
  return true;
}

/** The key to change: `max_prompt_tokens` where written, else `max_model_len` it is derived from. */
function budgetKey(ctx: CheckContext): 'model.max_prompt_tokens' | 'model.max_model_len' | 'model' {
  if (ctx.written('model.max_prompt_tokens')) return 'model.max_prompt_tokens';
  return ctx.written('model.max_model_len') ? 'model.max_model_len' : 'model';
}

function capital(s: string): string {
  return s[0].toUpperCase() + s.slice(1);
}

/**
 * A single-turn workflow's rows: the split read again up to ROW_BOUND rows (a JSON Lines or CSV file within
 * ROW_BYTES, a JSON document, parquet), else the peeked rows. `all` where the read stopped before either limit.
 */
async function rowsToCount(ctx: CheckContext, base: TasksetPath, peek: DatasetPeek, local?: string): Promise<Counted> {
  const few: Counted = { rows: peek.rows, all: false };
  if (!local) return few;
  const result = await (ctx.host.peekDataset ?? peekDataset)(local, {
    split: String(ctx.get(`${base}.split`) ?? 'train'),
    subsetName: typeof ctx.get(`${base}.subset_name`) === 'string' ? String(ctx.get(`${base}.subset_name`)) : undefined,
    baseDir: '/',
    maxRows: ROW_BOUND + 1,
    maxBytes: ROW_BYTES,
  });
  if (!result?.ok || result.peek.rows.length < peek.rows.length) return few;
  const rows = result.peek.rows;
  if (rows.length > ROW_BOUND) return { rows: rows.slice(0, ROW_BOUND), all: false, stoppedBy: 'rows' };
  const withinBytes = result.peek.files.every((f) => !f.endsWith('.gz') && sizeOf(f) < ROW_BYTES);
  const textual = result.peek.format === 'jsonl' || result.peek.format === 'csv';
  return { rows, all: !textual || withinBytes };
}

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return Infinity;
  }
}
