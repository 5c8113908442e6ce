/**
 * The reference-model tests' batch: three experiences whose prompts (3, 2 and 4 tokens) and responses (3, 2 and 1)
 * pad on both sides in one batch, for the tiny Qwen2 model with a vocabulary of 12, and a PPO trainer with a k2 KL
 * loss (coefficient 0.5) against the reference model.
 */
import type { Experience } from '../../runtime/rft/experience';
import type { TrainerOptions } from '../../runtime/rft/trainer/train-step';

export const KL_TEMPERATURE = 0.7;

/** Fresh experiences; with `advantages`, row i's response tokens carry `advantages(i)`. */
export function paddedExperiences(advantages?: (row: number) => number): Experience[] {
  const rows: [number[], number, number[], number][] = [
    [[3, 4, 5, 6, 7, 8], 3, [-2, -2.5, -1], 1],
    [[9, 10, 6, 7], 2, [-2, -3], 0],
    [[2, 3, 4, 5, 11], 4, [-1.5], 1],
  ];
  return rows.map(([tokens, promptLength, logprobs, reward], i) => ({
    eid: { batch: 1, task: 0, run: i, step: 0, suffix: String(i) },
    tokens,
    promptLength,
    logprobs,
    reward,
    ...(advantages ? { advantages: Array<number>(tokens.length - promptLength).fill(advantages(i)) } : {}),
  }));
}

export function klTrainerOptions(lr: number): TrainerOptions {
  return {
    algorithm: {
      policyLossFn: 'ppo',
      policyLossFnArgs: null,
      klLossFn: 'k2',
      klLossFnArgs: { kl_coef: 0.5 },
      entropyLossFn: 'none',
      entropyLossFnArgs: null,
      lossAggMode: 'token-mean',
      useReference: true,
    },
    schedule: { lr, style: 'constant', warmupSteps: 0, totalSteps: 10 },
    betas: [0.9, 0.999],
    weightDecay: 0,
    gradClip: 1,
    ppoEpochs: 1,
    temperature: KL_TEMPERATURE,
    padTokenId: 0,
  };
}
