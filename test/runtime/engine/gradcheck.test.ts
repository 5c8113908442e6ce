/**
 * Gradient checks of every layer and loss building block of the engine (runtime/engine/ops.ts, the embedding lookup,
 * the softmax attention of whole tiny models through `scoreSequences`) on the backend `initBackend({ prefer: 'auto' })`
 * picks (wasm on a machine without tfjs-node or a GPU), against central finite differences in float32.
 *
 * Tolerances (float32, see test/helpers/gradcheck.ts for the error budget): each sampled coordinate must satisfy
 * |analytic − numeric| ≤ atol + rtol·|numeric| with atol = 2e-3, rtol = 2e-2, step h = 1e-2 on O(1) inputs and weights.
 * Whole models use Richardson-extrapolated central differences with h = 2e-2 (see MODEL_STEP) and the same atol/rtol.
 * Observed errors are far smaller (the worst err/bound ratio is logged per check: ≤ 0.02 for single ops, ≤ 0.17 for
 * models). Each check also requires a sampled gradient of at least 20·atol = 4e-2, so it cannot pass on gradients
 * that are all ≈ 0; the "negative controls" at the end show that gradients with one term dropped fail these checks.
 * Also verified once by hand (registering deliberately wrong gradients for Softmax, Tanh, Sigmoid, Erf, Rsqrt,
 * BatchMatMul (b scaled by 0.9), Concat, Sum, and an UnsortedSegmentSum that overwrites instead of adding): each
 * made the checks of the ops and models that use it fail.
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { initBackend, type BackendInfo } from '../../../runtime/engine/backend';
import { scoreSequences } from '../../../runtime/engine/logprobs';
import { initModel } from '../../../runtime/engine/model/checkpoint';
import { newModelConfigJson, parseModelConfig, type NewModelSpec } from '../../../runtime/engine/model/config';
import { ropeTables } from '../../../runtime/engine/model/rope';
import type { CausalLM } from '../../../runtime/engine/model/transformer';
import {
  applyRope,
  geluErf,
  geluTanh,
  layerNorm,
  linear,
  mm,
  mmT,
  rmsNorm,
  silu,
  tokenEntropy,
  tokenLogProbs,
} from '../../../runtime/engine/ops';
import { Rng } from '../../../runtime/engine/random';
import {
  assertGradCheck,
  describeReport,
  gradCheck,
  gradCheckVariables,
  randn,
  type GradCheckReport,
} from '../../helpers/gradcheck';
import { assertNativeMatmulOnWasm } from '../../helpers/native-matmul';

let info: BackendInfo;

before(async () => {
  info = await initBackend({ prefer: 'auto' });
  // On wasm, the matmuls (and so every matmul gradient checked here) run on the native OpenBLAS kernel.
  assertNativeMatmulOnWasm(info);
});

function check(rep: GradCheckReport): void {
  console.log(`  [${tf.getBackend()}] ${describeReport(rep)}`);
  assertGradCheck(rep);
}

/** Runs `fn` with fresh seeded inputs and disposes them (and anything else) afterwards. */
function withInputs(seed: number, make: (rng: Rng) => tf.Tensor[], fn: (xs: tf.Tensor[]) => void): void {
  const count0 = tf.memory().numTensors;
  const xs = make(new Rng(seed));
  try {
    fn(xs);
  } finally {
    xs.forEach((x) => x.dispose());
  }
  assert.equal(tf.memory().numTensors, count0, 'the check leaked tensors');
}

describe(`gradient checks on the active backend (initBackend auto)`, () => {
  test('the active backend is the one initBackend chose', () => {
    assert.equal(tf.getBackend(), info.tfBackend);
  });

  test('mm: a[m,k] @ b[k,n], both inputs', () => {
    withInputs(
      11,
      (rng) => [randn([5, 7], rng), randn([7, 6], rng)],
      ([a, b]) =>
        check(
          gradCheck('mm', (x, y) => mm(x as tf.Tensor2D, y as tf.Tensor2D), [a, b], {
            inputNames: ['a', 'b'],
            maxCoords: 48,
          }),
        ),
    );
  });

  test('mmT: a[m,k] @ b[n,k]ᵀ, both inputs', () => {
    withInputs(
      12,
      (rng) => [randn([5, 7], rng), randn([6, 7], rng)],
      ([a, b]) =>
        check(
          gradCheck('mmT', (x, y) => mmT(x as tf.Tensor2D, y as tf.Tensor2D), [a, b], {
            inputNames: ['a', 'b'],
            maxCoords: 48,
          }),
        ),
    );
  });

  test('linear with bias over a rank-3 input: x, w, b', () => {
    withInputs(
      13,
      (rng) => [randn([2, 3, 7], rng), randn([7, 5], rng, 0.5), randn([5], rng)],
      ([x, w, b]) =>
        check(
          gradCheck('linear', (xx, ww, bb) => linear(xx, ww as tf.Tensor2D, bb as tf.Tensor1D), [x, w, b], {
            inputNames: ['x', 'w', 'b'],
            maxCoords: 32,
          }),
        ),
    );
  });

  test('layerNorm: x, w, b (eps 1e-5)', () => {
    withInputs(
      14,
      (rng) => [randn([3, 4, 8], rng, 1, 0.3), randn([8], rng, 0.2, 1), randn([8], rng, 0.2)],
      ([x, w, b]) =>
        check(
          gradCheck('layerNorm', (xx, ww, bb) => layerNorm(xx, ww, bb, 1e-5), [x, w, b], {
            inputNames: ['x', 'w', 'b'],
            maxCoords: 40,
          }),
        ),
    );
  });

  test('layerNorm without bias: x, w', () => {
    withInputs(
      15,
      (rng) => [randn([2, 6], rng), randn([6], rng, 0.2, 1)],
      ([x, w]) =>
        check(
          gradCheck('layerNorm(no bias)', (xx, ww) => layerNorm(xx, ww, undefined, 1e-5), [x, w], {
            inputNames: ['x', 'w'],
          }),
        ),
    );
  });

  test('rmsNorm: x, w (eps 1e-6)', () => {
    withInputs(
      16,
      (rng) => [randn([3, 4, 8], rng, 1, 0.3), randn([8], rng, 0.2, 1)],
      ([x, w]) =>
        check(
          gradCheck('rmsNorm', (xx, ww) => rmsNorm(xx, ww, 1e-6), [x, w], { inputNames: ['x', 'w'], maxCoords: 40 }),
        ),
    );
  });

  for (const [name, fn] of [
    ['geluTanh', geluTanh],
    ['geluErf', geluErf],
    ['silu', silu],
  ] as const) {
    test(`${name}: elementwise over [-4, 4]`, () => {
      withInputs(
        17,
        (rng) => [randn([4, 16], rng, 1.6)],
        ([x]) => check(gradCheck(name, (xx) => fn(xx), [x], { inputNames: ['x'], maxCoords: 64 })),
      );
    });
  }

  test('applyRope: x [B, H, T, d] with the tables of a real config (θ = 1e4, positions 0..T-1 offset)', () => {
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
      withInputs(
        18,
        (rng) => [randn([2, 3, 5, 8], rng)],
        ([x]) => {
          const [B, T, half] = [2, 5, 4];
          const pos = tf.tensor2d(
            [
              [0, 1, 2, 3, 4],
              [3, 4, 5, 6, 7],
            ],
            [B, T],
            'int32',
          );
          const cos = tf.tidy(() => tf.reshape(tf.gather(tables.cos, pos), [B, 1, T, half]));
          const sin = tf.tidy(() => tf.reshape(tf.gather(tables.sin, pos), [B, 1, T, half]));
          try {
            check(gradCheck('applyRope', (xx) => applyRope(xx, cos, sin), [x], { inputNames: ['x'], maxCoords: 48 }));
          } finally {
            tf.dispose([pos, cos, sin]);
          }
        },
      );
    } finally {
      tf.dispose([tables.cos, tables.sin]);
    }
  });

  for (const temperature of [1, 0.7]) {
    test(`tokenLogProbs: logits [B, T, V], temperature ${temperature}`, () => {
      const targets = tf.tensor2d(
        [
          [3, 0, 10, 7, 7],
          [1, 9, 2, 10, 4],
        ],
        [2, 5],
        'int32',
      );
      try {
        withInputs(
          19,
          (rng) => [randn([2, 5, 11], rng, 1.5)],
          ([z]) =>
            check(
              gradCheck(`tokenLogProbs(T=${temperature})`, (zz) => tokenLogProbs(zz, targets, temperature), [z], {
                inputNames: ['logits'],
                maxCoords: 48,
              }),
            ),
        );
      } finally {
        targets.dispose();
      }
    });
  }

  for (const temperature of [1, 1.3]) {
    test(`tokenEntropy: logits [B, T, V], temperature ${temperature}`, () => {
      withInputs(
        20,
        (rng) => [randn([2, 5, 11], rng, 1.5)],
        ([z]) =>
          check(
            gradCheck(`tokenEntropy(T=${temperature})`, (zz) => tokenEntropy(zz, temperature), [z], {
              inputNames: ['logits'],
              maxCoords: 48,
            }),
          ),
      );
    });
  }

  test('embedding lookup: tf.gather(table, ids [B, T]) with repeated ids (gradient: UnsortedSegmentSum)', () => {
    assert.ok(
      tf.getKernel('UnsortedSegmentSum', tf.getBackend()),
      `no UnsortedSegmentSum kernel on ${tf.getBackend()}`,
    );
    const ids = tf.tensor2d(
      [
        [2, 5, 2, 0],
        [8, 2, 5, 5],
      ],
      [2, 4],
      'int32',
    );
    try {
      withInputs(
        21,
        (rng) => [randn([9, 6], rng)],
        // Every row of the table is checked, including the ones never looked up (gradient exactly 0).
        ([table]) =>
          check(gradCheck('gather', (t) => tf.gather(t, ids), [table], { inputNames: ['table'], maxCoords: 54 })),
      );
    } finally {
      ids.dispose();
    }
  });
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
const COORDS_PER_WEIGHT = 12;
/**
 * A whole model is a deep composition: with the plain central difference at h = 1e-2 the truncation error reached
 * 2.5e-4 on a 4e-3 gradient (gpt2 ln_1.weight), and at h = 1e-3 float32 rounding of the forward pass gives median
 * errors of 1e-3. Richardson extrapolation of the central differences at h and 2h with h = 2e-2 keeps both below
 * 5e-4 (median ≈ 5e-5), so the same atol/rtol as the single ops apply.
 */
const MODEL_STEP = 2e-2;

function modelCheck(name: string, model: CausalLM, ids: number[][], temperature: number, seed: number): void {
  const idsT = tf.tensor2d(ids, [ids.length, ids[0].length], 'int32');
  // One forward first: the model builds (and keeps) its RoPE tables on first use.
  tf.tidy(() => scoreSequences(model, idsT).logprobs);
  const count0 = tf.memory().numTensors;
  try {
    // The trainer's view: per-token log-probs and entropies, both differentiated (Σ r₁·logp + Σ r₂·H).
    const f = (): tf.Tensor => {
      const s = scoreSequences(model, idsT, { temperature, entropy: true });
      return tf.stack([s.logprobs, s.entropy!]);
    };
    const vars = model.specs.map((s) => ({ name: s.name, variable: model.params.get(s.name)! }));
    check(gradCheckVariables(name, f, vars, { maxCoords: COORDS_PER_WEIGHT, seed, h: MODEL_STEP, richardson: true }));
    assert.equal(tf.memory().numTensors, count0, 'the check leaked tensors');
  } finally {
    idsT.dispose();
  }
}

describe('gradient checks of whole tiny models through scoreSequences (every weight tensor, up to 12 entries each)', () => {
  test('qwen2, 1 layer, GQA (4 query heads on 2 kv heads), q/k/v biases, tied head, temperature 0.8', () => {
    const model = tinyModel(
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
    );
    try {
      assert.equal(model.config.kvHeads, 2);
      assert.ok(model.params.has('model.layers.0.self_attn.k_proj.bias'));
      modelCheck(
        'qwen2-gqa',
        model,
        [
          [1, 5, 9, 5, 22, 3, 7],
          [4, 4, 18, 0, 11, 2, 6],
        ],
        0.8,
        3,
      );
    } finally {
      model.dispose();
    }
  });

  test('gpt2, 1 layer, 2 heads, learned positions, gelu_new, tied head, temperature 1', () => {
    const model = tinyModel(
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
    );
    try {
      modelCheck(
        'gpt2',
        model,
        [
          [3, 8, 1, 8, 14, 2],
          [0, 18, 5, 5, 9, 12],
        ],
        1,
        4,
      );
    } finally {
      model.dispose();
    }
  });

  test('qwen3, 1 layer, GQA (4 on 1), q/k norms, untied head, temperature 1.2', () => {
    const model = tinyModel(
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
    );
    try {
      assert.ok(model.params.has('lm_head.weight'));
      assert.ok(model.params.has('model.layers.0.self_attn.q_norm.weight'));
      modelCheck('qwen3-untied', model, [[2, 9, 16, 9, 1, 0]], 1.2, 5);
    } finally {
      model.dispose();
    }
  });
});

// ---- negative controls: the same checks reject gradients with a term dropped ----

/** f with the given inputs cut off from the tape (their values re-created from host data): their gradient term is dropped. */
function detached(t: tf.Tensor): tf.Tensor {
  return tf.tensor(t.dataSync(), t.shape, t.dtype);
}

describe('negative controls: a gradient with one term dropped fails the check', () => {
  test('layerNorm with mean and variance treated as constants', () => {
    withInputs(
      14,
      (rng) => [randn([3, 4, 8], rng, 1, 0.3), randn([8], rng, 0.2, 1)],
      ([x, w]) => {
        const wrong = (xx: tf.Tensor, ww: tf.Tensor): tf.Tensor => {
          const mean = detached(tf.mean(xx, -1, true));
          const centered = tf.sub(xx, mean);
          const variance = detached(tf.mean(tf.square(centered), -1, true));
          return tf.mul(tf.mul(centered, tf.rsqrt(tf.add(variance, 1e-5))), ww);
        };
        const rep = gradCheck('layerNorm-wrong', wrong, [x, w], { wrt: [0], maxCoords: 40 });
        assert.equal(rep.ok, false, describeReport(rep));
      },
    );
  });

  test('silu whose gradient drops the x·σ′(x) term', () => {
    const wrongSilu = tf.customGrad(((x: tf.Tensor, save: tf.GradSaveFunc) => {
      save([x]);
      return { value: silu(x), gradFunc: (dy: tf.Tensor, [sx]: tf.Tensor[]) => tf.mul(dy, tf.sigmoid(sx)) };
    }) as unknown as Parameters<typeof tf.customGrad>[0]) as (x: tf.Tensor) => tf.Tensor;
    withInputs(
      17,
      (rng) => [randn([4, 16], rng, 1.6)],
      ([x]) => {
        const rep = gradCheck('silu-wrong', (xx) => wrongSilu(xx), [x], { maxCoords: 64 });
        assert.equal(rep.ok, false, describeReport(rep));
      },
    );
  });

  test('log-probs with the logsumexp treated as a constant', () => {
    const targets = tf.tensor2d(
      [
        [3, 0, 10, 7, 7],
        [1, 9, 2, 10, 4],
      ],
      [2, 5],
      'int32',
    );
    try {
      withInputs(
        19,
        (rng) => [randn([2, 5, 11], rng, 1.5)],
        ([z]) => {
          const wrong = (zz: tf.Tensor): tf.Tensor =>
            tf.sub(tf.sum(tf.mul(zz, tf.oneHot(targets, 11)), -1), detached(tf.logSumExp(zz, -1)));
          const rep = gradCheck('logprobs-wrong', wrong, [z], { maxCoords: 48 });
          assert.equal(rep.ok, false, describeReport(rep));
        },
      );
    } finally {
      targets.dispose();
    }
  });

  test('a check whose gradients are all ≈ 0 is reported as vacuous, not passed', () => {
    withInputs(
      22,
      (rng) => [randn([6], rng)],
      ([x]) => {
        const rep = gradCheck('tiny', (xx) => tf.mul(xx, 1e-4), [x]);
        assert.equal(rep.ok, false);
        assert.match(rep.problems.join('\n'), /vacuous/);
      },
    );
  });
});
