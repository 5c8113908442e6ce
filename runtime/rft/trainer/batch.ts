/**
 * Experiences gathered into one padded batch in veRL's layout: prompts left-padded so every response starts in the
 * same column, responses right-padded. Everything per response token is `[B, R]`.
 */
import type { Experience } from '../experience';

export interface PaddedBatch {
  /** `[B, P + R]` token ids (padding = padId). */
  tokens: number[][];
  /** `[B, P + R]` 1 on real tokens. */
  attentionMask: number[][];
  /** Longest prompt (P) and longest response (R). */
  promptWidth: number;
  responseWidth: number;
  /** `[B, R]` 1 where the loss applies (action mask within the response). */
  responseMask: number[][];
  oldLogprobs: number[][];
  advantages: number[][];
  returns: number[][];
  /** `[B, R]` teacher log-probs, when every experience has them (Trinity gathers the field only then). */
  teacherLogprobs?: number[][];
  rewards: number[];
  /** Every experience has a reward: Trinity gathers the scores (and logs `critic/score`) only then; SFT data has none. */
  scored: boolean;
  promptLengths: number[];
  responseLengths: number[];
  expert: boolean[];
}

export function padBatch(exps: readonly Experience[], padId: number): PaddedBatch {
  if (exps.length === 0) throw new Error('padBatch: no experiences');
  const P = Math.max(...exps.map((e) => e.promptLength));
  const R = Math.max(1, ...exps.map((e) => e.tokens.length - e.promptLength));
  const perToken = (e: Experience, v: readonly number[] | undefined, fill: number): number[] => {
    const n = e.tokens.length - e.promptLength;
    return Array.from({ length: R }, (_, t) => (t < n ? (v?.[t] ?? fill) : 0));
  };
  return {
    tokens: exps.map((e) => {
      const prompt = e.tokens.slice(0, e.promptLength);
      const response = e.tokens.slice(e.promptLength);
      return [
        ...Array<number>(P - prompt.length).fill(padId),
        ...prompt,
        ...response,
        ...Array<number>(R - response.length).fill(padId),
      ];
    }),
    attentionMask: exps.map((e) => {
      const n = e.tokens.length - e.promptLength;
      return [
        ...Array<number>(P - e.promptLength).fill(0),
        ...Array<number>(e.promptLength + n).fill(1),
        ...Array<number>(R - n).fill(0),
      ];
    }),
    promptWidth: P,
    responseWidth: R,
    responseMask: exps.map((e) => perToken(e, e.actionMask, 1)),
    oldLogprobs: exps.map((e) => perToken(e, e.logprobs, 0)),
    advantages: exps.map((e) => perToken(e, e.advantages, 0)),
    returns: exps.map((e) => perToken(e, e.returns, 0)),
    teacherLogprobs: exps.every((e) => e.teacherLogprobs !== undefined)
      ? exps.map((e) => perToken(e, e.teacherLogprobs, 0))
      : undefined,
    rewards: exps.map((e) => e.reward ?? 0),
    scored: exps.every((e) => e.reward !== undefined),
    promptLengths: exps.map((e) => e.promptLength),
    responseLengths: exps.map((e) => e.tokens.length - e.promptLength),
    expert: exps.map((e) => e.isExpert === true),
  };
}

/** Row subsets `[from, to)` of a padded batch (micro-batches keep the batch's column layout). */
export function sliceRows(b: PaddedBatch, from: number, to: number): PaddedBatch {
  return {
    ...b,
    tokens: b.tokens.slice(from, to),
    attentionMask: b.attentionMask.slice(from, to),
    responseMask: b.responseMask.slice(from, to),
    oldLogprobs: b.oldLogprobs.slice(from, to),
    advantages: b.advantages.slice(from, to),
    returns: b.returns.slice(from, to),
    teacherLogprobs: b.teacherLogprobs?.slice(from, to),
    rewards: b.rewards.slice(from, to),
    promptLengths: b.promptLengths.slice(from, to),
    responseLengths: b.responseLengths.slice(from, to),
    expert: b.expert.slice(from, to),
  };
}
