/**
 * What the first trainer step of an RL run must log, recomputed from what that step read, independently of the
 * trainer: the rows the SQL experience buffer's read log (`<table>__reads`) says step 1 took (plus, for the mix
 * sample strategy, the expert rows it adds), each sequence scored alone by the initial model, advantages from
 * Trinity's formulas (test/runtime/rft/algorithm/reference/advantage.ts), and the policy loss, KL loss and entropy
 * term from Trinity's formulas in float64 (reference/policy-loss.ts, reference/kl.ts, reference/aggregate.ts). The
 * algorithm's functions are taken by their names in the resolved config, never through runtime/rft/algorithm, so a
 * registry entry or a trainer input wired to the wrong function makes the two disagree.
 *
 * How Trinity logs `actor/*` (trinity/trainer/verl/dp_actor.py `update_policy` at 10796ed, reduced by veRL 0.7's
 * verl/utils/metric/utils.py `reduce_metrics`): every metric of every micro-batch of every mini-batch and ppo epoch
 * is appended to a list, then averaged (np.mean); `actor/pg_loss` and `actor/kl_loss` are first multiplied by the
 * micro-batch's loss scale (1/gradient_accumulation). These runs train one mini-batch of one micro-batch for one
 * epoch, so each metric is the loss function's own value on the whole batch.
 */
import Database from 'better-sqlite3';
import * as tf from '@tensorflow/tfjs-core';
import type { Config } from '../../../../runtime/config/types.generated';
import type { Experience } from '../../../../runtime/rft/experience';
import { floatsFromRow, recordToExperience } from '../../../../runtime/rft/buffer/codec';
import { readTrainData } from '../../../../runtime/rft/data/train-data';
import { loadPretrained, type Pretrained } from '../../../../runtime/engine/pretrained';
import { loadValueModel } from '../../../../runtime/engine/lm/value-head';
import { scoreSequences } from '../../../../runtime/engine/logprobs';
import type { CausalLM } from '../../../../runtime/engine/lm/transformer';
import type { Row } from '../algorithm/advantage-cases';
import { groupAdvantage, isGroupAdvantage, trainerAdvantage } from '../algorithm/reference/advantage';
import { aggregateLoss } from '../algorithm/reference/aggregate';
import { constant } from '../algorithm/reference/dual';
import { klLoss } from '../algorithm/reference/kl';
import { policyLoss } from '../algorithm/reference/policy-loss';

type Grid = number[][];
type Args = Record<string, unknown>;

export interface FirstStep {
  /** Metric name (`actor/…`, `critic/…`) → what Trinity's formulas give on the step's batch. */
  expected: Record<string, number>;
  /** Rows whose stored (explorer-side) advantages differ from Trinity's formula, described. */
  advantageMismatches: string[];
}

interface StoredRow {
  id: number;
  exp: Experience;
}

/** The experience buffer's rows, decoded; and the ids trainer step 1 took, in the order the reader returned them. */
function readBuffer(file: string, table: string): { all: StoredRow[]; firstStepIds: number[] } {
  const db = new Database(file, { readonly: true });
  try {
    const q = (s: string) => `"${s.replace(/"/g, '""')}"`;
    const all = (db.prepare(`SELECT * FROM ${q(table)} ORDER BY id`).all() as Record<string, unknown>[]).map((r) => ({
      id: r.id as number,
      exp: recordToExperience(JSON.parse(r.experience as string), floatsFromRow(r)),
    }));
    const read = db.prepare(`SELECT ids FROM ${q(`${table}__reads`)} WHERE reader = 'trainer' AND seq = 1`).get() as
      | { ids: string }
      | undefined;
    if (!read) throw new Error(`${file}: no read of trainer step 1 in ${table}__reads`);
    const ids = (JSON.parse(read.ids) as [number, number][]).flatMap(([a, b]) =>
      Array.from({ length: b - a + 1 }, (_, k) => a + k),
    );
    // A priority read takes `ORDER BY consumed ASC, id DESC`: at step 1 nothing is consumed yet, so newest first.
    return { all, firstStepIds: ids.sort((a, b) => b - a) };
  } finally {
    db.close();
  }
}

const responseLength = (e: Experience) => e.tokens.length - e.promptLength;
const actionMask = (e: Experience) => e.actionMask ?? new Array<number>(responseLength(e)).fill(1);

/** Per response token: log π and entropy at `temperature`, the sequence scored alone (no padding). */
function scoreAlone(model: CausalLM, e: Experience, temperature: number): { logprob: number[]; entropy: number[] } {
  return tf.tidy(() => {
    const s = scoreSequences(model, tf.tensor2d([e.tokens], undefined, 'int32'), { temperature, entropy: true });
    // column t predicts token t + 1: the response's tokens are predicted from column promptLength − 1 on
    const cut = (t: tf.Tensor2D) => (t.arraySync()[0] as number[]).slice(e.promptLength - 1);
    return { logprob: cut(s.logprobs), entropy: cut(s.entropy!) };
  });
}

/** The critic's value of each response token's state (veRL's critic: the position before it), the row alone. */
function valuesAlone(critic: ReturnType<typeof loadValueModel>, e: Experience): number[] {
  return tf.tidy(() => {
    const ids = tf.tensor2d([e.tokens.slice(0, -1)], undefined, 'int32');
    return (critic.values(ids).arraySync()[0] as number[]).slice(e.promptLength - 1);
  });
}

/** A row's per-token numbers, short: the distinct values. */
const brief = (xs: number[]): string => `[${[...new Set(xs)].join(', ')}]`;

/** `<name>/{mean,max,min}` (veRL's compute_data_metrics). */
function stats(name: string, xs: number[]): Record<string, number> {
  return {
    [`${name}/mean`]: xs.reduce((a, x) => a + x, 0) / xs.length,
    [`${name}/max`]: Math.max(...xs),
    [`${name}/min`]: Math.min(...xs),
  };
}

/** The values at the mask's 1s, row by row. */
const onMask = (g: Grid, mask: Grid): number[] => g.flatMap((row, i) => row.filter((_, t) => mask[i][t] > 0));

/** Rows of per-token values padded with 0 to width R. */
const padded = (rows: readonly (readonly number[])[], R: number): Grid =>
  rows.map((r) => Array.from({ length: R }, (_, t) => r[t] ?? 0));

/**
 * The mix sample strategy's expert rows of step 1: the auxiliary SFT buffer from its start, zero log-probs and
 * advantages (trinity/algorithm/sample_strategy/mix_sample_strategy.py).
 */
async function expertRows(cfg: Config, tokenizer: Pretrained['tokenizer'], configDir: string): Promise<Experience[]> {
  const args = (cfg.algorithm.sample_strategy_args ?? {}) as Args;
  const source = cfg.buffer.trainer_input.auxiliary_buffers![(args.sft_dataset_name as string) ?? 'sft_dataset'];
  const data = await readTrainData(
    { ...source, schema_type: 'sft' },
    { baseDir: configDir, tokenizer, maxLength: cfg.model.max_model_len },
  );
  const n = Math.ceil(((args.expert_data_ratio as number | undefined) ?? 0.5) * cfg.buffer.train_batch_size);
  return data.experiences.slice(0, n).map((e) => {
    const len = responseLength(e);
    return { ...e, reward: 0, logprobs: new Array(len).fill(0), advantages: new Array(len).fill(0) };
  });
}

/**
 * An explorer-side advantage ran over each explorer step's experiences before they reached the buffer: the rows
 * whose stored advantages differ from the formula on the same groups (every row of the explorer steps `batches`).
 */
function groupAdvantageMismatches(name: string, args: Args, all: StoredRow[], batches: Set<string>): string[] {
  const out: string[] = [];
  for (const b of batches) {
    const group = all.filter((r) => String(r.exp.eid.batch) === b);
    const rows = group.map(({ exp: e }): Row => {
      return [Number(e.eid.task), e.eid.run, e.eid.step, e.reward ?? 0, actionMask(e), e.logprobs ?? []];
    });
    const scoreOf = new Map(
      groupAdvantage(name, rows, args).map((s) => [`${s.row[0]}/${s.row[1]}/${s.row[2]}`, s.score]),
    );
    for (const { id, exp } of group) {
      const score = scoreOf.get(`${exp.eid.task}/${exp.eid.run}/${exp.eid.step}`) ?? NaN;
      const want = actionMask(exp).map((m) => score * m);
      const got = exp.advantages ?? [];
      if (want.length !== got.length || want.some((w, t) => !(Math.abs(w - got[t]) <= 1e-12 * (1 + Math.abs(w)))))
        out.push(`row ${id}: stored ${brief(got)}, formula ${brief(want)}`);
    }
  }
  return out;
}

/**
 * A trainer-side advantage on the step's batch: the outcome reward on each row's last response token (Trinity's
 * token_level_scores) and, for ppo, the initial critic's values, zero past each response (veRL's
 * dp_critic.compute_values: values * response_mask). Returns the advantages and the critic/ metrics they give.
 */
function trainerSideAdvantages(
  name: string,
  args: Args,
  batch: Experience[],
  mask: Grid,
  critic: { modelDir: string; seed: number },
): { adv: Grid; metrics: Record<string, number> } {
  const R = mask[0].length;
  const tokenLevelRewards = batch.map((e) => {
    const row = new Array<number>(R).fill(0);
    row[Math.max(0, responseLength(e) - 1)] = e.reward ?? 0;
    return row;
  });
  let values: Grid | undefined;
  if (name === 'ppo') {
    const model = loadValueModel(critic.modelDir, critic.seed);
    values = padded(
      batch.map((e) => valuesAlone(model, e).map((v, t) => v * actionMask(e)[t])),
      R,
    );
    model.dispose();
  }
  const uid = batch.map((e) => `${e.eid.batch}/${e.eid.task}`);
  const reference = trainerAdvantage(name, { tokenLevelRewards, responseMask: mask, uid, values }, args);
  if (!reference) throw new Error(`no reference for advantage_fn ${name}`);
  const metrics = values
    ? { ...stats('critic/values', onMask(values, mask)), ...stats('critic/returns', onMask(reference.ret, mask)) }
    : {};
  return { adv: reference.adv, metrics };
}

/**
 * The first step of a finished run: `cfg` its resolved config, `db`/`table` its SQL experience buffer, `modelDir` the
 * initial weights, `configDir` where its relative paths start, `seed` the run's seed (the critic's fresh value head).
 */
export async function firstTrainerStep(o: {
  cfg: Config;
  db: string;
  table: string;
  modelDir: string;
  configDir: string;
  seed: number;
}): Promise<FirstStep> {
  const { cfg } = o;
  const a = cfg.algorithm;
  // the launch check fills every function name of the algorithm type
  const [advantageFn, policyLossFn, klLossFn, entropyLossFn] = [
    a.advantage_fn!,
    a.policy_loss_fn!,
    a.kl_loss_fn!,
    a.entropy_loss_fn!,
  ];
  const { all, firstStepIds } = readBuffer(o.db, o.table);
  const byId = new Map(all.map((r) => [r.id, r.exp]));
  const rows: Experience[] = firstStepIds.map((id) => byId.get(id)!);
  const pretrained = loadPretrained(o.modelDir);
  const expert = a.sample_strategy === 'mix' ? await expertRows(cfg, pretrained.tokenizer, o.configDir) : [];
  const batch = [...rows, ...expert];
  const isExpert = batch.map((_, i) => i >= rows.length);

  // veRL scores at actor_rollout_ref.rollout.temperature, which Trinity sets to the first training taskset's
  // rollout_args.temperature (trinity/trainer/verl/verl_config.py at 10796ed, `rollout_config.temperature`).
  const temperature = cfg.buffer.explorer_input.taskset?.rollout_args.temperature ?? 1.0;
  const scores = batch.map((e) => scoreAlone(pretrained.model, e, temperature));
  pretrained.model.dispose();
  const R = Math.max(...batch.map(responseLength));
  const mask = padded(batch.map(actionMask), R);
  const logprob = padded(
    scores.map((s) => s.logprob),
    R,
  );
  const old = padded(
    batch.map((e) => e.logprobs ?? []),
    R,
  );

  const expected: Record<string, number> = {};
  const advArgs = (a.advantage_fn_args ?? {}) as Args;
  let advantageMismatches: string[] = [];
  let adv: Grid;
  if (isGroupAdvantage(advantageFn)) {
    const batches = new Set(rows.map((e) => String(e.eid.batch)));
    advantageMismatches = groupAdvantageMismatches(advantageFn, advArgs, all, batches);
    adv = padded(
      batch.map((e) => e.advantages ?? []),
      R,
    );
  } else {
    const r = trainerSideAdvantages(advantageFn, advArgs, batch, mask, { modelDir: o.modelDir, seed: o.seed });
    adv = r.adv;
    Object.assign(expected, r.metrics);
  }
  // veRL's compute_data_metrics: advantages over the response mask (every row of the batch, expert rows' zeros too)
  Object.assign(expected, stats('critic/advantages', onMask(adv, mask)));

  const step = 1; // Trinity's trainer passes train_step_num + 1 (trinity/trainer/trainer.py `_sample_data`)
  const policy = policyLoss(
    policyLossFn,
    {
      logprob: constant(logprob),
      old,
      ref: logprob, // the reference model is the initial one, the policy at step 1
      adv,
      mask,
      expertMask: isExpert,
      step: batch.map(() => step),
    },
    a.policy_loss_fn_args,
  );
  for (const [k, v] of Object.entries(policy.metrics)) expected[`actor/${k}`] = v;
  const lossAgg = a.loss_agg_mode ?? 'token-mean';
  if (entropyLossFn !== 'none') {
    // `mix` averages over the usual rows only
    const keep = batch.map((_, i) => entropyLossFn !== 'mix' || !isExpert[i]);
    const entropy = padded(
      scores.filter((_, i) => keep[i]).map((s) => s.entropy),
      R,
    );
    expected['actor/entropy_loss'] = aggregateLoss(
      constant(entropy),
      mask.filter((_, i) => keep[i]),
      lossAgg,
    ).v;
  }
  if (klLossFn !== 'none') {
    const coef = ((a.kl_loss_fn_args ?? {}) as Args).kl_coef as number;
    expected['actor/kl_loss'] = klLoss(klLossFn, coef, constant(logprob), logprob, mask, lossAgg, old).klLoss;
    expected['actor/kl_coef'] = coef;
  }
  return { expected, advantageMismatches };
}
