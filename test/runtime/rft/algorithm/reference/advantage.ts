/**
 * The float64 reference of the advantage tests: Trinity-RFT's advantage functions (trinity/algorithm/advantage_fn/
 * at 10796ed, the release `main` models) written from their formulas, plain float64 arithmetic, no tensors and
 * nothing from runtime/. It regenerates advantage-expected.ts from advantage-cases.ts; reference-numbers.test.ts
 * holds the two equal, number for number.
 *
 * Random draws are fixed as the expected numbers were made: `randint` → 0 (grpo's duplication), `randperm` →
 * identity (rec's balanced drop).
 */
import type { AdvantageBatch } from '../../../../../runtime/rft/algorithm/advantage/types';
import { BATCH, GROUP_CASES, TRAINER_CASES, type Row } from '../advantage-cases';
import type { GroupExpected, TrainerExpected } from '../advantage-expected';
import { gatherMetrics, groupedBy, logSumExp, maskedWhiten, mean, std, sum } from './float64';

type Args = Record<string, unknown>;
interface Scored {
  row: Row;
  score: number;
}

const tid = (r: Row) => `0/${r[0]}`;
const rid = (r: Row) => `0/${r[0]}/${r[1]}`;
const reward = (r: Row) => r[3];
const id = (s: Scored) => `${tid(s.row)}#${s.row[1]}#${s.row[2]}`;

/** grpo_advantage.py GRPOGroupedAdvantage: (r − mean)/(std + ε) per task, std Bessel; a lone run: mean 0, std 1. */
function grpo(rows: Row[], args: Args): { scored: Scored[]; metrics: Record<string, number> } {
  const a: Args = { epsilon: 1e-6, std_threshold: null, duplicate_experiences: false, rank_penalty: null, ...args };
  const thr = a.std_threshold as number | null;
  const batchStd = a.std_cal_level === 'batch' ? (rows.length <= 1 ? 1 : std(rows.map(reward))) : undefined;
  const list: Record<string, number>[] = [];
  const kept: Scored[][] = [];
  let filtered = 0;
  for (const group of groupedBy(rows, tid)) {
    let m = 0;
    let s = 1;
    let keep = true;
    if (group.length === 1) {
      if (thr !== null) ((filtered += 1), (keep = false));
    } else {
      let rewards = group.map(reward);
      if (a.rank_penalty !== null) {
        // ranks by each experience's mean rollout log-prob, ascending (argsort of argsort)
        const lp = group.map((r) => mean(r[5]));
        const order = lp.map((_, i) => i).sort((x, y) => lp[x] - lp[y] || x - y);
        const rank = new Array<number>(group.length);
        order.forEach((i, k) => (rank[i] = k));
        rewards = rewards.map((r, i) => r * (1 - (rank[i] / group.length) * (a.rank_penalty as number)));
      }
      m = mean(rewards);
      s = std(rewards);
      if (thr !== null && s <= thr) ((filtered += group.length), (keep = false));
    }
    const denom = (batchStd ?? s) + (a.epsilon as number);
    kept.push(keep ? group.map((row) => ({ row, score: (reward(row) - m) / denom })) : []);
    list.push({ reward_mean: m, reward_std: s });
  }
  const valid = kept.filter((g) => g.length > 0);
  const scored =
    a.duplicate_experiences && thr !== null
      ? [...valid.flat(), ...Array.from({ length: kept.length - valid.length }, () => valid[0]).flat()]
      : kept.flat();
  return { scored, metrics: { ...gatherMetrics(list, 'group_advantages'), filtered_count: filtered } };
}

/** opmd_advantage.py OPMDGroupAdvantage: r − baseline; mean, or τ·(logsumexp(r/τ) − log n); 0 for a lone run. */
function opmd(rows: Row[], args: Args) {
  const a = { opmd_baseline: 'mean', tau: 1.0, ...args } as { opmd_baseline: string; tau: number };
  const list: Record<string, number>[] = [];
  const scored: Scored[] = [];
  for (const group of groupedBy(rows, tid)) {
    const r = group.map(reward);
    const baseline =
      group.length === 1
        ? 0
        : a.opmd_baseline === 'mean'
          ? mean(r)
          : a.tau * (logSumExp(r.map((x) => x / a.tau)) - Math.log(r.length));
    scored.push(...group.map((row) => ({ row, score: reward(row) - baseline })));
    list.push({ group_baseline: baseline, reward_mean: mean(r) });
  }
  return { scored, metrics: gatherMetrics(list, 'group_advantages') };
}

/** asymre_advantage.py ASYMREGroupAdvantage: r − (mean + baseline_shift); 0 for a lone run. */
function asymre(rows: Row[], args: Args) {
  const shift = (args.baseline_shift as number | undefined) ?? -0.1;
  const list: Record<string, number>[] = [];
  const scored: Scored[] = [];
  for (const group of groupedBy(rows, tid)) {
    const baseline = group.length === 1 ? 0 : mean(group.map(reward)) + shift;
    scored.push(...group.map((row) => ({ row, score: reward(row) - baseline })));
    list.push({ group_baseline: baseline, reward_mean: baseline - shift });
  }
  return { scored, metrics: gatherMetrics(list, 'group_advantages') };
}

/** reinforce_advantage.py: the reward itself. */
function reinforce(rows: Row[]) {
  const groups = groupedBy(rows, tid);
  return {
    scored: groups.flat().map((row) => ({ row, score: reward(row) })),
    metrics: gatherMetrics(
      groups.map((g) => ({ reward_mean: mean(g.map(reward)) })),
      'group_advantages',
    ),
  };
}

/**
 * rec_advantage.py RECGroupedAdvantage: positives r ≥ mean; `drop: balance` zeroes the surplus negatives (the first
 * ones, randperm fixed to identity); over the kept: mean and population std; r − mean, or /(std + ε).
 */
function rec(rows: Row[], args: Args) {
  const a = { epsilon: 1e-6, std_normalize: false, drop: null, ...args };
  const list: Record<string, number>[] = [];
  const scored: Scored[] = [];
  for (const group of groupedBy(rows, tid)) {
    const r = group.map(reward);
    const full = mean(r);
    const negatives = r.flatMap((x, i) => (x >= full ? [] : [i]));
    const surplus = negatives.length - (r.length - negatives.length);
    const dropped = new Set(a.drop === 'balance' && surplus > 0 ? negatives.slice(0, surplus) : []);
    const keptR = r.filter((_, i) => !dropped.has(i));
    const m = keptR.length <= 1 ? 0 : mean(keptR);
    const s = keptR.length <= 1 ? 1 : std(keptR, false);
    group.forEach((row, i) => {
      const score = dropped.has(i) ? 0 : a.std_normalize ? (r[i] - m) / (s + (a.epsilon as number)) : r[i] - m;
      scored.push({ row, score });
    });
    list.push({ drop_balance: dropped.size / r.length, reward_mean: m, reward_std: s });
  }
  return { scored, metrics: gatherMetrics(list, 'group_advantages') };
}

/**
 * multi_step_grpo_advantage.py StepWiseGRPOAdvantageFn: each run's LAST step reward, normalised over the task's
 * runs, given to every step of the run (÷ steps with enable_step_norm); std_threshold drops whole tasks.
 */
function stepWiseGrpo(rows: Row[], args: Args) {
  const a = { epsilon: 1e-6, enable_step_norm: false, std_threshold: null, std_cal_level: 'group', ...args };
  const tasks = groupedBy(rows, tid);
  const lastOf = (run: Row[]) => reward(run[run.length - 1]);
  const allLast = tasks.flatMap((t) => groupedBy(t, rid).map(lastOf));
  const batchStd = a.std_cal_level === 'batch' ? (allLast.length <= 1 ? 1 : std(allLast)) : undefined;
  const list: Record<string, number>[] = [];
  const scored: Scored[] = [];
  let filtered = 0;
  let skipped = 0;
  for (const task of tasks) {
    const runs = groupedBy(task, rid);
    const last = runs.map(lastOf);
    const m = runs.length === 1 ? 0 : mean(last);
    const s = runs.length === 1 ? 1 : std(last);
    list.push({ reward_mean: m, reward_std: s });
    if (a.std_threshold !== null && (runs.length === 1 || s <= (a.std_threshold as number))) {
      filtered += task.length;
      skipped += 1;
      continue;
    }
    runs.forEach((run, k) => {
      const score = (last[k] - m) / ((batchStd ?? s) + (a.epsilon as number));
      for (const row of run) scored.push({ row, score: a.enable_step_norm ? score / run.length : score });
    });
  }
  return {
    scored,
    metrics: {
      ...gatherMetrics(list, 'group_advantages'),
      experience_count: scored.length,
      filtered_count: filtered,
      skipped_group_ratio: skipped / tasks.length,
    },
  };
}

const GROUP_FNS: Record<string, (rows: Row[], args: Args) => { scored: Scored[]; metrics: Record<string, number> }> = {
  grpo,
  opmd,
  asymre,
  reinforce,
  rec,
  step_wise_grpo: stepWiseGrpo,
};

// ---- trainer side: [B][T] arrays ----

type Grid = number[][];
const zipMap = (a: Grid, b: Grid, f: (x: number, y: number) => number): Grid =>
  a.map((row, i) => row.map((x, t) => f(x, b[i][t])));
const broadcast = (scores: number[], mask: Grid): Grid => mask.map((row, i) => row.map((m) => scores[i] * m));
const outcome = (adv: Grid): TrainerExpected => ({ adv, ret: adv, metrics: {} });

/** Per-uid scores Σ_t r: each group's new scores, broadcast over the response mask (veRL's outcome estimators). */
function perUid(batch: AdvantageBatch, f: (scores: number[]) => number[]): Grid {
  const scores = batch.tokenLevelRewards.map((row) => sum(row));
  const out = [...scores];
  for (const rows of groupedBy(
    scores.map((_, i) => i),
    (i) => String(batch.uid![i]),
  )) {
    const next = f(rows.map((i) => scores[i]));
    rows.forEach((i, k) => (out[i] = next[k]));
  }
  return broadcast(out, batch.responseMask);
}

/** GRPO's outcome normalisation per uid (grpo_verl, clipb, clipv): a lone row gets mean 0, std 1. */
const grpoNormalised = (eps: number) => (g: number[]) => {
  const m = g.length === 1 ? 0 : mean(g);
  const s = g.length === 1 ? 1 : std(g);
  return g.map((x) => (x - m) / (s + eps));
};

/** Reverse recursion x_t = f(x_{t+1}, t) over every position of each row (no mask inside, as Trinity). */
function backwards(rows: Grid, f: (next: number, i: number, t: number) => number): Grid {
  return rows.map((row, i) => {
    const out = new Array<number>(row.length);
    let next = 0;
    for (let t = row.length - 1; t >= 0; t--) out[t] = next = f(next, i, t);
    return out;
  });
}

/** Masked population mean and variance over the mask (clip advantages' statistics; Σ mask clamped to ≥ 1). */
function populationStats(x: Grid, mask: Grid): { mean: number; variance: number } {
  const n = Math.max(sum(mask.flat()), 1);
  const mu = sum(zipMap(x, mask, (v, m) => v * m).flat()) / n;
  return { mean: mu, variance: sum(zipMap(x, mask, (v, m) => (v - mu) ** 2 * m).flat()) / n };
}

function clipFractions(mask: Grid, clipped: Grid, adv: Grid): Record<string, number> {
  const frac = (keep: (a: number) => boolean) => {
    const idx = mask.flatMap((row, i) => row.map((_, t) => [i, t] as const)).filter(([i, t]) => keep(adv[i][t]));
    return 1 - sum(idx.map(([i, t]) => clipped[i][t])) / Math.max(sum(idx.map(([i, t]) => mask[i][t])), 1);
  };
  return { frac_clipped: frac(() => true), frac_clipped_pos: frac((a) => a > 0), frac_clipped_neg: frac((a) => a < 0) };
}

/** Entropy signal S = p·(H + ℓ), p = exp(ℓ) (clipb_advantage.py / clipv_advantage.py). */
const signal = (lp: Grid, H: Grid): Grid => zipMap(lp, H, (l, h) => Math.exp(l) * (h + l));

/** Row sums of masked per-token values: their mean and Bessel std (distillation metrics). */
function rowStats(perToken: Grid, mask: Grid): { mean: number; std: number } {
  const sums = zipMap(perToken, mask, (v, m) => v * m).map((row) => sum(row));
  return { mean: mean(sums), std: sums.length > 1 ? std(sums) : 0 };
}

const TRAINER_FNS: Record<string, (b: AdvantageBatch, args: Args) => TrainerExpected> = {
  /** ppo_advantage.py: GAE δ_t = r_t + γV_{t+1} − V_t, A_t = δ_t + γλA_{t+1}; returns A + V; A masked-whitened. */
  ppo(b, args) {
    const { gamma, lam } = { gamma: 1.0, lam: 1.0, ...args } as { gamma: number; lam: number };
    const V = b.values!;
    const r = b.tokenLevelRewards;
    const A = backwards(r, (next, i, t) => r[i][t] + gamma * (V[i][t + 1] ?? 0) - V[i][t] + gamma * lam * next);
    return { adv: maskedWhiten(A, b.responseMask), ret: zipMap(A, V, (x, v) => x + v), metrics: {} };
  },
  /** reinforce_plus_plus_advantage.py: G_t = r_t + γG_{t+1}; advantages masked_whiten(G)·mask; returns G. */
  reinforceplusplus(b, args) {
    const gamma = (args.gamma as number | undefined) ?? 1.0;
    const G = backwards(b.tokenLevelRewards, (next, i, t) => b.tokenLevelRewards[i][t] + gamma * next);
    return { adv: zipMap(maskedWhiten(G, b.responseMask), b.responseMask, (x, m) => x * m), ret: G, metrics: {} };
  },
  /** remax_advantage.py: returns = reverse cumsum of r·mask; advantages = returns − baseline·mask. */
  remax(b) {
    const ret = backwards(b.tokenLevelRewards, (next, i, t) => next + b.tokenLevelRewards[i][t] * b.responseMask[i][t]);
    return {
      adv: ret.map((row, i) => row.map((g, t) => g - b.rewardBaselines![i] * b.responseMask[i][t])),
      ret,
      metrics: {},
    };
  },
  /** rloo_advantage.py: s·n/(n−1) − mean·n/(n−1) per uid; a lone row keeps s. */
  rloo: (b) =>
    outcome(
      perUid(b, (g) =>
        g.length <= 1 ? g : g.map((s) => (s * g.length) / (g.length - 1) - (mean(g) * g.length) / (g.length - 1)),
      ),
    ),
  grpo_verl: (b, args) => outcome(perUid(b, grpoNormalised((args.epsilon as number | undefined) ?? 1e-6))),
  /** opmd_advantage.py OPMDAdvantageFn: s − baseline per uid (mean or τ-logavgexp); a lone row keeps s. */
  opmd_verl(b, args) {
    const a = { opmd_baseline: 'mean', tau: 1.0, ...args } as { opmd_baseline: string; tau: number };
    return outcome(
      perUid(b, (g) => {
        if (g.length === 1) return g;
        const base =
          a.opmd_baseline === 'mean' ? mean(g) : a.tau * (logSumExp(g.map((x) => x / a.tau)) - Math.log(g.length));
        return g.map((s) => s - base);
      }),
    );
  },
  asymre_verl(b, args) {
    const shift = (args.baseline_shift as number | undefined) ?? -0.1;
    return outcome(perUid(b, (g) => (g.length === 1 ? g : g.map((s) => s - (mean(g) + shift)))));
  },
  /** on_policy_distill_advantage.py: A = kl_coef·(ℓ_teacher − ℓ_student)·mask. */
  on_policy_distill(b, args) {
    const k = (args.kl_coef as number | undefined) ?? 1.0;
    const mask = b.responseMask;
    const adv = b.oldLogprobs!.map((row, i) => row.map((s, t) => k * (b.teacherLogprobs![i][t] - s) * mask[i][t]));
    const kl = rowStats(
      zipMap(b.oldLogprobs!, b.teacherLogprobs!, (s, te) => s - te),
      mask,
    );
    return {
      adv,
      ret: adv,
      metrics: { 'kl/mean': kl.mean, 'kl/std': kl.std, 'advantages/mean': mean(adv.map((row) => sum(row))) },
    };
  },
  /**
   * jsd_advantage.py: per token, both log-probs ÷ temperature; β = lambda_coef; β = 0 → ℓ_s − ℓ_t, β = 1 →
   * ℓ_t − ℓ_s, else log m = logsumexp(ℓ_s + log(1 − β), ℓ_t + log β), JSD = β(ℓ_t − log m) + (1 − β)(ℓ_s − log m);
   * A = −kl_coef·JSD·mask.
   */
  jsd(b, args) {
    const a = { lambda_coef: 0.5, kl_coef: 1.0, temperature: 1.0, ...args } as Record<string, number>;
    const beta = a.lambda_coef;
    const mask = b.responseMask;
    const jsd = b.oldLogprobs!.map((row, i) =>
      row.map((s0, t) => {
        if (mask[i][t] === 0) return 0;
        const s = a.temperature !== 1 ? s0 / a.temperature : s0;
        const te = a.temperature !== 1 ? b.teacherLogprobs![i][t] / a.temperature : b.teacherLogprobs![i][t];
        if (beta === 0) return (s - te) * mask[i][t];
        if (beta === 1) return (te - s) * mask[i][t];
        const logM = logSumExp([s + Math.log1p(-beta), te + Math.log(beta)]);
        return (beta * (te - logM) + (1 - beta) * (s - logM)) * mask[i][t];
      }),
    );
    const adv = zipMap(jsd, mask, (j, m) => -a.kl_coef * j * m);
    const st = rowStats(jsd, mask);
    return {
      adv,
      ret: adv,
      metrics: { 'jsd/mean': st.mean, 'jsd/std': st.std, 'advantages/mean': mean(adv.map((row) => sum(row))) },
    };
  },
  /** clipb_advantage.py: GRPO advantages; negative-advantage tokens kept only where S − E[S] ≥ −mu·σ_S. */
  clipb(b, args) {
    const a = { epsilon: 1e-6, mu: 2.5, ...args } as Record<string, number>;
    const mask = b.responseMask;
    const adv = perUid(b, grpoNormalised(a.epsilon));
    const S = signal(b.rolloutLogprobs!, b.entropys!);
    const { mean: ES, variance: varS } = populationStats(S, mask);
    const sd = Math.sqrt(varS);
    const clipped = mask.map((row, i) =>
      row.map((m, t) => (sd < 1e-12 || adv[i][t] >= 0 || S[i][t] - ES >= -(a.mu * sd) ? m : 0)),
    );
    return { adv, ret: adv, mask: clipped, metrics: { ...clipFractions(mask, clipped, adv), ES, varS } };
  },
  /**
   * clipv_advantage.py: D = necs − S; tokens with A > 0 kept, others only where D ≤ mu·σ_D; past max_frac clipped,
   * only the max(⌊max_frac·N⌋, 1) negative-advantage violators with the largest D stay clipped.
   */
  clipv(b, args) {
    const a = { epsilon: 1e-6, mu: 8.5, max_frac: 1e-4, ...args } as Record<string, number>;
    const mask = b.responseMask;
    const adv = perUid(b, grpoNormalised(a.epsilon));
    const D = zipMap(b.necs!, signal(b.oldLogprobs!, b.entropys!), (n, s) => n - s);
    const sd = Math.sqrt(populationStats(D, mask).variance);
    const within = D.map((row) => row.map((d) => d <= a.mu * sd));
    let keep = adv.map((row, i) => row.map((x, t) => sd < 1e-12 || x > 0 || within[i][t]));
    const total = Math.max(sum(mask.flat()), 1);
    const clippedCount = sum(mask.flatMap((row, i) => row.map((m, t) => (m > 0 && !keep[i][t] ? 1 : 0))));
    if (sd >= 1e-12 && clippedCount / total > a.max_frac) {
      const cap = Math.max(Math.trunc(a.max_frac * total), 1);
      const violators = adv
        .flatMap((row, i) => row.map((x, t) => ({ i, t, x })))
        .filter(({ i, t, x }) => x < 0 && mask[i][t] > 0 && !within[i][t])
        .sort((p, q) => D[q.i][q.t] - D[p.i][p.t] || p.i - q.i || p.t - q.t);
      if (violators.length > cap) {
        keep = keep.map((row) => [...row]);
        violators.forEach(({ i, t }, k) => (keep[i][t] = k >= cap));
      }
    }
    const clipped = zipMap(
      mask,
      keep.map((row) => row.map(Number)),
      (m, k) => (k ? m : 0),
    );
    return { adv, ret: adv, mask: clipped, metrics: { ...clipFractions(mask, clipped, adv), stdD: sd } };
  },
};

export function groupReference(): Record<string, GroupExpected> {
  const out: Record<string, GroupExpected> = {};
  for (const [key, name, args, rows] of GROUP_CASES) {
    const { scored, metrics } = GROUP_FNS[name](rows, args ?? {});
    out[key] = { order: scored.map(id), scores: scored.map((s) => s.score), metrics };
  }
  return out;
}

export function trainerReference(): Record<string, TrainerExpected> {
  const out: Record<string, TrainerExpected> = {};
  for (const [key, name, args] of TRAINER_CASES) out[key] = TRAINER_FNS[name](BATCH, args ?? {});
  return out;
}

/** Whether `name` is one of Trinity's explorer-side (group) advantages. */
export const isGroupAdvantage = (name: string): boolean => name in GROUP_FNS;

/** Trinity's group advantage `name` on `rows`: each kept row with its score (its action tokens' advantage). */
export function groupAdvantage(name: string, rows: Row[], args: Args): { row: Row; score: number }[] {
  return GROUP_FNS[name](rows, args).scored;
}

/** Trinity's trainer-side advantage `name` on a padded batch. Undefined when `name` is not one. */
export function trainerAdvantage(name: string, batch: AdvantageBatch, args: Args): TrainerExpected | undefined {
  return TRAINER_FNS[name]?.(batch, args);
}
