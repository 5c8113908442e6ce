/**
 * Trinity's step-wise workflows (trinity/common/workflows/step_wise_workflow.py @e9cc93a): an episode of up to
 * `maxStepNum` steps, each one `step()` of the agent (its model calls recorded by a HistoryModel) and then that
 * step's experiences taken from the history with `eid.step` set, one experience per model call:
 * - `runStepWiseReward` (StepWiseRewardWorkflow): `reward(exps, step)` scores each step's experiences;
 * - `runRewardPropagation` (RewardPropagationWorkflow): `reward(allExps)` scores the episode once and every step
 *   gets it, with the metric `actual_env_steps` (the steps run).
 * The episode stops after the step where `step()` returns false. Trinity also stops after a step with a
 * `response_truncated` experience, but the calls its history records (vLLM's generate, the OpenAI client) never carry
 * that status, so the check does not fire there; here a response cut by max_tokens is marked truncated (for the
 * buffer and `mask_response_truncated`), and stopping on it would end nearly every episode of a small model after
 * its first step where Trinity's would go on. So it is not checked.
 */
import type { Experience } from '../../experience';
import type { HistoryModel } from './history-model';

export interface StepWiseAgent {
  readonly maxStepNum: number;
  /** Runs step `stepNum` (its model calls through the HistoryModel); false ends the episode after it. */
  step(stepNum: number): boolean | Promise<boolean>;
}

export interface StepRewardAgent extends StepWiseAgent {
  reward(exps: Experience[], stepNum: number): number | Promise<number>;
}

export interface EpisodeRewardAgent extends StepWiseAgent {
  reward(exps: Experience[]): number | Promise<number>;
}

/** Runs the steps; `onStep` sees each step's experiences before the next step. Returns all of them and the steps run. */
async function runSteps(
  history: HistoryModel,
  agent: StepWiseAgent,
  onStep: (exps: Experience[], stepNum: number) => void | Promise<void>,
): Promise<{ exps: Experience[]; steps: number }> {
  const all: Experience[] = [];
  let steps = 0;
  for (let stepNum = 0; stepNum < agent.maxStepNum; stepNum++) {
    const goOn = await agent.step(stepNum);
    const exps = history.extractExperienceFromHistory();
    for (const e of exps) e.eid.step = stepNum;
    await onStep(exps, stepNum);
    all.push(...exps);
    steps = stepNum + 1;
    if (!goOn) break;
  }
  return { exps: all, steps };
}

export async function runStepWiseReward(history: HistoryModel, agent: StepRewardAgent): Promise<Experience[]> {
  const { exps } = await runSteps(history, agent, async (stepExps, stepNum) => {
    const reward = await agent.reward(stepExps, stepNum);
    for (const e of stepExps) e.reward = reward;
  });
  return exps;
}

export async function runRewardPropagation(history: HistoryModel, agent: EpisodeRewardAgent): Promise<Experience[]> {
  const { exps, steps } = await runSteps(history, agent, () => {});
  const reward = await agent.reward(exps);
  for (const e of exps) {
    e.reward = reward;
    e.metrics = { ...e.metrics, actual_env_steps: steps };
  }
  return exps;
}
