/**
 * `clipb` and `clipv` (trainer side; arXiv 2602.03392): GRPO-normalised outcome advantages (as `grpo_verl`:
 * Bessel std per uid, epsilon, a group of one gets mean 0 / std 1) followed by token filtering that zeroes
 * response-mask entries. Signals, with p = exp(ℓ) and H the token entropy:  S = p·(H + ℓ).
 *
 *  - clipb (ℓ = `rollout_log_probs`): population mean E and std σ of S over the mask; if σ < 1e-12 keep all;
 *    else keep positive- and zero-advantage tokens, and negative-advantage tokens only where S − E ≥ −mu·σ.
 *    Metrics `frac_clipped`, `frac_clipped_pos`, `frac_clipped_neg`, `ES`, `varS`.
 *  - clipv (ℓ = `old_log_probs`): D = necs − S, population std σ_D over the mask; if σ_D < 1e-12 keep all; else
 *    tokens with A > 0 are kept and every other token (zero advantage included) only where D ≤ mu·σ_D (D is not
 *    centred). If the clipped fraction exceeds `max_frac`, and more negative-advantage tokens violate than
 *    max(⌊max_frac·N⌋, 1), only that many of them — the largest D — stay clipped (zero-advantage violators stay
 *    clipped regardless). Metrics `frac_clipped`, `frac_clipped_pos`, `frac_clipped_neg`, `stdD`.
 * Fractions: 1 − Σ clipped-mask / max(Σ mask, 1), per sign over the tokens with that advantage sign.
 * Note `clipv`'s default_args() mu is 8.5 while its constructor default is 2.0.
 */
import { defaultFnArgs, withDefaults } from '../args';
import { groupNormalized } from './grpo-verl';
import { groupedOutcomeAdvantage, requireField, type AdvantageBatch, type TrainerAdvantageResult } from './types';

export interface ClipbAdvantageArgs {
  epsilon: number;
  mu: number;
}

export interface ClipvAdvantageArgs {
  epsilon: number;
  mu: number;
  max_frac: number;
}

function maskedPopulationStats(x: number[][], mask: number[][]): { mean: number; variance: number } {
  let n = 0;
  let s = 0;
  x.forEach((row, i) => row.forEach((v, t) => ((s += v * mask[i][t]), (n += mask[i][t]))));
  n = Math.max(n, 1);
  const mu = s / n;
  let q = 0;
  x.forEach((row, i) => row.forEach((v, t) => (q += (v - mu) ** 2 * mask[i][t])));
  return { mean: mu, variance: q / n };
}

function clipFractions(mask: number[][], clipped: number[][], adv: number[][]): Record<string, number> {
  let total = 0;
  let kept = 0;
  let pos = 0;
  let posKept = 0;
  let neg = 0;
  let negKept = 0;
  mask.forEach((row, i) =>
    row.forEach((m, t) => {
      const c = clipped[i][t];
      total += m;
      kept += c;
      if (adv[i][t] > 0) ((pos += m), (posKept += c));
      if (adv[i][t] < 0) ((neg += m), (negKept += c));
    }),
  );
  return {
    frac_clipped: 1 - kept / Math.max(total, 1),
    frac_clipped_pos: 1 - posKept / Math.max(pos, 1),
    frac_clipped_neg: 1 - negKept / Math.max(neg, 1),
  };
}

function signal(logprobs: number[][], entropys: number[][]): number[][] {
  return logprobs.map((row, i) => row.map((lp, t) => Math.exp(lp) * (entropys[i][t] + lp)));
}

export function clipbAdvantage(
  batch: AdvantageBatch,
  args?: Partial<ClipbAdvantageArgs> | null,
): TrainerAdvantageResult {
  const a = withDefaults(defaultFnArgs('advantage_fn', 'clipb') as unknown as ClipbAdvantageArgs, args);
  const lp = requireField(batch.rolloutLogprobs, 'clipb', 'rolloutLogprobs');
  const H = requireField(batch.entropys, 'clipb', 'entropys');
  const mask = batch.responseMask;
  const adv = groupedOutcomeAdvantage(batch, 'clipb', (group) => groupNormalized(group, a.epsilon)).advantages;
  const S = signal(lp, H);
  const { mean: ES, variance: varS } = maskedPopulationStats(S, mask);
  const stdS = Math.sqrt(varS);
  const clipped = mask.map((row, i) =>
    row.map((m, t) => {
      if (stdS < 1e-12) return m;
      const keep = adv[i][t] < 0 ? S[i][t] - ES >= -(a.mu * stdS) : true;
      return keep ? m : 0;
    }),
  );
  return {
    advantages: adv,
    returns: adv.map((r) => [...r]),
    responseMask: clipped,
    metrics: { ...clipFractions(mask, clipped, adv), ES, varS },
  };
}

export function clipvAdvantage(
  batch: AdvantageBatch,
  args?: Partial<ClipvAdvantageArgs> | null,
): TrainerAdvantageResult {
  const a = withDefaults(defaultFnArgs('advantage_fn', 'clipv') as unknown as ClipvAdvantageArgs, args);
  const lp = requireField(batch.oldLogprobs, 'clipv', 'oldLogprobs');
  const H = requireField(batch.entropys, 'clipv', 'entropys');
  const necs = requireField(batch.necs, 'clipv', 'necs');
  const mask = batch.responseMask;
  const adv = groupedOutcomeAdvantage(batch, 'clipv', (group) => groupNormalized(group, a.epsilon)).advantages;
  const S = signal(lp, H);
  const D = necs.map((row, i) => row.map((n, t) => n - S[i][t]));
  const stdD = Math.sqrt(maskedPopulationStats(D, mask).variance);
  let keep: boolean[][];
  if (stdD < 1e-12) {
    keep = mask.map((row) => row.map(() => true));
  } else {
    const bound = a.mu * stdD;
    const keepNeg = D.map((row) => row.map((d) => d <= bound));
    const keepBool = adv.map((row, i) => row.map((x, t) => x > 0 || keepNeg[i][t]));
    let total = 0;
    let clippedCount = 0;
    mask.forEach((row, i) => row.forEach((m, t) => ((total += m), (clippedCount += m > 0 && !keepBool[i][t] ? 1 : 0))));
    total = Math.max(total, 1);
    keep = keepBool;
    if (clippedCount / total > a.max_frac) {
      const maxClipped = Math.max(Math.trunc(a.max_frac * total), 1);
      const candidates: { i: number; t: number; d: number; flat: number }[] = [];
      const T = mask[0]?.length ?? 0;
      adv.forEach((row, i) =>
        row.forEach((x, t) => {
          if (x < 0 && mask[i][t] > 0 && !keepNeg[i][t]) candidates.push({ i, t, d: D[i][t], flat: i * T + t });
        }),
      );
      if (candidates.length > maxClipped) {
        // keep only the top-k most violating negative tokens clipped (largest D; ties by position)
        candidates.sort((p, q) => q.d - p.d || p.flat - q.flat);
        keep = keepBool.map((row) => [...row]);
        for (const c of candidates) keep[c.i][c.t] = true;
        for (const c of candidates.slice(0, maxClipped)) keep[c.i][c.t] = false;
      }
    }
  }
  const clipped = mask.map((row, i) => row.map((m, t) => (keep[i][t] ? m : 0)));
  return {
    advantages: adv,
    returns: adv.map((r) => [...r]),
    responseMask: clipped,
    metrics: { ...clipFractions(mask, clipped, adv), stdD },
  };
}
