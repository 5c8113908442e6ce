/**
 * The modelled `main` past 10796ed (see RELEASE_COMMITS): what Trinity-RFT registered since is valid on main and
 * reported on v0.5.2, the new algorithm types fill in their own defaults, thinking_budget_workflow's needs are
 * checked, an installed 0.6.x maps to main, and the local runtime refuses the new entries it does not implement.
 * Each case edits a real corpus config (examples/grpo_gsm8k/gsm8k.yaml, which checks clean on both releases).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { lineColumn } from '../../../runtime/config/load/load-config';
import { parseRelease, RELEASE_COMMITS, RELEASES, type Release } from '../../../runtime/config/releases';
import { checkConfig } from '../../../runtime/config/check-config';
import { REGISTRIES } from '../../../runtime/config/model/registries';
import { localRefusals } from '../../../runtime/rft/refusals/refusals';
import { corpusDir, TRINITY_ENV } from '../../helpers/corpus';

const GSM8K = 'examples/grpo_gsm8k/gsm8k.yaml';

function gsm8k(release: Release): string {
  return readFileSync(join(corpusDir(), 'trinity-configs', release, GSM8K), 'utf8');
}

function edit(text: string, find: string, replace: string): string {
  assert.ok(text.includes(find), `the corpus file still contains ${JSON.stringify(find)}`);
  return text.replace(find, replace);
}

async function check(text: string, release: Release) {
  const result = await checkConfig(text, { release, env: TRINITY_ENV, datasets: false });
  const diags = result.diagnostics.map((d) => ({
    code: d.code,
    severity: d.severity,
    line: lineColumn(result.loaded.source, d.range[0]).line,
    message: d.message,
  }));
  return { result, diags, errors: diags.filter((d) => d.severity === 'error') };
}

const lineOf = (text: string, needle: string): number => text.slice(0, text.indexOf(needle)).split('\n').length;

describe('names registered after 10796ed: valid on main, reported on v0.5.2', () => {
  const cases: { what: string; name: string; find: string; replace: string; code: string }[] = [
    {
      what: 'workflow intercode_sql_workflow',
      name: 'intercode_sql_workflow',
      find: "default_workflow_type: 'math_workflow'",
      replace: 'default_workflow_type: intercode_sql_workflow',
      code: 'TRN307',
    },
    {
      what: 'reward function openjudge_reward',
      name: 'openjudge_reward',
      find: "default_workflow_type: 'math_workflow'",
      replace: "default_workflow_type: 'math_workflow'\n    default_reward_fn_type: openjudge_reward",
      code: 'TRN307',
    },
    {
      what: 'reward function rlcr_reward',
      name: 'rlcr_reward',
      find: "default_workflow_type: 'math_workflow'",
      replace: "default_workflow_type: 'math_workflow'\n    default_reward_fn_type: rlcr_reward",
      code: 'TRN307',
    },
    {
      what: 'algorithm type dapo',
      name: 'dapo',
      find: 'algorithm_type: grpo',
      replace: 'algorithm_type: dapo',
      code: 'TRN201',
    },
    {
      what: 'algorithm type cpt',
      name: 'cpt',
      find: 'algorithm_type: grpo',
      replace: 'algorithm_type: cpt',
      code: 'TRN201',
    },
    {
      what: 'policy loss m2po',
      name: 'm2po',
      find: '  repeat_times: 8',
      replace: '  repeat_times: 8\n  policy_loss_fn: m2po',
      code: 'TRN202',
    },
    {
      what: 'experience operator dapo_dynamic_sampling',
      name: 'dapo_dynamic_sampling',
      find: 'explorer:\n',
      replace:
        'data_processor:\n  experience_pipeline:\n    operators:\n      - name: dapo_dynamic_sampling\n        args: {metric_key: accuracy}\nexplorer:\n',
      code: 'TRN300',
    },
  ];
  for (const c of cases) {
    test(c.what, async () => {
      const onMain = edit(gsm8k('main'), c.find, c.replace);
      const main = await check(onMain, 'main');
      assert.deepEqual(main.errors, [], 'no errors on main');
      assert.ok(!main.diags.some((d) => d.code === c.code), `no ${c.code} on main`);

      const onOld = edit(gsm8k('v0.5.2'), c.find, c.replace);
      const old = await check(onOld, 'v0.5.2');
      const hit = old.diags.find((d) => d.code === c.code && d.message.includes(c.name));
      assert.ok(hit, `${c.code} on v0.5.2: ${JSON.stringify(old.diags.map((d) => [d.code, d.message]))}`);
      assert.equal(hit.line, lineOf(onOld, `: ${c.name}`));
    });
  }

  test('harbor_workflow is not a registered name anywhere (HarborWorkflow is a base class, used by dotted path)', async () => {
    const text = edit(
      gsm8k('main'),
      "default_workflow_type: 'math_workflow'",
      'default_workflow_type: harbor_workflow',
    );
    const { errors } = await check(text, 'main');
    assert.ok(errors.some((e) => e.code === 'TRN307' && e.line === 40));
    const dotted = edit(
      gsm8k('main'),
      "default_workflow_type: 'math_workflow'",
      'default_workflow_type: trinity.common.workflows.harbor_workflow.HarborWorkflow',
    );
    assert.deepEqual((await check(dotted, 'main')).errors, []);
  });

  test('every entry newer than 10796ed names the commit it was read at', () => {
    for (const reg of Object.values(REGISTRIES)) {
      for (const e of reg.entries.filter((x) => x.since === 'main')) {
        assert.match(e.source ?? '', /^[0-9a-f]{7} trinity\//, `${reg.id} ${e.name}`);
      }
    }
  });
});

describe('the new algorithm types', () => {
  test('dapo fills in GRPO advantages, the PPO loss and no KL loss', async () => {
    const text = edit(gsm8k('main'), 'algorithm_type: grpo', 'algorithm_type: dapo');
    const { result, errors } = await check(text, 'main');
    assert.deepEqual(errors, []);
    const algo = result.runs[0].resolved.algorithm as Record<string, unknown>;
    assert.equal(algo.advantage_fn, 'grpo');
    assert.equal(algo.policy_loss_fn, 'ppo');
    assert.equal(algo.kl_loss_fn, 'none');
    assert.equal(algo.entropy_loss_fn, 'default');
  });

  test('gigpo computes advantages on the explorer side (no TRN310) and fills its own function args', async () => {
    const text = edit(gsm8k('main'), 'algorithm_type: grpo', 'algorithm_type: gigpo');
    const { result, diags } = await check(text, 'main');
    assert.ok(!diags.some((d) => d.code === 'TRN310' || d.severity === 'error'), JSON.stringify(diags));
    const algo = result.runs[0].resolved.algorithm as Record<string, any>;
    assert.equal(algo.advantage_fn, 'gigpo');
    assert.equal(algo.advantage_fn_args.omega, 1.0);
    assert.equal(algo.advantage_fn_args.fnorm, 'none');
    assert.equal(algo.policy_loss_fn_args.clip_range_high, 0.2);
  });

  test('m2po_args: an unknown key is an error at its line (the constructor takes no **kwargs)', async () => {
    const text = edit(
      gsm8k('main'),
      '  repeat_times: 8',
      '  repeat_times: 8\n  policy_loss_fn: m2po\n  policy_loss_fn_args:\n    m2_threshold: 0.04\n    clip_range: 0.2',
    );
    const { errors } = await check(text, 'main');
    assert.ok(
      errors.some(
        (e) => e.code === 'TRN302' && e.line === lineOf(text, 'clip_range: 0.2') && /clip_range/.test(e.message),
      ),
      JSON.stringify(errors),
    );
  });
});

describe('thinking_budget_workflow (TRN313)', () => {
  const use = (extra = '') =>
    edit(
      gsm8k('main'),
      "default_workflow_type: 'math_workflow'",
      `default_workflow_type: thinking_budget_workflow${extra}`,
    );

  test('without enable_history every task would fail: an error at the workflow name', async () => {
    const text = use();
    const { errors } = await check(text, 'main');
    const hit = errors.find((e) => e.code === 'TRN313');
    assert.ok(hit, JSON.stringify(errors));
    assert.equal(hit.line, lineOf(text, 'thinking_budget_workflow'));
    assert.match(hit.message, /enable_history: true/);
  });

  test('with enable_history and a valid budget it checks clean; a negative budget errors at its line', async () => {
    const ok = edit(
      edit(use(), '    seed: 42', '    seed: 42\n    enable_history: true'),
      '      rollout_args:\n        temperature: 1.0',
      '      rollout_args:\n        temperature: 1.0\n      workflow_args:\n        thinking_token_budget: 256',
    );
    assert.deepEqual((await check(ok, 'main')).errors, []);
    const bad = ok.replace('thinking_token_budget: 256', 'thinking_token_budget: -1');
    const { errors } = await check(bad, 'main');
    assert.deepEqual(
      errors.map((e) => [e.code, e.line]),
      [['TRN313', lineOf(bad, 'thinking_token_budget: -1')]],
    );
  });

  test('a local run refuses it (runs on Trinity-RFT only)', async () => {
    const text = edit(use(), '    seed: 42', '    seed: 42\n    enable_history: true');
    const { result } = await check(text, 'main');
    const refusal = localRefusals(result).find((r) => r.name === 'thinking_budget_workflow');
    assert.ok(refusal);
    assert.equal(refusal.registry, 'workflow');
    assert.match(refusal.message, /Trinity-RFT only/);
  });
});

describe('releases', () => {
  test('an installed 0.6.x maps to main, which records the commit it was read at', () => {
    for (const v of ['0.6.0', '0.6.1', 'v0.6', '0.6.0.dev0']) assert.equal(parseRelease(v), 'main', v);
    assert.equal(RELEASES[RELEASES.length - 1], 'main');
    assert.equal(RELEASE_COMMITS.main, '0c34dfa');
  });

  test('the VS Code setting lists exactly the modelled releases, plus auto', () => {
    const pkg = JSON.parse(readFileSync(join(__dirname, '../../../package.json'), 'utf8'));
    const setting = pkg.contributes.configuration.properties['trinityWorkbench.trinityVersion'];
    assert.deepEqual(setting.enum, ['auto', ...RELEASES]);
  });
});
