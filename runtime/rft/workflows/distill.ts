/**
 * Trinity's on-policy distillation workflows (trinity/common/workflows/on_policy_distill_workflow.py, v0.4.0 on):
 * the student (the rollout model) samples n responses; the first auxiliary model, the teacher, scores each whole
 * sequence at `workflow_args.temperature` (default 1.0), and its log-probs of the response tokens are stored as
 * `teacherLogprobs` for the trainer's advantage (on_policy_distill, jsd). Metric `kl_divergence` is the sum over
 * the response of student − teacher log-probs. No reward function: the plain workflow's reward is 0; the math one's
 * is `verify_math_answer`'s accuracy (also logged as `accuracy`) when there is a response text and a truth.
 */
import type { ChatMessage } from '../../engine/tokenizer';
import type { Experience } from '../experience';
import { verifyMathAnswer } from '../rewards/qwen-verify';
import { simpleMessages, WorkflowError } from './simple';
import type { Workflow, WorkflowContext } from './types';

type ComputeReward = (e: Experience, ctx: WorkflowContext) => number;

function distillWorkflow(ctx: WorkflowContext, messages: () => ChatMessage[], computeReward: ComputeReward): Workflow {
  const teacher = ctx.auxiliaryModels[0];
  if (!teacher)
    throw new WorkflowError(
      'On-policy distillation requires at least one auxiliary model as teacher (explorer.auxiliary_models).',
    );
  const t = ctx.task.workflowArgs.temperature;
  const temperature = t === undefined ? 1.0 : t === null ? null : Number(t);
  return {
    repeatable: true,
    concurrentRuns: true,
    run: async () => {
      const responses = await ctx.model.chat(messages(), { ...ctx.task.rolloutArgs, n: ctx.repeatTimes });
      for (const [i, e] of responses.entries()) {
        const student = e.logprobs ?? [];
        // Entry i of the teacher's scores predicts token i + 1: the response starts at promptLength − 1.
        const teacherResponse = (await teacher.logprobs(e.tokens, temperature)).slice(e.promptLength - 1);
        if (teacherResponse.length !== student.length) {
          throw new WorkflowError(
            `Length mismatch: teacher_logprobs=${teacherResponse.length}, student_logprobs=${student.length}. tokens=${e.tokens.length}, prompt_length=${e.promptLength}`,
          );
        }
        e.teacherLogprobs = teacherResponse;
        e.metrics = { ...e.metrics };
        e.reward = computeReward(e, ctx);
        e.eid.run = i + ctx.runIdBase;
        e.metrics.kl_divergence = student.reduce((s, lp, k) => s + (lp - teacherResponse[k]), 0);
      }
      return responses;
    },
  };
}

/** `on_policy_distill_workflow`: system prompt, task, reply prefix as in simple_workflow; reward 0. */
export function onPolicyDistillWorkflow(ctx: WorkflowContext): Workflow {
  return distillWorkflow(
    ctx,
    () => simpleMessages(ctx, ctx.task.systemPrompt),
    () => 0.0,
  );
}

/** `on_policy_distill_math_workflow`: Qwen2.5-Math prompting; reward = accuracy of the answer. */
export function onPolicyDistillMathWorkflow(ctx: WorkflowContext): Workflow {
  const messages = () => distillMathMessages(String(ctx.task.taskDesc));
  const accuracyReward: ComputeReward = (e) => {
    if (!e.responseText || !ctx.task.truth) return 0.0;
    const accuracy = verifyMathAnswer(e.responseText, ctx.task.truth);
    e.metrics = { ...e.metrics, accuracy };
    return accuracy;
  };
  return distillWorkflow(ctx, messages, accuracyReward);
}

/**
 * on_policy_distill_math_workflow's messages: Qwen2.5-Math's fixed system prompt and instruction around the task
 * (on_policy_distill_workflow.py `OnPolicyDistillMathWorkflow`, @f3c8dec); the prompt-budget checks count the same.
 */
export function distillMathMessages(taskDesc: string): ChatMessage[] {
  return [
    { role: 'system', content: 'You are a helpful assistant.' },
    { role: 'user', content: `${taskDesc}\nPlease reason step by step, and put your final answer within \\boxed{}.` },
  ];
}
