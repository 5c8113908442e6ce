/**
 * Real Trinity configs that Trinity itself rejects (a real bug in an example), each with its line, code and
 * reason; plus what a file needs from its launcher (plugin names, script-exported env). Shared by the tests
 * that check the corpus (the validator directly, and through the language server).
 */
import type { PluginNames } from '../../runtime/config/environment/plugin-names';
import { RELEASES, type Release } from '../../runtime/config/releases';

export interface KnownReject {
  release: Release;
  file: string;
  line: number;
  code: string;
  reason: string;
}

export const TEMPLATE =
  'a benchmark template: benchmark/bench.py writes the dataset path in before launching, so as committed Trinity rejects it';
export const RAFT =
  "RAFT computes advantages on the explorer side but its defaults leave `advantage_fn: ppo`, a trainer-side function; the explorer's experience pipeline asserts on that in `prepare()` (trinity/buffer/pipelines/experience_pipeline.py `_set_algorithm_operators`)";
export const TEST_TEMPLATE =
  "the template of Trinity's own tests, which set the taskset's workflow before launching: as committed its taskset names none";
export const TOOLCALL =
  '`toolcall_workflow` was renamed `tool_call_workflow` in v0.4.0, and this example still uses the old name';

/** The empty dataset paths in the benchmark templates from v0.5.0 on; `shift` is the lines the templates grew by. */
export function templateRejects(release: Release, shift: number): KnownReject[] {
  const at = (file: string, line: number, code: string) => ({
    release,
    file: `benchmark/config/${file}`,
    line: line + shift,
    code,
    reason: TEMPLATE,
  });
  return [
    at('countdown-template.yaml', 26, 'TRN250'),
    at('alfworld-template.yaml', 32, 'TRN250'),
    at('alfworld-template.yaml', 43, 'TRN252'),
    at('frozenlake-template.yaml', 34, 'TRN250'),
    at('frozenlake-template.yaml', 44, 'TRN252'),
    at('guru_math-template.yaml', 32 - shift, 'TRN250'),
  ];
}

/** Real problems in Trinity's own files: Trinity fails these at launch (or on the first task), and so do we. */
export const KNOWN_REJECTS: KnownReject[] = [
  ...(['v0.3.0', 'v0.3.1'] as const).map((release) => ({
    release,
    file: 'benchmark/config/countdown-template.yaml',
    line: 22,
    code: 'TRN250',
    reason: TEMPLATE,
  })),
  { release: 'v0.3.2', file: 'benchmark/config/countdown-template.yaml', line: 26, code: 'TRN250', reason: TEMPLATE },
  ...templateRejects('v0.4.0', 0),
  ...templateRejects('v0.5.0', 0),
  ...templateRejects('v0.5.2', 1),
  ...templateRejects('main', 1),
  ...(['v0.4.0', 'v0.5.0', 'v0.5.2', 'main'] as const).flatMap((release) => [
    { release, file: 'examples/grpo_toolcall/toolace.yaml', line: 28, code: 'TRN307', reason: TOOLCALL },
    { release, file: 'examples/mix_chord/mix_chord_toolace.yaml', line: 48, code: 'TRN307', reason: TOOLCALL },
    {
      release,
      file: 'examples/bots/ref_eval_collect.yaml',
      line: 33,
      code: 'TRN307',
      reason:
        'the BOTS plugin stopped registering `bots_ref_eval_collect_math_boxed_workflow` in the v0.4.0 registry rework, and the example still names it',
    },
  ]),
  {
    release: 'v0.4.0',
    file: 'examples/tinker/tinker.yaml',
    line: 22,
    code: 'TRN010',
    reason: '`model.tinker.base_model` is not a TinkerConfig key in v0.4.0 (OmegaConf rejects it at load)',
  },
  ...RELEASES.flatMap((release) =>
    ['examples/RAFT_alfworld/RAFT_alfworld_7B.yaml', 'examples/RAFT_alfworld/RAFT_reflect_alfworld_7B.yaml'].map(
      (file) => ({ release, file, line: 6, code: 'TRN310', reason: RAFT }),
    ),
  ),
  ...(
    [
      ['v0.3.0', 25],
      ['v0.3.1', 25],
      ['v0.3.2', 29],
      ['v0.4.0', 29],
      ['v0.5.0', 30],
      ['v0.5.2', 30],
      ['main', 30],
    ] as const
  ).map(([release, line]) => ({
    release,
    file: 'tests/template/config.yaml',
    line,
    code: 'TRN307',
    reason: TEST_TEMPLATE,
  })),
  // examples/grpo_math/math.yaml names `rm_gallery_reward`, which 10796ed did not register; the modelled main
  // registers it again (an OpenJudge alias, 8b7fce3), so that example is no longer a reject.
];

/** Names that each example's plugin directory registers (its README launches it with `--plugin-dir`). */
export const PLUGINS: Record<string, PluginNames> = {
  'examples/bots/bots.yaml': { workflow: ['bots_math_boxed_workflow'], reward_fn: ['bots_math_boxed_reward'] },
  'examples/bots/random.yaml': { workflow: ['bots_math_boxed_workflow'], reward_fn: ['bots_math_boxed_reward'] },
  'benchmark/config/guru_math-template.yaml': {
    reward_fn: ['math_boxed_reward_naive_dapo', 'math_boxed_reward_prime_math'],
  },
  'scripts/context_length_test/context_length.yaml': { workflow: ['synthetic_workflow'] },
};

/** Variables a script exports before it launches the config: search_context_length_capacity.py sets these. */
export const SCRIPT_ENV: Record<string, Record<string, string>> = {
  'scripts/context_length_test/context_length.yaml': { GPU_NUM: '2', ENGINE_NUM: '1', SP_NUM: '1', REPEAT_TIMES: '8' },
};

/**
 * The local paths each corpus example names that are not on this machine: placeholders (`/PATH/TO/DATASET/`) and the
 * examples' own data, which the corpus (configs only) does not hold. TRN304 is expected there and nowhere else.
 */
export const MISSING_DATASETS: Record<string, readonly string[]> = {
  'examples/RAFT_alfworld/RAFT_alfworld_7B.yaml': ['/PATH/TO/ALFWORLD_DATA/'],
  'examples/RAFT_alfworld/RAFT_reflect_alfworld_7B.yaml': ['/PATH/TO/ALFWORLD_DATA/'],
  'examples/asymre_gsm8k/gsm8k.yaml': ['/PATH/TO/DATASET/'],
  'examples/asymre_math/math.yaml': ['/PATH/TO/DATASET/'],
  'examples/async_gsm8k/explorer.yaml': ['/PATH/TO/DATASET/'],
  'examples/async_gsm8k/trainer.yaml': ['/PATH/TO/DATASET/'],
  'examples/dapo_math/dapo.yaml': ['/PATH/TO/AIME2024/'],
  'examples/dpo_humanlike/dpo.yaml': ['/PATH/TO/DATASET/'],
  'examples/grpo_email_search/email_search.yaml': ['/PATH/TO/ENRON_EMAIL_QA_PAIRS/'],
  'examples/grpo_math/math.yaml': ['/PATH/TO/DATASET/'],
  'examples/mix_chord/mix_chord.yaml': ['/PATH/TO/RL_DATASET', '/PATH/TO/SFT_DATASET'],
  'examples/mix_math/mix_math.yaml': ['/PATH/TO/DATASET/', '/PATH/TO/EXPERT_DATA/'],
  'examples/sppo_gsm8k/gsm8k.yaml': ['/PATH/TO/DATASET/'],
  // trainer_config_path, relative to the repository root Trinity's tests start in
  'tests/template/config.yaml': ['tests/template/verl_config.yaml'],
  'examples/bots/bots.yaml': [
    '<DATA_ROOT>/LLM360/guru-RL-92k/train/math__combined_54.4k.parquet',
    '<DATA_ROOT>/LLM360/guru-RL-92k/online_eval/math__math_500.parquet',
    'your/data/path/containing/math__combined_54.4k.parquet',
    'your/data/path/containing/math__math_500.parquet',
  ],
  'examples/bots/random.yaml': [
    '<DATA_ROOT>/LLM360/guru-RL-92k/train/math__combined_54.4k.parquet',
    '<DATA_ROOT>/LLM360/guru-RL-92k/online_eval/math__math_500.parquet',
    'your/data/path/containing/math__combined_54.4k.parquet',
    'your/data/path/containing/math__math_500.parquet',
  ],
  'examples/bots/ref_eval_collect.yaml': ['your/data/path/containing/math__combined_54.4k.parquet'],
  'examples/entropy/clipb.yaml': ['/path/to/dapo-validation'],
  'examples/entropy/clipv.yaml': ['/path/to/dapo-validation'],
};

/** The path a TRN304 message says does not exist. */
export function missingPathOf(message: string): string | undefined {
  return /`([^`]*)` does not exist/.exec(message)?.[1];
}

/** Whether a diagnostic is a TRN304 for a path listed as missing for this file. */
export function isMissingDataset(file: string, code: string, message: string): boolean {
  const p = missingPathOf(message);
  return code === 'TRN304' && p !== undefined && (MISSING_DATASETS[file] ?? []).includes(p);
}
