/**
 * The engine's gradient checks as named cases, so each backend's test file runs the same checks (all of them on
 * wasm: test/runtime/engine/gradcheck.test.ts; the smallest subset on webgpu: webgpu-gradcheck.test.ts). A case
 * builds its seeded inputs, checks them against central differences (test/helpers/gradcheck.ts) and disposes them;
 * it fails when it leaves a tensor behind. Every case works on whatever backend is active.
 */
import assert from 'node:assert/strict';
import * as tf from '@tensorflow/tfjs-core';
import { scoreSequences } from '../../runtime/engine/logprobs';
import { initModel } from '../../runtime/engine/lm/checkpoint';
import { newModelConfigJson, parseModelConfig, type NewModelSpec } from '../../runtime/engine/lm/config';
import { ropeTables } from '../../runtime/engine/lm/rope';
import type { CausalLM } from '../../runtime/engine/lm/transformer';
import {
  applyRopeRotation,
  geluErf,
  geluTanh,
  groupedQueryAttention,
  layerNorm,
  linear,
  mm,
  mmT,
  rmsNorm,
  rotateHalfMatrix,
  silu,
  tokenEntropy,
  tokenLogProbs,
} from '../../runtime/engine/ops';
import { applyRope } from './rope-reference';
import { Rng } from '../../runtime/engine/random';
import { gradCheck, gradCheckVariables, randn, type GradCheckReport } from './gradcheck';

export interface GradCase {
  /** The test's title. */
  name: string;
  run(): Promise<GradCheckReport>;
}

/** Runs `fn` with fresh seeded inputs and disposes them (and anything else) afterwards. */
export async function withInputs<T>(
  seed: number,
  make: (rng: Rng) => tf.Tensor[],
  fn: (xs: tf.Tensor[]) => Promise<T>,
): Promise<T> {
  const count0 = tf.memory().numTensors;
  const xs = make(new Rng(seed));
  let out: T;
  try {
    out = await fn(xs);
  } finally {
    xs.forEach((x) => x.dispose());
  }
  assert.equal(tf.memory().numTensors, count0, 'the check leaked tensors');
  return out;
}

/** Runs `fn` with an int32 tensor that is disposed afterwards. */
async function withInts<T>(values: number[][], fn: (t: tf.Tensor2D) => Promise<T>): Promise<T> {
  const t = tf.tensor2d(values, [values.length, values[0].length], 'int32');
  try {
    return await fn(t);
  } finally {
    t.dispose();
  }
}

/** The targets of the log-prob cases (and of the negative control that drops the logsumexp's gradient). */
const LOGPROB_TARGETS = [
  [3, 0, 10, 7, 7],
  [1, 9, 2, 10, 4],
];

/** Gradient checks of the single ops, by name. */
export const OP_CASES: Record<string, GradCase> = {};

function op(key: string, name: string, run: () => Promise<GradCheckReport>): void {
  OP_CASES[key] = { name, run };
}

op('mm', 'mm: a[m,k] @ b[k,n], both inputs', () =>
  withInputs(
    11,
    (rng) => [randn([5, 7], rng), randn([7, 6], rng)],
    ([a, b]) =>
      gradCheck('mm', (x, y) => mm(x as tf.Tensor2D, y as tf.Tensor2D), [a, b], {
        inputNames: ['a', 'b'],
        maxCoords: 48,
      }),
  ),
);

op('mmT', 'mmT: a[m,k] @ b[n,k]ᵀ, both inputs', () =>
  withInputs(
    12,
    (rng) => [randn([5, 7], rng), randn([6, 7], rng)],
    ([a, b]) =>
      gradCheck('mmT', (x, y) => mmT(x as tf.Tensor2D, y as tf.Tensor2D), [a, b], {
        inputNames: ['a', 'b'],
        maxCoords: 48,
      }),
  ),
);

op('linear', 'linear with bias over a rank-3 input: x, w, b', () =>
  withInputs(
    13,
    (rng) => [randn([2, 3, 7], rng), randn([7, 5], rng, 0.5), randn([5], rng)],
    ([x, w, b]) =>
      gradCheck('linear', (xx, ww, bb) => linear(xx, ww as tf.Tensor2D, bb as tf.Tensor1D), [x, w, b], {
        inputNames: ['x', 'w', 'b'],
        maxCoords: 32,
      }),
  ),
);

op('layerNorm', 'layerNorm: x, w, b (eps 1e-5)', () =>
  withInputs(
    14,
    (rng) => [randn([3, 4, 8], rng, 1, 0.3), randn([8], rng, 0.2, 1), randn([8], rng, 0.2)],
    ([x, w, b]) =>
      gradCheck('layerNorm', (xx, ww, bb) => layerNorm(xx, ww, bb, 1e-5), [x, w, b], {
        inputNames: ['x', 'w', 'b'],
        maxCoords: 40,
      }),
  ),
);

op('layerNormNoBias', 'layerNorm without bias: x, w', () =>
  withInputs(
    15,
    (rng) => [randn([2, 6], rng), randn([6], rng, 0.2, 1)],
    ([x, w]) =>
      gradCheck('layerNorm(no bias)', (xx, ww) => layerNorm(xx, ww, undefined, 1e-5), [x, w], {
        inputNames: ['x', 'w'],
      }),
  ),
);

op('rmsNorm', 'rmsNorm: x, w (eps 1e-6)', () =>
  withInputs(
    16,
    (rng) => [randn([3, 4, 8], rng, 1, 0.3), randn([8], rng, 0.2, 1)],
    ([x, w]) =>
      gradCheck('rmsNorm', (xx, ww) => rmsNorm(xx, ww, 1e-6), [x, w], { inputNames: ['x', 'w'], maxCoords: 40 }),
  ),
);

for (const [name, fn] of [
  ['geluTanh', geluTanh],
  ['geluErf', geluErf],
  ['silu', silu],
] as const) {
  op(name, `${name}: elementwise over [-4, 4]`, () =>
    withInputs(
      17,
      (rng) => [randn([4, 16], rng, 1.6)],
      ([x]) => gradCheck(name, (xx) => fn(xx), [x], { inputNames: ['x'], maxCoords: 64 }),
    ),
  );
}

for (const [key, rotation] of [
  ['applyRope', false],
  ['applyRopeRotation', true],
] as const) {
  op(
    key,
    `${key}: x [B, H, T, d] with the tables of a real config (θ = 1e4, positions 0..T-1 offset)${rotation ? ', full-width tables and the rotate-half matrix' : ''}`,
    async () => {
      const cfg = parseModelConfig(
        newModelConfigJson({
          family: 'llama',
          layers: 1,
          hidden: 24,
          heads: 3,
          vocabSize: 8,
          maxPositions: 16,
          eosTokenIds: [0],
          ropeTheta: 10000,
        }),
      );
      const tables = ropeTables(cfg);
      try {
        return await withInputs(
          18,
          (rng) => [randn([2, 3, 5, 8], rng)],
          ([x]) => {
            const [B, T, half] = [2, 5, 4];
            const positions = [
              [0, 1, 2, 3, 4],
              [3, 4, 5, 6, 7],
            ];
            return withInts(positions, async (pos) => {
              const [cos, sin] = [tables.cos, tables.sin].map((t) =>
                tf.tidy(() => {
                  const h = tf.reshape(tf.gather(t, pos), [B, 1, T, half]);
                  return rotation ? tf.concat([h, h], -1) : h;
                }),
              );
              const rot = rotateHalfMatrix(2 * half);
              try {
                return await gradCheck(
                  key,
                  (xx) => (rotation ? applyRopeRotation(xx, cos, sin, rot) : applyRope(xx, cos, sin)),
                  [x],
                  { inputNames: ['x'], maxCoords: 48 },
                );
              } finally {
                tf.dispose([cos, sin, rot]);
              }
            });
          },
        );
      } finally {
        tf.dispose([tables.cos, tables.sin]);
      }
    },
  );
}

op(
  'attention',
  'groupedQueryAttention: q [B, 4 heads, T, d] on k, v [B, 2 kv heads, T, d], causal bias (softmax attention)',
  () => {
    const T = 5;
    // The model's causal bias: −1e9 above the diagonal (transformer.ts), so the masked keys get exactly zero weight.
    const causal = new Float32Array(T * T);
    for (let i = 0; i < T; i++) for (let j = i + 1; j < T; j++) causal[i * T + j] = -1e9;
    return withInputs(
      23,
      (rng) => [randn([2, 4, T, 4], rng), randn([2, 2, T, 4], rng), randn([2, 2, T, 4], rng)],
      async ([q, k, v]) => {
        const bias = tf.tensor4d(causal, [1, 1, T, T]);
        try {
          return await gradCheck(
            'attention',
            (qq, kk, vv) => groupedQueryAttention(qq as tf.Tensor4D, kk as tf.Tensor4D, vv as tf.Tensor4D, bias),
            [q, k, v],
            { inputNames: ['q', 'k', 'v'], maxCoords: 24 },
          );
        } finally {
          bias.dispose();
        }
      },
    );
  },
);

for (const temperature of [1, 0.7]) {
  op(`tokenLogProbs(T=${temperature})`, `tokenLogProbs: logits [B, T, V], temperature ${temperature}`, () =>
    withInts(LOGPROB_TARGETS, (targets) =>
      withInputs(
        19,
        (rng) => [randn([2, 5, 11], rng, 1.5)],
        ([z]) =>
          gradCheck(`tokenLogProbs(T=${temperature})`, (zz) => tokenLogProbs(zz, targets, temperature), [z], {
            inputNames: ['logits'],
            maxCoords: 48,
          }),
      ),
    ),
  );
}

for (const temperature of [1, 1.3]) {
  op(`tokenEntropy(T=${temperature})`, `tokenEntropy: logits [B, T, V], temperature ${temperature}`, () =>
    withInputs(
      20,
      (rng) => [randn([2, 5, 11], rng, 1.5)],
      ([z]) =>
        gradCheck(`tokenEntropy(T=${temperature})`, (zz) => tokenEntropy(zz, temperature), [z], {
          inputNames: ['logits'],
          maxCoords: 48,
        }),
    ),
  );
}

op('gather', 'embedding lookup: tf.gather(table, ids [B, T]) with repeated ids (gradient: UnsortedSegmentSum)', () => {
  assert.ok(tf.getKernel('UnsortedSegmentSum', tf.getBackend()), `no UnsortedSegmentSum kernel on ${tf.getBackend()}`);
  const ids = [
    [2, 5, 2, 0],
    [8, 2, 5, 5],
  ];
  return withInts(ids, (idsT) =>
    withInputs(
      21,
      (rng) => [randn([9, 6], rng)],
      // Every row of the table is checked, including the ones never looked up (gradient exactly 0).
      ([table]) => gradCheck('gather', (t) => tf.gather(t, idsT), [table], { inputNames: ['table'], maxCoords: 54 }),
    ),
  );
});

// ---- whole tiny models: softmax attention, GQA, RoPE, norms, MLPs, tied/untied heads, through scoreSequences ----

/** Every weight re-drawn (seeded) at O(1) scale so attention is far from uniform and no bias or norm weight is trivial. */
function tinyModel(spec: NewModelSpec, seed: number): CausalLM {
  const model = initModel(parseModelConfig(newModelConfigJson(spec)), seed);
  const rng = new Rng(seed + 1000);
  for (const s of model.specs) {
    const v = model.params.get(s.name)!;
    const fanIn = s.shape.length === 2 ? s.shape[0] : 1;
    let t: tf.Tensor;
    if (s.init === 'ones') t = randn(s.shape, rng, 0.2, 1);
    else if (s.init === 'zeros') t = randn(s.shape, rng, 0.3);
    else if (/(wte|wpe|embed_tokens)/.test(s.name)) t = randn(s.shape, rng, 0.7);
    else t = randn(s.shape, rng, 1.2 / Math.sqrt(fanIn));
    v.assign(t);
    t.dispose();
  }
  return model;
}

/** Entries checked per weight tensor (all of them for the small ones: norms, biases). */
export const COORDS_PER_WEIGHT = 12;
/**
 * A whole model is a deep composition: with the plain central difference at h = 1e-2 the truncation error reached
 * 2.5e-4 on a 4e-3 gradient (gpt2 ln_1.weight), and at h = 1e-3 float32 rounding of the forward pass gives median
 * errors of 1e-3. Richardson extrapolation of the central differences at h and 2h with h = 2e-2 keeps both below
 * 5e-4 (median ≈ 5e-5), so the same atol/rtol as the single ops apply.
 */
const MODEL_STEP = 2e-2;

export interface ModelCheckOptions {
  /** Entries per weight tensor. Default {@link COORDS_PER_WEIGHT}. */
  coordsPerWeight?: number;
  /** Only the weights whose names match (default: every weight tensor). */
  weights?: RegExp;
}

async function modelCheck(
  name: string,
  model: CausalLM,
  ids: number[][],
  temperature: number,
  seed: number,
  opts: ModelCheckOptions,
): Promise<GradCheckReport> {
  return withInts(ids, async (idsT) => {
    // One forward first: the model builds (and keeps) its RoPE tables on first use.
    tf.tidy(() => scoreSequences(model, idsT).logprobs);
    const count0 = tf.memory().numTensors;
    // The trainer's view: per-token log-probs and entropies, both differentiated (Σ r₁·logp + Σ r₂·H).
    const f = (): tf.Tensor => {
      const s = scoreSequences(model, idsT, { temperature, entropy: true });
      return tf.stack([s.logprobs, s.entropy!]);
    };
    const vars = model.specs
      .filter((s) => opts.weights?.test(s.name) ?? true)
      .map((s) => ({ name: s.name, variable: model.params.get(s.name)! }));
    assert.ok(vars.length > 0, `${name}: no weight matches ${opts.weights}`);
    const rep = await gradCheckVariables(name, f, vars, {
      maxCoords: opts.coordsPerWeight ?? COORDS_PER_WEIGHT,
      seed,
      h: MODEL_STEP,
      richardson: true,
    });
    assert.equal(tf.memory().numTensors, count0, 'the check leaked tensors');
    return rep;
  });
}

async function withModel<T>(spec: NewModelSpec, seed: number, fn: (m: CausalLM) => Promise<T>): Promise<T> {
  const model = tinyModel(spec, seed);
  try {
    return await fn(model);
  } finally {
    model.dispose();
  }
}

export interface ModelCase {
  name: string;
  run(opts?: ModelCheckOptions): Promise<GradCheckReport>;
}

export const MODEL_CASES: Record<'qwen2' | 'gpt2' | 'qwen3', ModelCase> = {
  qwen2: {
    name: 'qwen2, 1 layer, GQA (4 query heads on 2 kv heads), q/k/v biases, tied head, temperature 0.8',
    run: (opts = {}) =>
      withModel(
        {
          family: 'qwen2',
          layers: 1,
          hidden: 16,
          heads: 4,
          kvHeads: 2,
          intermediate: 24,
          vocabSize: 23,
          maxPositions: 32,
          eosTokenIds: [0],
          ropeTheta: 10000,
        },
        31,
        (model) => {
          assert.equal(model.config.kvHeads, 2);
          assert.ok(model.params.has('model.layers.0.self_attn.k_proj.bias'));
          const ids = [
            [1, 5, 9, 5, 22, 3, 7],
            [4, 4, 18, 0, 11, 2, 6],
          ];
          return modelCheck('qwen2-gqa', model, ids, 0.8, 3, opts);
        },
      ),
  },
  gpt2: {
    name: 'gpt2, 1 layer, 2 heads, learned positions, gelu_new, tied head, temperature 1',
    run: (opts = {}) =>
      withModel(
        {
          family: 'gpt2',
          layers: 1,
          hidden: 12,
          heads: 2,
          intermediate: 20,
          vocabSize: 19,
          maxPositions: 16,
          eosTokenIds: [0],
        },
        41,
        (model) => {
          const ids = [
            [3, 8, 1, 8, 14, 2],
            [0, 18, 5, 5, 9, 12],
          ];
          return modelCheck('gpt2', model, ids, 1, 4, opts);
        },
      ),
  },
  qwen3: {
    name: 'qwen3, 1 layer, GQA (4 on 1), q/k norms, untied head, temperature 1.2',
    run: (opts = {}) =>
      withModel(
        {
          family: 'qwen3',
          layers: 1,
          hidden: 16,
          heads: 4,
          kvHeads: 1,
          intermediate: 16,
          vocabSize: 17,
          maxPositions: 16,
          tieEmbeddings: false,
          eosTokenIds: [0],
          ropeTheta: 1e6,
        },
        51,
        (model) => {
          assert.ok(model.params.has('lm_head.weight'));
          assert.ok(model.params.has('model.layers.0.self_attn.q_norm.weight'));
          return modelCheck('qwen3-untied', model, [[2, 9, 16, 9, 1, 0]], 1.2, 5, opts);
        },
      ),
  },
};

// ---- negative controls: gradients with one term dropped, which the checks must reject ----

/** Identity whose gradient is zero: the term through it is dropped from the tape (tfjs has no stopGradient). */
const stopGradient = tf.customGrad(((x: tf.Tensor) => ({
  value: tf.clone(x),
  gradFunc: (dy: tf.Tensor) => tf.zerosLike(dy),
})) as unknown as Parameters<typeof tf.customGrad>[0]) as (x: tf.Tensor) => tf.Tensor;

/** silu whose gradient keeps σ(x) and drops the x·σ′(x) term. */
const wrongSilu = tf.customGrad(((x: tf.Tensor, save: tf.GradSaveFunc) => {
  save([x]);
  return { value: silu(x), gradFunc: (dy: tf.Tensor, [sx]: tf.Tensor[]) => tf.mul(dy, tf.sigmoid(sx)) };
}) as unknown as Parameters<typeof tf.customGrad>[0]) as (x: tf.Tensor) => tf.Tensor;

/** Checks whose report must not be ok. */
export const NEGATIVE_CASES: Record<'layerNorm' | 'silu' | 'logProbs', GradCase> = {
  layerNorm: {
    name: 'layerNorm with mean and variance treated as constants',
    run: () =>
      withInputs(
        14,
        (rng) => [randn([3, 4, 8], rng, 1, 0.3), randn([8], rng, 0.2, 1)],
        ([x, w]) => {
          const wrong = (xx: tf.Tensor, ww: tf.Tensor): tf.Tensor => {
            const mean = stopGradient(tf.mean(xx, -1, true));
            const centered = tf.sub(xx, mean);
            const variance = stopGradient(tf.mean(tf.square(centered), -1, true));
            return tf.mul(tf.mul(centered, tf.rsqrt(tf.add(variance, 1e-5))), ww);
          };
          return gradCheck('layerNorm-wrong', wrong, [x, w], { wrt: [0], maxCoords: 40 });
        },
      ),
  },
  silu: {
    name: 'silu whose gradient drops the x·σ′(x) term',
    run: () =>
      withInputs(
        17,
        (rng) => [randn([4, 16], rng, 1.6)],
        ([x]) => gradCheck('silu-wrong', (xx) => wrongSilu(xx), [x], { maxCoords: 64 }),
      ),
  },
  logProbs: {
    name: 'log-probs with the logsumexp treated as a constant',
    run: () =>
      withInts(LOGPROB_TARGETS, (targets) =>
        withInputs(
          19,
          (rng) => [randn([2, 5, 11], rng, 1.5)],
          ([z]) => {
            const wrong = (zz: tf.Tensor): tf.Tensor =>
              tf.sub(tf.sum(tf.mul(zz, tf.oneHot(targets, 11)), -1), stopGradient(tf.logSumExp(zz, -1)));
            return gradCheck('logprobs-wrong', wrong, [z], { maxCoords: 48 });
          },
        ),
      ),
  },
};
