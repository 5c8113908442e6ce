/**
 * Trinity's single-turn workflows (trinity/common/workflows/workflow.py, customized_math_workflows.py,
 * eval_workflow.py): messages from the task, n responses from the model, each scored by the reward function.
 */
import type { PromptFormat } from '../../config/check/check-context';
import type { ChatMessage } from '../../engine/tokenizer';
import type { Experience } from '../experience';
import { verifyMathAnswer } from '../rewards/qwen-verify';
import { timed } from '../monitor/phase-times';
import type { RewardFn, Workflow, WorkflowContext } from './types';

export class WorkflowError extends Error {}

const R1_SYSTEM_PROMPT = `A conversation between User and Assistant. The user asks a question, and the Assistant solves it. The assistant first thinks about the reasoning process in the mind and then provides the user with the answer. The reasoning process and answer are enclosed within <think> </think> and <answer> </answer> tags, respectively, i.e.,
<think> reasoning process here </think>
<answer> answer here </answer>.
`;

const BOXED_PROMPT = 'Please reason step by step, and put your final answer within \\boxed{}.';
const BOXED_THINK_PROMPT =
  'You are a helpful assistant that solves MATH problems. You should first thinks about the reasoning process in mind and then provides the user with the answer. You should present your reasoning process using the format: <think>\n ...your reasoning process here... </think>\n first. You should always include your final answer in \\boxed{} as closed-form results.';

/** Sums the reward dict into the reward and keeps its parts as metrics (Trinity: `reward = sum(reward_dict.values())`). */
function score(
  exps: Experience[],
  ctx: WorkflowContext,
  reward: RewardFn,
  callArgs?: Record<string, unknown>,
): Experience[] {
  exps.forEach((e, i) => {
    const parts = timed('explorer: rewards', () =>
      reward({
        response: e.responseText ?? '',
        truth: ctx.task.truth,
        task: ctx.task.raw,
        callArgs,
        responseTokens: e.tokens.slice(e.promptLength),
      }),
    );
    e.metrics = { ...e.metrics, ...parts };
    e.reward = Object.values(parts).reduce((a, b) => a + b, 0);
    e.eid.run = i + ctx.runIdBase;
  });
  return exps;
}

export function simpleMessages(ctx: WorkflowContext, systemPrompt: string | null): ChatMessage[] {
  if (ctx.task.taskDesc === undefined)
    throw new WorkflowError('the task has no prompt: format.prompt_key names a column this row does not have');
  return formatMessages(ctx.task.taskDesc, systemPrompt, ctx.task.replyPrefix);
}

/** `BaseSimpleWorkflow.format_messages` (workflow.py @64b001d): system prompt, the task, the reply prefix. */
function formatMessages(taskDesc: string, systemPrompt: string | null, replyPrefix: string | null): ChatMessage[] {
  const messages: ChatMessage[] = [];
  if (systemPrompt) messages.push({ role: 'system', content: systemPrompt });
  messages.push({ role: 'user', content: taskDesc });
  if (replyPrefix) messages.push({ role: 'assistant', content: replyPrefix });
  return messages;
}

/** math_workflow's system prompt: the DeepSeek-R1 one for `math_reward` when the taskset gives none (`reset`). */
function mathSystemPrompt(rewardFn: string | null, systemPrompt: string | null): string | null {
  return (rewardFn ?? 'math_reward') === 'math_reward' && systemPrompt === null ? R1_SYSTEM_PROMPT : systemPrompt;
}

function boxedSystemPrompt(args: Record<string, unknown>, systemPrompt: string | null): string {
  return systemPrompt ?? (args.with_think === true ? BOXED_THINK_PROMPT : BOXED_PROMPT);
}

/**
 * The chat messages a single-turn workflow sends for a task row (the taskset's `format` and reward as the check
 * reads them), as its `run` builds them, for the prompt-budget checks: chat messages, or the raw text math_boxed_workflow
 * sends with `use_base`; undefined where the row has no prompt text.
 */
export function singleTurnPrompt(
  workflow: 'simple' | 'math' | 'math_boxed' | 'math_eval',
  args: Record<string, unknown>,
  row: Record<string, unknown>,
  format: PromptFormat,
): ChatMessage[] | string | undefined {
  if (workflow === 'math_eval') return typeof row.question === 'string' ? mathEvalMessages(row.question) : undefined;
  const desc = row[format.promptKey];
  if (typeof desc !== 'string') return undefined;
  if (workflow === 'math_boxed' && args.use_base === true)
    return mathBoxedBasePrompt(boxedSystemPrompt(args, format.systemPrompt), desc);
  const system =
    workflow === 'math'
      ? mathSystemPrompt(format.rewardFn, format.systemPrompt)
      : workflow === 'math_boxed'
        ? boxedSystemPrompt(args, format.systemPrompt)
        : format.systemPrompt;
  return formatMessages(desc, system, format.replyPrefix);
}

function rewardOf(ctx: WorkflowContext, fallback: string | null): RewardFn {
  const name = ctx.task.rewardFn ?? fallback;
  if (!name)
    throw new WorkflowError(
      'no reward function: set default_reward_fn_type on the taskset (or format.reward_fn_key per row)',
    );
  return ctx.createReward(name, ctx.task.rewardFnArgs);
}

export function simpleWorkflow(ctx: WorkflowContext): Workflow {
  const reward = rewardOf(ctx, null);
  return {
    repeatable: true,
    concurrentRuns: true,
    run: async () =>
      score(
        await ctx.model.chat(simpleMessages(ctx, ctx.task.systemPrompt), {
          ...ctx.task.rolloutArgs,
          n: ctx.repeatTimes,
        }),
        ctx,
        reward,
      ),
  };
}

/** simple_workflow with math_reward and, for it, the DeepSeek-R1 system prompt by default. */
export function mathWorkflow(ctx: WorkflowContext): Workflow {
  const system = mathSystemPrompt(ctx.task.rewardFn, ctx.task.systemPrompt);
  const reward = ctx.createReward(ctx.task.rewardFn ?? 'math_reward', ctx.task.rewardFnArgs);
  return {
    repeatable: true,
    concurrentRuns: true,
    run: async () =>
      score(
        await ctx.model.chat(simpleMessages(ctx, system), { ...ctx.task.rolloutArgs, n: ctx.repeatTimes }),
        ctx,
        reward,
      ),
  };
}

export function mathBoxedWorkflow(ctx: WorkflowContext): Workflow {
  const args = ctx.task.workflowArgs;
  const useBase = args.use_base === true;
  const withThink = args.with_think === true;
  const formatScoreCoef = typeof args.format_score_coef === 'number' ? args.format_score_coef : 0.1;
  const system = boxedSystemPrompt(args, ctx.task.systemPrompt);
  const reward = ctx.createReward(ctx.task.rewardFn ?? 'math_boxed_reward', ctx.task.rewardFnArgs);
  return {
    repeatable: true,
    concurrentRuns: true,
    run: async () => {
      const rollout = { ...ctx.task.rolloutArgs, n: ctx.repeatTimes };
      let exps: Experience[];
      if (useBase) {
        exps = await ctx.model.generate([mathBoxedBasePrompt(system, ctx.task.taskDesc ?? '')], rollout);
      } else {
        exps = await ctx.model.chat(simpleMessages(ctx, system), rollout);
      }
      return score(exps, ctx, reward, { with_think: withThink, format_score_coef: formatScoreCoef });
    },
  };
}

/**
 * math_boxed_workflow's prompt for a base model (`use_base: true`): plain text, no chat template, sent through
 * `generate` (customized_math_workflows.py `MathBoxedWorkflow.format_prompt`, modelscope/Trinity-RFT @2994bb2).
 */
export function mathBoxedBasePrompt(system: string | null, desc: string): string {
  return system ? `System:${system}\nUser:\n${desc}\nAssistant:\n` : `User:\n${desc}\nAssistant:\n`;
}

/** math_eval_workflow's fixed prompt around the row's `question` (whatever the taskset's format says). */
function mathEvalMessages(question: string): ChatMessage[] {
  return [
    { role: 'system', content: 'You are a helpful assistant.' },
    { role: 'user', content: `${question}\nPlease reason step by step, and put your final answer within \\boxed{}.` },
  ];
}

/**
 * Qwen2.5-Math evaluation (eval_workflow.py `MathEvalWorkflow`, the same in every release): fixed prompt and sampling
 * (temperature 0.6, top_p 0.8, n 1), graded by `verify_math_answer` into the metric `accuracy`; no reward function
 * and no reward.
 */
export function mathEvalWorkflow(ctx: WorkflowContext): Workflow {
  return {
    repeatable: false,
    run: async () => {
      const question = ctx.task.raw.question;
      if (typeof question !== 'string')
        throw new WorkflowError("math_eval_workflow needs a 'question' column in the task");
      const messages = mathEvalMessages(question);
      const exps = await ctx.model.chat(messages, { temperature: 0.6, top_p: 0.8, n: 1 });
      for (const e of exps) {
        if (e.responseText === undefined || ctx.task.truth === undefined) continue;
        e.metrics = { ...e.metrics, accuracy: verifyMathAnswer(e.responseText, ctx.task.truth) };
      }
      return exps;
    },
  };
}
