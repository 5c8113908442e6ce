/**
 * The float64 reference of the policy losses: Trinity-RFT's trinity/algorithm/policy_loss_fn/*.py at 10796ed
 * (the release `main` models), written from their formulas on dual numbers (dual.ts), so each gives its loss, its
 * metrics and, when `logprob` is seeded, the loss's gradient with respect to it, as `loss.backward()` would.
 * Nothing here comes from runtime/.
 *
 * Arguments resolve as Trinity builds a loss from a config: `null` → the class's `default_args()`, the
 * constructor's defaults filling whatever those (or the written arguments) leave out.
 */
import { aggregateLoss, maskedMean, maskedSum, rowMaskedMeans } from './aggregate';
import {
  add,
  average,
  clamp,
  detach,
  div,
  Dual,
  exp,
  gradientOf,
  logSigmoid,
  map2,
  maximum,
  minimum,
  mul,
  neg,
  seed,
  sigmoid,
  square,
  sub,
  where,
} from './dual';
import { sum } from './float64';
import { ADV, LP, MASK, OLD, REF } from '../helpers';
import { CASES, DPO_CASES, LP4, MASK4, REF4, type ExtraInputs } from '../policy-loss-cases';

type Args = Record<string, unknown>;
type Grid = number[][];

/** What a policy loss reads: `logprob` (dual numbers), the rest plain float64 ([B][T], response tokens). */
export interface LossBatch {
  logprob: Dual[][];
  old?: Grid;
  ref?: Grid;
  adv?: Grid;
  mask: Grid;
  /** per row, true for an expert (SFT) row: mix, mix_chord */
  expertMask?: readonly boolean[];
  /** the global step, one value or one per row: mix_chord */
  step?: number | readonly number[];
}

export interface LossResult {
  loss: Dual;
  metrics: Record<string, number>;
}

interface LossSpec {
  /** the constructor's keyword defaults */
  ctor: Args;
  /** where `default_args()` differs from `ctor` (an absent key is the constructor's default either way) */
  defaults?: Args;
  fn: (b: LossBatch, a: Args) => LossResult;
}

/** `masked_mean(cond.float(), action_mask)`: the fraction of response tokens where `cond` holds. */
const fraction = (b: LossBatch, cond: (i: number, t: number) => boolean): number =>
  maskedMean(
    map2(b.mask, (_, i, t) => new Dual(cond(i, t) ? 1 : 0)),
    b.mask,
  ).v;
const num = (a: Args, k: string): number => a[k] as number;

/** ppo_policy_loss.py PPOPolicyLossFn: dual-clip PPO, optional sequence masking and policy-gradient fallback. */
function ppo(b: LossBatch, a: Args): LossResult {
  const low = (a.clip_range_low ?? a.clip_range) as number;
  const high = (a.clip_range_high ?? a.clip_range) as number;
  const c = num(a, 'clip_ratio_c');
  const A = b.adv!;
  const nak = map2(b.logprob, (lp, i, t) =>
    clamp(a.fallback_to_policy_gradient ? sub(lp, detach(lp)) : sub(lp, b.old![i][t]), -20, 20),
  );
  const ratio = map2(nak, exp);
  const ppoKl = maskedMean(map2(nak, neg), b.mask);
  const l1 = map2(ratio, (r, i, t) => mul(-A[i][t], r));
  const l2 = map2(ratio, (r, i, t) => mul(-A[i][t], clamp(r, 1 - low, 1 + high)));
  const c1 = map2(l1, (x, i, t) => maximum(x, l2[i][t]));
  const clipFrac = fraction(b, (i, t) => l2[i][t].v > l1[i][t].v);
  const l3 = map2(A, (adv) => -adv * c);
  const lowerFrac = fraction(b, (i, t) => c1[i][t].v > l3[i][t] && A[i][t] < 0);
  let pg = map2(c1, (x, i, t) => where(A[i][t] < 0, minimum(l3[i][t], x), x));
  const extra: Record<string, number> = {};
  if (a.enable_sequence_masking) {
    const seqKl = nak.map((row, i) => sum(row.map((x, t) => -x.v * b.mask[i][t])) / (sum(b.mask[i]) + 1e-10));
    const masked = map2(A, (adv, i) => adv < 0 && seqKl[i] > num(a, 'delta_sequence_masking'));
    pg = map2(pg, (x, i, t) => mul(x, masked[i][t] ? 0 : 1));
    extra['seq_mask/masked_tokens'] = sum(masked.flat().map(Number)) / (sum(b.mask.flat()) + 1e-10);
    extra['seq_mask/mean_sequence_kl'] = sum(seqKl) / seqKl.length;
  }
  const loss = aggregateLoss(pg, b.mask, a.loss_agg_mode as string);
  return {
    loss,
    metrics: {
      pg_clipfrac: clipFrac,
      pg_clipfrac_lower: lowerFrac,
      ppo_kl: ppoKl.v,
      pg_loss: loss.v,
      ...extra,
    },
  };
}

/** gspo_policy_loss.py GSPOLossFn: one importance ratio per sequence, exp of the masked mean log-ratio. */
function gspo(b: LossBatch, a: Args): LossResult {
  const low = (a.clip_range_low ?? a.clip_range) as number;
  const high = (a.clip_range_high ?? a.clip_range) as number;
  const A = b.adv!;
  const nak = map2(b.logprob, (lp, i, t) => sub(lp, b.old![i][t]));
  const nakSeq = rowMaskedMeans(nak, b.mask);
  const ratio = map2(b.logprob, (lp, i) => exp(add(sub(lp, detach(lp)), detach(nakSeq[i]))));
  const l1 = map2(ratio, (r, i, t) => mul(-A[i][t], r));
  const l2 = map2(ratio, (r, i, t) => mul(-A[i][t], clamp(r, 1 - low, 1 + high)));
  const loss = aggregateLoss(
    map2(l1, (x, i, t) => maximum(x, l2[i][t])),
    b.mask,
    a.loss_agg_mode as string,
  );
  return {
    loss,
    metrics: {
      pg_clipfrac: fraction(b, (i, t) => l2[i][t].v > l1[i][t].v),
      ppo_kl: maskedMean(map2(nak, neg), b.mask).v,
      pg_loss: loss.v,
      ppo_kl_seq: average(nakSeq.map(neg)).v,
    },
  };
}

/** opmd_policy_loss.py: agg(−A·ℓ) / (1 + τ). */
function opmd(b: LossBatch, a: Args): LossResult {
  const agg = aggregateLoss(
    map2(b.logprob, (lp, i, t) => mul(-b.adv![i][t], lp)),
    b.mask,
    a.loss_agg_mode as string,
  );
  const loss = div(agg, 1 + num(a, 'tau'));
  return { loss, metrics: { opmd_loss: loss.v } };
}

/** sft_loss.py SFTLossFn: agg(−ℓ). */
function sft(b: LossBatch, a: Args): LossResult {
  const loss = aggregateLoss(map2(b.logprob, neg), b.mask, a.loss_agg_mode as string);
  return { loss, metrics: { sft_loss: loss.v } };
}

/** chord_policy_loss.py SFTISLossFn: agg(−ℓ·sg(p)), p = e^ℓ. */
function sftIs(b: LossBatch, a: Args): LossResult {
  const loss = aggregateLoss(
    map2(b.logprob, (lp) => mul(neg(lp), detach(exp(lp)))),
    b.mask,
    a.loss_agg_mode as string,
  );
  return { loss, metrics: { sft_is_loss: loss.v } };
}

/** chord_policy_loss.py SFTPhiLossFn: agg(−ℓ'·sg(p(1 − p))), ℓ' = min(ℓ, log cutoff_prob) below a cutoff of 1. */
function sftPhi(b: LossBatch, a: Args): LossResult {
  const cutoff = num(a, 'cutoff_prob');
  const loss = aggregateLoss(
    map2(b.logprob, (lp) => {
      const p = exp(lp);
      const phi = mul(p, sub(1, p));
      const clipped = cutoff < 1 ? clamp(lp, -Infinity, Math.log(cutoff)) : lp;
      return mul(neg(clipped), detach(phi));
    }),
    b.mask,
    a.loss_agg_mode as string,
  );
  return { loss, metrics: { sft_phi_loss: loss.v } };
}

/** topr_policy_loss.py: −sg(α)·A·ℓ, α = clamp(ρ, 0, 1) where A ≤ threshold, else 1. */
function topr(b: LossBatch, a: Args): LossResult {
  const A = b.adv!;
  const ratio = map2(b.logprob, (lp, i, t) => exp(sub(lp, b.old![i][t])));
  const alpha = map2(ratio, (r, i, t) => where(A[i][t] <= num(a, 'advantage_threshold'), clamp(r, 0, 1), new Dual(1)));
  const loss = aggregateLoss(
    map2(b.logprob, (lp, i, t) => mul(mul(neg(detach(alpha[i][t])), A[i][t]), lp)),
    b.mask,
    a.loss_agg_mode as string,
  );
  return {
    loss,
    metrics: {
      topr_loss: loss.v,
      avg_alpha: maskedMean(alpha, b.mask).v,
      avg_ratio: maskedMean(ratio, b.mask).v,
    },
  };
}

/** cispo_policy_loss.py: −A·sg(clamp(ρ))·sg(m)·ℓ, m zeroing clipped tokens when enable_mask_clip. */
function cispo(b: LossBatch, a: Args): LossResult {
  const A = b.adv!;
  const nak = map2(b.logprob, (lp, i, t) => sub(lp, b.old![i][t]));
  const ratio = map2(nak, exp);
  const keep = map2(ratio, (r, i, t) => {
    if (!a.enable_mask_clip) return 1;
    if (r.v > 1 + num(a, 'mask_clip_range_high') && A[i][t] > 0) return 0;
    return r.v < 1 - num(a, 'mask_clip_range_low') && A[i][t] < 0 ? 0 : 1;
  });
  const loss = aggregateLoss(
    map2(b.logprob, (lp, i, t) => {
      const rc = detach(clamp(ratio[i][t], 1 - num(a, 'clip_range_low'), 1 + num(a, 'clip_range_high')));
      return mul(mul(mul(-A[i][t], rc), keep[i][t]), lp);
    }),
    b.mask,
    a.loss_agg_mode as string,
  );
  return {
    loss,
    metrics: {
      cispo_loss: loss.v,
      ppo_kl: maskedMean(map2(nak, neg), b.mask).v,
      unmasked_frac: fraction(b, (i, t) => keep[i][t] === 1),
    },
  };
}

/** sppo's and rec's result: the loss, and as `pg_clipfrac` the fraction of tokens outside their ratio range. */
const outOfRange = (b: LossBatch, loss: Dual, inRange: boolean[][]): LossResult => ({
  loss,
  metrics: { pg_clipfrac: fraction(b, (i, t) => !inRange[i][t]), pg_loss: loss.v },
});

/** sppo_loss_fn.py: −A·(ℓ − ℓ_old) on tokens whose ratio lies in [1/(1 + ε), 1 + ε]. */
function sppo(b: LossBatch, a: Args): LossResult {
  const eps = num(a, 'epsilon');
  const inRange = map2(b.logprob, (lp, i, t) => {
    const r = Math.exp(lp.v - b.old![i][t]);
    return r >= 1 / (1 + eps) && r <= 1 + eps;
  });
  const loss = aggregateLoss(
    map2(b.logprob, (lp, i, t) => mul(mul(-b.adv![i][t], sub(lp, b.old![i][t])), inRange[i][t] ? 1 : 0)),
    b.mask,
    a.loss_agg_mode as string,
  );
  return outOfRange(b, loss, inRange);
}

/** rec_policy_loss.py RECPolicyLossFn: clip modes, weightings and regularisers over −A·ℓ. */
function rec(b: LossBatch, a: Args): LossResult {
  const [el, eh] = [num(a, 'epsilon_low'), num(a, 'epsilon_high')];
  const A = b.adv!;
  const ratio = map2(b.logprob, (lp, i, t) => Math.exp(lp.v - b.old![i][t]));
  const seqRatio = rowMaskedMeans(
    map2(b.logprob, (lp, i, t) => new Dual(lp.v - b.old![i][t])),
    b.mask,
  ).map((x) => Math.exp(x.v));
  const inRange = map2(ratio, (r, i, t) => {
    const adv = A[i][t];
    switch (a.clip_mode) {
      case 'two-side':
        return r >= 1 - el && r <= 1 + eh;
      case 'one-side':
        return (r <= 1 + eh && adv >= 0) || (adv <= 0 && r >= 1 - el);
      case 'gspo-one-side':
        return (seqRatio[i] <= 1 + eh && adv >= 0) || (seqRatio[i] >= 1 - el && adv <= 0);
      case 'ring':
        return (
          (r >= 1 - el && r <= 1 + eh) ||
          (adv >= 0 && r <= 1 - num(a, 'epsilon_low_prime')) ||
          (adv <= 0 && r >= 1 + num(a, 'epsilon_high_prime'))
        );
      default:
        return true;
    }
  });
  const weighted = map2(A, (adv, i, t) => {
    switch (a.weight) {
      case 'importance_sampling':
        return adv * ratio[i][t];
      case 'gspo_importance_sampling':
        return adv * seqRatio[i];
      case 'advantage':
        return adv * Math.exp(adv / num(a, 'temp'));
      default:
        return adv;
    }
  });
  const coef = num(a, 'regularizer_coef');
  const pg = map2(b.logprob, (lp, i, t) => {
    const x = mul(mul(-weighted[i][t], lp), inRange[i][t] ? 1 : 0);
    if (a.regularizer === 'forward-kl') return sub(x, mul(coef, lp));
    if (a.regularizer === 'k2') return add(x, mul(coef, square(sub(lp, b.old![i][t]))));
    return x;
  });
  const loss =
    a.clip_mode === 'gspo-one-side' ? aggregateLoss(pg, b.mask, 'seq-mean-token-mean') : maskedMean(pg, b.mask);
  return outOfRange(b, loss, inRange);
}

/** sapo_policy_loss.py: −A·sg(f(ρ))·ℓ, soft gate f(ρ) = σ(τ(ρ − 1))·4/τ, τ by the advantage's sign. */
function sapo(b: LossBatch, a: Args): LossResult {
  const A = b.adv!;
  const nak = map2(b.logprob, (lp, i, t) => sub(lp, b.old![i][t]));
  const ratio = map2(nak, exp);
  const gate = map2(ratio, (r, i, t) => {
    const tau = A[i][t] > 0 ? num(a, 'tau_pos') : num(a, 'tau_neg');
    return mul(sigmoid(mul(tau, sub(r, 1))), 4 / tau);
  });
  const loss = aggregateLoss(
    map2(b.logprob, (lp, i, t) => mul(mul(-A[i][t], detach(gate[i][t])), lp)),
    b.mask,
    a.loss_agg_mode as string,
  );
  return {
    loss,
    metrics: {
      sapo_loss: loss.v,
      ppo_kl: maskedMean(map2(nak, neg), b.mask).v,
      avg_soft_gate: maskedMean(gate, b.mask).v,
      avg_ratio: maskedMean(ratio, b.mask).v,
      pos_adv_frac: fraction(b, (i, t) => A[i][t] > 0),
    },
  };
}

/** importance_sampling_policy_loss.py: −A·ρ, log ρ clamped to ±20. */
function importanceSampling(b: LossBatch, a: Args): LossResult {
  const logRatio = map2(b.logprob, (lp, i, t) => clamp(sub(lp, b.old![i][t]), -20, 20));
  const ratio = map2(logRatio, exp);
  const loss = aggregateLoss(
    map2(ratio, (r, i, t) => mul(-b.adv![i][t], r)),
    b.mask,
    a.loss_agg_mode as string,
  );
  return {
    loss,
    metrics: {
      pg_loss: loss.v,
      'ratio/mean': maskedMean(ratio, b.mask).v,
      approx_kl: maskedMean(map2(logRatio, neg), b.mask).v,
    },
  };
}

/** dpo_loss.py: rows alternate chosen, rejected; log-ratio sums pooled over all pairs; sigmoid loss. */
function dpo(b: LossBatch, a: Args): LossResult {
  const beta = num(a, 'beta');
  const ls = num(a, 'label_smoothing');
  // chosen rows are the even ones, rejected the odd ones; each side's log-ratio sums over all its rows
  const ratios = [0, 1].map((parity) => {
    const rows = b.logprob.flatMap((_, i) => (i % 2 === parity ? [i] : []));
    const mask = rows.map((i) => b.mask[i]);
    return sub(
      maskedSum(
        rows.map((i) => b.logprob[i]),
        mask,
      ),
      maskedSum(
        rows.map((i) => b.ref![i].map((x) => new Dual(x))),
        mask,
      ),
    );
  });
  const logits = sub(ratios[0], ratios[1]);
  const loss = sub(mul(neg(logSigmoid(mul(beta, logits))), 1 - ls), mul(logSigmoid(mul(-beta, logits)), ls));
  return {
    loss,
    metrics: {
      chosen_reward: beta * ratios[0].v,
      rejected_reward: beta * ratios[1].v,
      accuracy_mean: ratios[0].v > ratios[1].v ? 1 : 0,
      dpo_loss: loss.v,
    },
  };
}

/** mix_policy_loss.py / chord_policy_loss.py: the shared per-micro-batch weights of usual and expert rows. */
function mixWeights(b: LossBatch, a: Args): { usual: number; expert: number } {
  const mini = num(a, 'ppo_mini_batch_size');
  const ngpus = num(a, 'ngpus_trainer');
  const perGpu = Math.floor(mini / ngpus);
  const accumulation = Math.floor(mini / num(a, 'ppo_micro_batch_size_per_gpu'));
  const usual = Math.floor(num(a, 'train_batch_size_usual') / ngpus);
  const expert = Math.floor(num(a, 'train_batch_size_expert') / ngpus);
  const B = b.logprob.length;
  return a.use_dynamic_bsz
    ? { usual: perGpu / (B * usual), expert: perGpu / (B * expert) }
    : { usual: accumulation / usual, expert: accumulation / expert };
}

const pick = <T>(xs: readonly T[] | undefined, rows: number[]): T[] | undefined => xs && rows.map((i) => xs[i]);

/** The rows where expert_mask is `expert`, as a batch of their own. */
function rowsOf(b: LossBatch, expert: boolean): { batch: LossBatch; n: number } {
  const rows = b.expertMask!.flatMap((e, i) => (e === expert ? [i] : []));
  return {
    n: rows.length,
    batch: {
      logprob: pick(b.logprob, rows)!,
      old: pick(b.old, rows),
      adv: pick(b.adv, rows),
      mask: pick(b.mask, rows)!,
    },
  };
}

/** MIXPolicyLossFn / MIXCHORDPolicyLossFn: (1 − μ)·PPO on usual rows + μ·SFT on expert rows, each weighted. */
function mixed(b: LossBatch, a: Args, mu: number, sftName: 'sft' | 'sft_phi', guardEmpty: boolean): LossResult {
  const w = mixWeights(b, a);
  const mode = a.loss_agg_mode as string;
  const part = (
    expert: boolean,
    weight: number,
    name: string,
    args: Args,
  ): { loss: Dual; metrics: Record<string, number> } => {
    const { batch, n } = rowsOf(b, expert);
    if (guardEmpty && n === 0) return { loss: new Dual(0), metrics: {} };
    const r = policyLoss(name, batch, args);
    return {
      loss: mul(r.loss, n * weight),
      metrics: Object.fromEntries(Object.entries(r.metrics).map(([k, v]) => [k, v * n * weight])),
    };
  };
  const usual = part(false, w.usual, 'ppo', {
    clip_range: a.clip_range,
    clip_range_low: a.clip_range_low,
    clip_range_high: a.clip_range_high,
    loss_agg_mode: a.grpo_loss_agg_mode || mode,
  });
  const expert = part(true, w.expert, sftName, { loss_agg_mode: a.sft_loss_agg_mode || mode });
  const loss = add(mul(1 - mu, usual.loss), mul(mu, expert.loss));
  const prefixed = (p: string, m: Record<string, number>) =>
    Object.fromEntries(Object.entries(m).map(([k, v]) => [`${p}/${k}`, v]));
  return {
    loss,
    metrics: { ...prefixed('usual', usual.metrics), ...prefixed('expert', expert.metrics), loss: loss.v },
  };
}

/** chord_policy_loss.py mu_schedule_function: linear warm-up to mu_peak, cosine decay to mu_valley. */
export function muSchedule(step: number, warmup: number, decay: number, peak: number, valley: number): number {
  if (step < warmup) return (step / warmup) * peak;
  if (step >= warmup + decay) return valley;
  return (peak - valley) * (0.5 * (1 + Math.cos((Math.PI * (step - warmup)) / decay))) + valley;
}

const MIX_CTOR: Args = {
  clip_range: null,
  clip_range_low: null,
  clip_range_high: null,
  use_dynamic_bsz: null,
  ppo_mini_batch_size: 1,
  ppo_micro_batch_size_per_gpu: 1,
  ngpus_trainer: 1,
  train_batch_size_usual: 1,
  train_batch_size_expert: 1,
  loss_agg_mode: 'token-mean',
  sft_loss_agg_mode: null,
  grpo_loss_agg_mode: null,
};

const TOKEN_MEAN = { loss_agg_mode: 'token-mean' };

/**
 * Trinity's POLICY_LOSS_FN registry at 10796ed (policy_loss_fn/__init__.py): each class's constructor defaults and
 * where its `default_args()` differs from them.
 */
const POLICY_LOSSES: Record<string, LossSpec> = {
  ppo: {
    ctor: {
      clip_range: null,
      clip_range_low: null,
      clip_range_high: null,
      clip_ratio_c: 3.0,
      loss_agg_mode: 'token-mean',
      enable_sequence_masking: false,
      delta_sequence_masking: 0.1,
      fallback_to_policy_gradient: false,
    },
    defaults: { clip_range: 0.2 },
    fn: ppo,
  },
  opmd: { ctor: { tau: 1.0, ...TOKEN_MEAN }, fn: opmd },
  dpo: { ctor: { beta: 0.1, label_smoothing: 0.0 }, fn: dpo },
  sft: { ctor: TOKEN_MEAN, fn: sft },
  mix: {
    ctor: { mu: 0.1, ...MIX_CTOR },
    defaults: { clip_range: 0.2 },
    fn: (b, a) => mixed(b, a, num(a, 'mu'), 'sft', true),
  },
  gspo: {
    ctor: { clip_range: null, clip_range_low: null, clip_range_high: null, loss_agg_mode: 'seq-mean-token-mean' },
    defaults: { clip_range_low: 0.0003, clip_range_high: 0.0004 },
    fn: gspo,
  },
  topr: { ctor: { advantage_threshold: 0.0, ...TOKEN_MEAN }, fn: topr },
  cispo: {
    ctor: {
      clip_range_low: 1.0,
      clip_range_high: 0.28,
      enable_mask_clip: false,
      mask_clip_range_low: 1.0,
      mask_clip_range_high: 0.28,
      ...TOKEN_MEAN,
    },
    fn: cispo,
  },
  sft_is: { ctor: TOKEN_MEAN, fn: sftIs },
  sft_phi: { ctor: { ...TOKEN_MEAN, cutoff_prob: 1.0 }, fn: sftPhi },
  mix_chord: {
    ctor: {
      mu_warmup_steps: 0,
      mu_decay_steps: 0,
      mu_peak: 0.1,
      mu_valley: 0.1,
      enable_phi_function: true,
      ...MIX_CTOR,
    },
    defaults: { clip_range: 0.2 },
    fn: (b, a) => {
      const steps = typeof b.step === 'number' ? [b.step] : [...b.step!];
      const mu = muSchedule(
        Math.max(...steps),
        num(a, 'mu_warmup_steps'),
        num(a, 'mu_decay_steps'),
        num(a, 'mu_peak'),
        num(a, 'mu_valley'),
      );
      const r = mixed(b, a, mu, a.enable_phi_function ? 'sft_phi' : 'sft', false);
      return { loss: r.loss, metrics: { ...r.metrics, mu } };
    },
  },
  sppo: { ctor: { epsilon: 0.3, ...TOKEN_MEAN }, fn: sppo },
  rec: {
    ctor: {
      epsilon_low: 0.2,
      epsilon_high: 0.2,
      epsilon_low_prime: 0.4,
      epsilon_high_prime: 0.4,
      clip_mode: 'none',
      weight: 'none',
      regularizer: 'none',
      regularizer_coef: 0.0,
      temp: 1.0,
    },
    defaults: { epsilon_low_prime: 0.6, epsilon_high_prime: 2 },
    fn: rec,
  },
  sapo: { ctor: { tau_pos: 1.0, tau_neg: 1.05, ...TOKEN_MEAN }, fn: sapo },
  importance_sampling: { ctor: TOKEN_MEAN, fn: importanceSampling },
};

/** Trinity's policy loss `name` built from `args` (null: default_args()) and applied to `b`. */
export function policyLoss(name: string, b: LossBatch, args: Args | null): LossResult {
  const spec = POLICY_LOSSES[name];
  if (!spec) throw new Error(`no reference for policy_loss_fn ${name}`);
  return spec.fn(b, { ...spec.ctor, ...(args ?? spec.defaults ?? {}) });
}

/** policy-loss-expected.ts: each case of policy-loss-cases.ts on helpers.ts' batch, with the gradient w.r.t. LP. */
export function policyLossReference(): Record<string, { loss: number; metrics: Record<string, number>; grad: Grid }> {
  const run = (name: string, args: Args | null, lp: Grid, ref: Grid, mask: Grid, extra: ExtraInputs = {}) => {
    const r = policyLoss(name, { logprob: seed(lp), old: OLD, ref, adv: ADV, mask, ...extra }, args);
    return { loss: r.loss.v, metrics: r.metrics, grad: gradientOf(r.loss, lp) };
  };
  return Object.fromEntries([
    ...CASES.map(([key, name, args, extra]) => [key, run(name, args, LP, REF, MASK, extra)]),
    ...DPO_CASES.map(([key, args]) => [key, run('dpo', args, LP4, REF4, MASK4)]),
  ]);
}
