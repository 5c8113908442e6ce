/**
 * The registries: Trinity's names at main (from the registries' default_mapping in trinity/algorithm), agreement
 * with the config model (runtime/config/model/algorithms.ts), unknown-name errors, and how `<fn>_args` are
 * resolved (null → default_args(); written args replace them; constructor defaults fill the gaps).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  ALGORITHM_TYPES,
  EXPLORER_SIDE_ADVANTAGES,
  FN_SPECS,
  effectiveAlgorithmDefaults,
} from '../../../../runtime/config/model/algorithms';
import { inRange } from '../../../../runtime/config/releases';
import { resolveFnArgs } from '../../../../runtime/rft/algorithm/args';
import {
  createAdvantageFn,
  createEntropyLossFn,
  createKlFn,
  createPolicyLossFn,
  isExplorerSideAdvantage,
  knownNames,
  UnknownAlgorithmFnError,
} from '../../../../runtime/rft/algorithm/registry';

// trinity/algorithm/*/__init__.py at 10796ed, in registration order: what this runtime implements
const TRINITY_10796ED = {
  advantage_fn: [
    'ppo',
    'grpo',
    'grpo_verl',
    'step_wise_grpo',
    'reinforceplusplus',
    'reinforce',
    'remax',
    'rloo',
    'opmd',
    'opmd_verl',
    'asymre',
    'asymre_verl',
    'rec',
    'on_policy_distill',
    'jsd',
    'clipb',
    'clipv',
  ],
  policy_loss_fn: [
    'ppo',
    'opmd',
    'dpo',
    'sft',
    'mix',
    'gspo',
    'topr',
    'cispo',
    'sft_is',
    'sft_phi',
    'mix_chord',
    'sppo',
    'rec',
    'sapo',
    'importance_sampling',
  ],
  kl_fn: ['none', 'k1', 'k2', 'k3', 'low_var_kl', 'abs', 'corrected_k3'],
  entropy_loss_fn: ['default', 'mix', 'none'],
} as const;

// Registered after 10796ed (the modelled main: gigpo at 139d1c4, m2po at 1d52c85) and implemented here too.
const NEWER_HERE: Record<keyof typeof TRINITY_10796ED, readonly string[]> = {
  advantage_fn: ['gigpo'],
  policy_loss_fn: [],
  kl_fn: [],
  entropy_loss_fn: [],
};

// Registered after 10796ed; they run on Trinity-RFT only.
const NEWER_ON_MAIN: Record<keyof typeof TRINITY_10796ED, readonly string[]> = {
  advantage_fn: [],
  policy_loss_fn: ['m2po'],
  kl_fn: [],
  entropy_loss_fn: [],
};

describe('names', () => {
  for (const [kind, names] of Object.entries(TRINITY_10796ED)) {
    test(`${kind}: the runtime implements every name registered at 10796ed and the newer ones it runs, nothing else`, () => {
      const k = kind as keyof typeof TRINITY_10796ED;
      assert.deepEqual(knownNames(k), [...names, ...NEWER_HERE[k]]);
    });
    test(`${kind}: the config model's function specs at main are those names and the newer ones`, () => {
      const specs = FN_SPECS.filter((f) => f.registry === kind && inRange('main', f.since, f.until)).map((f) => f.name);
      const newer = NEWER_ON_MAIN[kind as keyof typeof TRINITY_10796ED];
      assert.deepEqual(
        [...specs].sort(),
        [...names, ...NEWER_HERE[kind as keyof typeof TRINITY_10796ED], ...newer].sort(),
      );
      for (const n of newer) {
        assert.ok(!knownNames(kind as keyof typeof TRINITY_10796ED).includes(n), `${n} is not implemented locally`);
        assert.ok(!FN_SPECS.some((f) => f.name === n && f.registry === kind && inRange('v0.5.2', f.since, f.until)));
      }
    });
  }

  test('kl_loss_fn and kl_penalty_fn read the kl_fn registry', () => {
    assert.deepEqual(knownNames('kl_loss_fn'), [...TRINITY_10796ED.kl_fn]);
    assert.deepEqual(knownNames('kl_penalty_fn'), [...TRINITY_10796ED.kl_fn]);
  });

  test('every algorithm type’s default functions at main exist here (or are newer than 10796ed and modelled)', () => {
    const here = (kind: 'advantage_fn' | 'policy_loss_fn', name: string): boolean =>
      knownNames(kind).includes(name) ||
      (NEWER_ON_MAIN[kind].includes(name) && FN_SPECS.some((f) => f.registry === kind && f.name === name));
    for (const a of ALGORITHM_TYPES.filter((t) => inRange('main', t.since, t.until))) {
      const d = effectiveAlgorithmDefaults(a.name, 'main')!;
      assert.ok(here('advantage_fn', d.advantage_fn), `${a.name}: ${d.advantage_fn}`);
      assert.ok(here('policy_loss_fn', d.policy_loss_fn), `${a.name}: ${d.policy_loss_fn}`);
      assert.ok(knownNames('kl_fn').includes(d.kl_loss_fn), `${a.name}: ${d.kl_loss_fn}`);
      assert.ok(knownNames('kl_fn').includes(d.kl_penalty_fn), `${a.name}: ${d.kl_penalty_fn}`);
      assert.ok(knownNames('entropy_loss_fn').includes(d.entropy_loss_fn), `${a.name}: ${d.entropy_loss_fn}`);
    }
  });

  test('explorer-side advantages agree with the config model', () => {
    for (const name of knownNames('advantage_fn')) {
      const fn = createAdvantageFn(name);
      assert.equal(!fn.computeInTrainer, EXPLORER_SIDE_ADVANTAGES.has(name), name);
      assert.equal(isExplorerSideAdvantage(name), EXPLORER_SIDE_ADVANTAGES.has(name), name);
    }
  });
});

describe('unknown names', () => {
  test('policy_loss_fn lists the known names', () => {
    assert.throws(
      () => createPolicyLossFn('grpo'),
      (e: unknown) =>
        e instanceof UnknownAlgorithmFnError &&
        e.key === 'policy_loss_fn' &&
        e.message ===
          `Unknown policy_loss_fn 'grpo'. Known policy_loss_fn names: ${TRINITY_10796ED.policy_loss_fn.join(', ')}`,
    );
  });
  test('advantage_fn, kl_loss_fn, entropy_loss_fn', () => {
    assert.throws(
      () => createAdvantageFn('reinforce_plus_plus'),
      /Unknown advantage_fn 'reinforce_plus_plus'\. Known advantage_fn names: ppo, grpo, .*reinforceplusplus/,
    );
    assert.throws(
      () => createKlFn('kl', null, 'kl_loss_fn'),
      /Unknown kl_loss_fn 'kl'\. Known kl_loss_fn names: none, k1, k2, k3, low_var_kl, abs, corrected_k3/,
    );
    assert.throws(
      () => createEntropyLossFn('max'),
      /Unknown entropy_loss_fn 'max'\. Known entropy_loss_fn names: default, mix, none/,
    );
  });
});

describe('argument resolution', () => {
  test('null → default_args(), completed with constructor defaults', () => {
    const f = createPolicyLossFn('ppo');
    assert.deepEqual(f.args, {
      clip_range: 0.2,
      clip_ratio_c: 3.0,
      loss_agg_mode: 'token-mean',
      enable_sequence_masking: false,
      delta_sequence_masking: 0.1,
      fallback_to_policy_gradient: false,
      clip_range_low: null,
      clip_range_high: null,
    });
    assert.deepEqual(f.selectKeys, ['old_logprob', 'action_mask', 'advantages']);
  });

  test('written args replace default_args() wholesale (ppo without clip_range: the high bound is missing)', () => {
    assert.throws(() => createPolicyLossFn('ppo', { clip_range_low: 0.1 }), /clip_range_high must be specified/);
  });

  test('rec: default_args() has ε′ 0.6/2, the constructor 0.4/0.4', () => {
    assert.equal(createPolicyLossFn('rec').args.epsilon_low_prime, 0.6);
    assert.equal(createPolicyLossFn('rec').args.epsilon_high_prime, 2);
    assert.equal(createPolicyLossFn('rec', { clip_mode: 'ring' }).args.epsilon_low_prime, 0.4);
    assert.equal(createPolicyLossFn('rec', { clip_mode: 'ring' }).args.epsilon_high_prime, 0.4);
  });

  test('clipv: default_args() mu 8.5, the constructor 2.0', () => {
    assert.equal(createAdvantageFn('clipv').args.mu, 8.5);
    assert.equal(createAdvantageFn('clipv', {}).args.mu, 2.0);
  });

  test('entropy_coef has no constructor default', () => {
    assert.equal(createEntropyLossFn('default').args.entropy_coef, 0.0);
    assert.throws(() => createEntropyLossFn('default', {}), /missing required argument 'entropy_coef'/);
  });

  test('unknown keywords fail unless the constructor takes **kwargs', () => {
    assert.throws(
      () => createPolicyLossFn('sft', { loss_agg_mode: 'token-mean', use_token_level_loss: true }),
      /unexpected keyword argument 'use_token_level_loss'/,
    );
    assert.throws(() => createAdvantageFn('opmd', { tau: 1, beta: 2 }), /unexpected keyword argument 'beta'/);
    assert.equal(createAdvantageFn('step_wise_grpo', { some_extra: 1 }).args.some_extra, 1);
  });

  test('kl: default_args() adaptive false, kl_coef 0.001', () => {
    const kl = createKlFn('low_var_kl');
    assert.deepEqual(kl.args, { adaptive: false, kl_coef: 0.001, target_kl: null, horizon: null });
    assert.deepEqual(resolveFnArgs('kl_fn', 'k2', { kl_coef: 0.01 }), {
      kl_coef: 0.01,
      adaptive: false,
      target_kl: null,
      horizon: null,
    });
  });

  test('gspo keeps its own default loss_agg_mode (the config check may overwrite it)', () => {
    assert.equal(createPolicyLossFn('gspo').args.loss_agg_mode, 'seq-mean-token-mean');
  });
});
