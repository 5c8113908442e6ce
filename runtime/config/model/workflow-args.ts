/**
 * The `workflow_args` each runnable workflow reads, per release, as Trinity's workflow constructors read them
 * (`task.workflow_args.get(key, default)`): meaning, type, value domain and default. Keys a workflow does not read
 * are ignored by Trinity without a word, so a misspelled `agent_max_step` silently runs with the default.
 */
import { inRange, type Release } from '../releases';

export type WorkflowArgType = 'int' | 'number' | 'bool' | 'string' | 'map-rows' | 'dict';

export interface WorkflowArgSpec {
  name: string;
  type: WorkflowArgType;
  /** What Trinity uses when the key is absent (`null`: nothing, e.g. a random map). */
  default: unknown;
  doc: string;
  /** Smallest value an `int` may take without the workflow failing or doing nothing. */
  min?: number;
  /** What happens with a value outside the domain (the message's second half). */
  consequence: string;
}

/** A key a workflow reads from each task row (`raw_task.get(key, fallback)`), and what its absence does. */
export interface RowKeySpec {
  key: string;
  /** What Trinity takes for a missing key; absent for a plugin's declared column (the workflow gets undefined). */
  fallback?: unknown;
  /** What a task without the key gets. */
  without: string;
  /** An error where the task cannot run without it, else a warning. */
  severity: 'error' | 'warning';
  /** The workflow reads it unless this workflow arg is set (FrozenLake's `desc` replaces the row's map). */
  unlessArg?: string;
}

export interface WorkflowArgsSpec {
  workflows: readonly string[];
  since?: Release;
  /** The Trinity source file and commit the arguments were read from. */
  source: string;
  /** Releases at which the source was read: unknown keys are flagged only there (older files were not read). */
  readAt: readonly Release[];
  args: readonly WorkflowArgSpec[];
  rowKeys?: readonly RowKeySpec[];
  /** Whether the constructor asserts `explorer.rollout_model.enable_history` (a step-wise base class). */
  needsHistory?: string;
  /** A local plugin's declaration (its file as shown), not Trinity's source. */
  declaredIn?: string;
}

const FROZEN_LAKE: WorkflowArgsSpec = {
  workflows: ['frozen_lake_workflow'],
  since: 'v0.4.0',
  source: 'trinity/common/workflows/envs/frozen_lake/workflow.py @8b7fce3',
  readAt: ['main'],
  args: [
    {
      name: 'env_max_steps',
      type: 'int',
      default: 8,
      min: 0,
      doc: 'How far the goal of a generated map may lie: `generate_random_map` keeps drawing maps until its search reaches G within this many steps from S (0: G next to S).',
      consequence: 'no map passes the search, so `generate_random_map` never returns and every task hangs.',
    },
    {
      name: 'agent_max_steps',
      type: 'int',
      default: 10,
      min: 1,
      doc: 'Turns the model gets per episode (one action each); the user message counts them down. An episode that reaches neither G nor a hole ends after this many turns.',
      consequence: 'the episode loop (`range(agent_max_steps)`) fails or runs no turn at all.',
    },
    {
      name: 'desc',
      type: 'map-rows',
      default: null,
      doc: 'A fixed map as rows of `S`, `F`, `H`, `G` (e.g. `["SFFF", "FHFH", "FFFH", "HFFG"]`), the same for every task. Unset: each task draws a random map from its row\'s `size`, `p` and `seed`.',
      consequence: 'Gymnasium cannot build the environment from it.',
    },
    {
      name: 'is_slippery',
      type: 'bool',
      default: false,
      doc: "Gymnasium's slippery ice: an action moves in the intended direction or one of the two perpendicular ones, each with probability 1/3.",
      consequence: 'Python takes any non-empty value (the string "false" too) as true, so the ice turns slippery.',
    },
    {
      name: 'reward_fn_type',
      type: 'string',
      default: null,
      doc: 'A registered reward function that scores the whole conversation instead of the environment reward (e.g. an OpenJudge grader); unset: the sum of the step rewards, 1 at the goal.',
      consequence: 'the reward registry lookup fails when the workflow is built.',
    },
    {
      name: 'reward_fn_args',
      type: 'dict',
      default: {},
      doc: "Keyword arguments for `reward_fn_type`'s constructor.",
      consequence: 'the reward function cannot be constructed.',
    },
  ],
  rowKeys: [
    {
      key: 'size',
      fallback: 1,
      unlessArg: 'desc',
      severity: 'error',
      without:
        'a 1×1 map leaves no cell for a goal apart from the start, so `generate_random_map` never returns and the task hangs',
    },
    {
      key: 'seed',
      fallback: 42,
      unlessArg: 'desc',
      severity: 'warning',
      without: 'every such task draws the same map (and the same start) from seed 42',
    },
    {
      key: 'p',
      fallback: 0.8,
      unlessArg: 'desc',
      severity: 'warning',
      without: 'cells are frozen with probability 0.8 on every such task',
    },
  ],
};

// trinity/common/workflows/envs/alfworld/alfworld_workflow.py @d19125e: both classes read `max_env_steps` (30);
// StepWiseAlfworldWorkflow is a RewardPropagationWorkflow, whose constructor asserts `model.enable_history`
// (trinity/common/workflows/step_wise_workflow.py @e9cc93a).
const MAX_ENV_STEPS: WorkflowArgSpec = {
  name: 'max_env_steps',
  type: 'int',
  default: 30,
  min: 1,
  doc: 'Turns the agent gets in the ALFWorld game before the episode ends without the goal (reward −0.1 unless the game was won).',
  consequence: 'the episode loop fails or runs no turn, and every task fails.',
};

const ALFWORLD: WorkflowArgsSpec = {
  workflows: ['alfworld_workflow'],
  source: 'trinity/common/workflows/envs/alfworld/alfworld_workflow.py @d19125e',
  readAt: ['main'],
  args: [MAX_ENV_STEPS],
};

const STEP_WISE_ALFWORLD: WorkflowArgsSpec = {
  workflows: ['step_wise_alfworld_workflow'],
  source: 'trinity/common/workflows/envs/alfworld/alfworld_workflow.py @d19125e',
  readAt: ['main'],
  args: [MAX_ENV_STEPS],
  needsHistory: 'RewardPropagationWorkflow (trinity/common/workflows/step_wise_workflow.py @e9cc93a)',
};

const THINKING_BUDGET: WorkflowArgsSpec = {
  workflows: ['thinking_budget_workflow'],
  since: 'main',
  source: 'trinity/common/workflows/thinking_budget_workflow.py @0be2bcc',
  readAt: [],
  args: [
    {
      name: 'thinking_token_budget',
      type: 'int',
      default: null,
      min: 0,
      doc: 'Reasoning tokens each request may spend before vLLM forces the end-of-reasoning tokens (masked out of training).',
      consequence: 'the workflow raises unless it is a non-negative integer.',
    },
  ],
  needsHistory: 'ThinkingBudgetWorkflow (trinity/common/workflows/thinking_budget_workflow.py @0be2bcc)',
};

const SPECS: readonly WorkflowArgsSpec[] = [FROZEN_LAKE, ALFWORLD, STEP_WISE_ALFWORLD, THINKING_BUDGET];

/** A loaded JavaScript plugin's workflows as their `workflowReads` declare them (environment/plugin-declarations.ts). */
export type PluginWorkflowSpecs = Readonly<Record<string, WorkflowArgsSpec>>;

/**
 * What Trinity `release` knows of `workflow`'s arguments, if its source was read; a plugin's declaration first (a
 * plugin workflow registered under a built-in's name replaces it at run time).
 */
export function workflowArgsSpec(
  workflow: unknown,
  release: Release,
  plugins?: PluginWorkflowSpecs,
): WorkflowArgsSpec | undefined {
  if (typeof workflow !== 'string') return undefined;
  if (plugins && Object.hasOwn(plugins, workflow)) return plugins[workflow];
  return SPECS.find((s) => s.workflows.includes(workflow) && inRange(release, s.since));
}

export function workflowArg(spec: WorkflowArgsSpec, key: string): WorkflowArgSpec | undefined {
  return spec.args.find((a) => a.name === key);
}

/** Whether some workflow of `release` reads `key` from its `workflow_args`. */
export function someWorkflowReads(key: string, release: Release): boolean {
  return SPECS.some((s) => inRange(release, s.since) && workflowArg(s, key) !== undefined);
}

/** What `workflow` uses for `key` when the taskset does not set it; undefined where it does not read the key. */
export function workflowArgDefault(workflow: unknown, key: string, release: Release): unknown {
  const spec = workflowArgsSpec(workflow, release);
  return spec && workflowArg(spec, key)?.default;
}

/** Whether `value` lies in the argument's domain; the reason when it does not. */
export function workflowArgProblem(arg: WorkflowArgSpec, value: unknown): string | undefined {
  switch (arg.type) {
    case 'int':
      if (typeof value !== 'number' || !Number.isInteger(value)) return `is ${JSON.stringify(value)}, not an integer`;
      if (arg.min !== undefined && value < arg.min) return `is ${value}, below ${arg.min}`;
      return undefined;
    case 'number':
      if (typeof value !== 'number') return `is ${JSON.stringify(value)}, not a number`;
      if (arg.min !== undefined && value < arg.min) return `is ${value}, below ${arg.min}`;
      return undefined;
    case 'bool':
      return typeof value === 'boolean' ? undefined : `is ${JSON.stringify(value)}, not true or false`;
    case 'string':
      return value === null || typeof value === 'string' ? undefined : `is ${JSON.stringify(value)}, not a name`;
    case 'dict':
      return value !== null && typeof value === 'object' && !Array.isArray(value) ? undefined : 'is not a mapping';
    case 'map-rows':
      return mapRowsProblem(value);
  }
}

/** A FrozenLake map: equal-length rows of S, F, H and G with one start and at least one goal. */
function mapRowsProblem(value: unknown): string | undefined {
  if (value === null) return undefined;
  if (!Array.isArray(value) || value.length === 0 || value.some((r) => typeof r !== 'string'))
    return 'is not a list of map rows such as ["SFFF", "FHFH", "FFFH", "HFFG"]';
  const rows = value as string[];
  if (rows.some((r) => r.length !== rows[0].length)) return 'has rows of different lengths';
  if (rows.some((r) => /[^SFHG]/.test(r))) return 'holds a letter other than S, F, H and G';
  const cells = rows.join('');
  if (cells.split('S').length !== 2) return 'needs exactly one start `S`';
  if (!cells.includes('G')) return 'has no goal `G`';
  return undefined;
}

export function workflowArgTypeName(arg: WorkflowArgSpec): string {
  const names: Record<WorkflowArgType, string> = {
    int: arg.min === undefined ? 'integer' : `integer ≥ ${arg.min}`,
    number: arg.min === undefined ? 'number' : `number ≥ ${arg.min}`,
    bool: 'boolean',
    string: 'string',
    'map-rows': 'list of map rows',
    dict: 'mapping',
  };
  return names[arg.type];
}

/** Hover and completion text for one argument. */
export function workflowArgMarkdown(arg: WorkflowArgSpec, spec: WorkflowArgsSpec): string {
  const def = arg.default === null ? 'unset' : `\`${JSON.stringify(arg.default)}\``;
  return `${arg.doc}\n\nDefault: ${def}. Read by \`${spec.workflows.join('`, `')}\` (${spec.source}).`;
}
