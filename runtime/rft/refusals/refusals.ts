/**
 * Which registry entries of a checked config this runtime cannot run. The config model accepts every name Trinity
 * registers; the local runtime implements the names in `implemented-registries.generated.ts` (generated from its
 * registries). `trinity-workbench run` refuses a config that uses any other before any work, and the language
 * server shows the same finding as information ("runs on Trinity-RFT only").
 *
 * Only the entries a run of the config looks up count: taskset workflows, rewards and selectors and the experience
 * operators when the mode has an explorer; the sample strategy and the trainer's losses when it has a trainer; the
 * advantage function where the algorithm uses one. A null algorithm piece is the algorithm type's default.
 * Monitors are not refused: a local run always writes metrics.jsonl and TensorBoard files, and logs nothing to
 * wandb/mlflow/swanlab, which costs the run nothing. Settings this runtime would not honour (refused-settings.ts) are
 * refused alongside, as registry `setting`.
 */
import { ALGORITHM_TYPES, algorithmTypeAt, effectiveAlgorithmDefaults } from '../../config/model/algorithms';
import { rolesOf } from '../../config/model/choices';
import { fieldsAt, ROOT_SECTION } from '../../config/model';
import type { SectionDef, ValueType } from '../../config/model/types';
import type { Release } from '../../config/releases';
import type { CheckResult } from '../../config/check-config';
import { valueSource, writtenIn } from '../../config/check-config';
import type { Range } from '../../config/load/yaml-tree';
import { LOCAL_REGISTRIES, type LocalRegistry } from './implemented-registries.generated';
import { settingRefusals } from './refused-settings';
import { HOW } from './setting-rule';

export { LOCAL_REGISTRIES, type LocalRegistry } from './implemented-registries.generated';

/** What a registry holds, as a message names it. */
export const TITLES: Record<LocalRegistry, string> = {
  workflow: 'workflow',
  reward_fn: 'reward function',
  advantage_fn: 'advantage function',
  policy_loss_fn: 'policy loss function',
  kl_fn: 'KL function',
  entropy_loss_fn: 'entropy loss function',
  sample_strategy: 'sample strategy',
  experience_operator: 'experience operator',
  selector: 'data selector',
  priority_fn: 'replay priority function',
};

/** Keys whose registry the model does not annotate (the operator list is shared with the task pipeline's Data-Juicer operators). */
const PATH_REGISTRIES: readonly { pattern: RegExp; registry: LocalRegistry }[] = [
  { pattern: /^data_processor\.experience_pipeline\.operators\.\d+\.name$/, registry: 'experience_operator' },
];

/** The algorithm pieces that take a default from the algorithm type when null, and the role that looks them up. */
const ALGORITHM_PIECES: readonly {
  key: 'advantage_fn' | 'policy_loss_fn' | 'kl_loss_fn' | 'kl_penalty_fn' | 'entropy_loss_fn' | 'sample_strategy';
  registry: LocalRegistry;
}[] = [
  { key: 'sample_strategy', registry: 'sample_strategy' },
  { key: 'advantage_fn', registry: 'advantage_fn' },
  { key: 'policy_loss_fn', registry: 'policy_loss_fn' },
  { key: 'kl_loss_fn', registry: 'kl_fn' },
  { key: 'kl_penalty_fn', registry: 'kl_fn' },
  { key: 'entropy_loss_fn', registry: 'entropy_loss_fn' },
];

/**
 * What a registry entry would have done, where its name alone does not say it (Trinity-RFT 10796ed
 * trinity/buffer/operators/data_juicer_operator.py: the Data-Juicer service scores, filters or maps experiences).
 */
export const WHAT_IT_DOES: Partial<Record<LocalRegistry, Record<string, string>>> = {
  experience_operator: {
    data_juicer:
      "it would send each step's experiences to a Data-Juicer service that scores, filters or rewrites them with the recipe in its `args`",
  },
};

export interface LocalRefusal {
  /**
   * The registry the name would be looked up in, `algorithm_type` for an algorithm this runtime has no class of, or
   * `setting` for a value this runtime does not honour.
   */
  registry: LocalRegistry | 'algorithm_type' | 'setting';
  /** Dotted path in the checked config. */
  path: string;
  name: string;
  /** Which run of the result (a stage) uses it. */
  runIndex: number;
  /** Where to show it: the written key, else the nearest written ancestor. */
  range: Range;
  /** The names this runtime runs for that registry (for a setting: what it runs instead). */
  local: readonly string[];
  /** One sentence: what runs on Trinity-RFT only, and what runs here. */
  message: string;
}

/** Names registered by JavaScript plugins of this run (`run --plugin-dir`), per registry. */
export type ExtraNames = Partial<Record<string, readonly string[]>>;

export function localRefusals(result: CheckResult, extra: ExtraNames = {}): LocalRefusal[] {
  const release = result.loaded.release;
  const out: LocalRefusal[] = [];
  const seen = new Set<string>();
  result.runs.forEach((run, runIndex) => {
    const cfg = run.resolved as Record<string, any>;
    const roles = rolesOf(String(cfg.mode));
    const add = (registry: LocalRegistry, path: string, name: unknown, at: string = path): void => {
      if (typeof name !== 'string' || name === '') return;
      const local = [...LOCAL_REGISTRIES[registry], ...(extra[registry] ?? [])];
      if (local.includes(name)) return;
      const range = valueSource(result, at, runIndex)?.range ?? [0, 0];
      const key = `${registry}|${name}|${range[0]}`;
      if (seen.has(key)) return;
      seen.add(key);
      out.push({ registry, path, name, runIndex, range, local, message: refusalMessage(registry, name, path, local) });
    };
    if (roles.explorer) {
      for (const { path, registry, value } of registryValues(ROOT_SECTION, cfg, release, '')) {
        if (registry === 'sample_strategy' || path.startsWith('algorithm.')) continue;
        if (!(registry in LOCAL_REGISTRIES)) continue;
        // Serve mode answers requests; it reads no taskset.
        if (cfg.mode === 'serve' && path.startsWith('buffer.explorer_input.')) continue;
        add(registry as LocalRegistry, path, value, originOf(result, path, runIndex));
      }
    }
    const algo = (cfg.algorithm ?? {}) as Record<string, unknown>;
    const type = String(algo.algorithm_type);
    const spec = algorithmTypeAt(type, release);
    const defaults = effectiveAlgorithmDefaults(type, release);
    if (!spec || !defaults) {
      // Registered by Trinity (or a plugin) but not modelled: its class sets the trainer's pieces, which the local
      // runtime cannot know, so it runs none of it. The editor's TRN312 and `run` say so in these same words.
      const local = ALGORITHM_TYPES.filter((a) => algorithmTypeAt(a.name, release)).map((a) => a.name);
      const range = valueSource(result, 'algorithm.algorithm_type', runIndex)?.range ?? [0, 0];
      if (seen.has(`algorithm_type|${range[0]}`)) return;
      seen.add(`algorithm_type|${range[0]}`);
      out.push({
        registry: 'algorithm_type',
        path: 'algorithm.algorithm_type',
        name: type,
        runIndex,
        range,
        local,
        message:
          `\`algorithm.algorithm_type\`: the algorithm \`${type}\` runs on Trinity-RFT only (its class, which picks the ` +
          `trainer's losses and advantage, is not modelled here); the local runtime runs ${local.map((n) => `\`${n}\``).join(', ')}. ${HOW}`,
      });
      return;
    }
    for (const { key, registry } of ALGORITHM_PIECES) {
      const uses =
        key === 'advantage_fn' ? spec.schema === 'experience' && (roles.trainer || roles.explorer) : roles.trainer;
      if (!uses) continue;
      const written = algo[key];
      const name = written ?? (defaults as Record<string, unknown>)[key];
      const path = `algorithm.${key}`;
      add(registry, path, name, written !== null && written !== undefined ? path : 'algorithm.algorithm_type');
    }
  });
  for (const s of settingRefusals(result)) out.push({ registry: 'setting', ...s });
  return out;
}

const ALFWORLD = 'the ALFWorld environment (the alfworld and textworld Python packages and the ALFWorld game files)';
const AGENTSCOPE = 'the AgentScope Python package, whose agent calls the model through its OpenAI API';

/** What Trinity's environment workflows need that no JavaScript runtime has (their sources' imports and set-up). */
export const WORKFLOW_NEEDS: Record<string, string> = {
  alfworld_workflow: ALFWORLD,
  step_wise_alfworld_workflow: ALFWORLD,
  RAFT_alfworld_workflow: ALFWORLD,
  RAFT_reflect_alfworld_workflow: ALFWORLD,
  sciworld_workflow: 'the ScienceWorld environment (the scienceworld Python package, which runs a Java simulator)',
  webshop_workflow: 'the WebShop environment (its Python web-shop simulator and product data)',
  intercode_sql_workflow: 'InterCode-SQL (the intercode-bench package and a MySQL database in Docker)',
  email_search_workflow: "the email-search environment (ART's email database) and an LLM judge",
  agentscope_workflow_adapter: AGENTSCOPE,
  agentscope_workflow_adapter_v1: AGENTSCOPE,
  agentscope_react_workflow: AGENTSCOPE,
  as_react_workflow: AGENTSCOPE,
  agentscope_react_math_workflow: AGENTSCOPE,
  agentscopev0_react_math_workflow: AGENTSCOPE,
  agentscope_v1_react_search_workflow: `${AGENTSCOPE}, and a search service`,
};

/** "`path`: the workflow `x` runs on Trinity-RFT only (it needs …); …" */
function refusalMessage(registry: LocalRegistry, name: string, path: string, local: readonly string[]): string {
  const does = WHAT_IT_DOES[registry]?.[name];
  const needs = registry === 'workflow' && WORKFLOW_NEEDS[name] ? `it needs ${WORKFLOW_NEEDS[name]}` : undefined;
  const why = does ?? needs;
  return (
    `\`${path}\`: the ${TITLES[registry]} \`${name}\` runs on Trinity-RFT only${why ? ` (${why})` : ''}; ` +
    `the local runtime runs ${local.map((n) => `\`${n}\``).join(', ')}. ${HOW}`
  );
}

/** A taskset's copied `explorer_input.*` value: shown where it was written. */
function originOf(result: CheckResult, path: string, runIndex: number): string {
  if (writtenIn(result, path, runIndex)) return path;
  const key = path.slice(path.lastIndexOf('.') + 1);
  const fallback = `buffer.explorer_input.${key}`;
  return path.startsWith('buffer.explorer_input.') && writtenIn(result, fallback, runIndex) ? fallback : path;
}

/** Every string value of `value` (a section of the checked config) that names a registry entry. */
function* registryValues(
  section: SectionDef,
  value: Record<string, unknown>,
  release: Release,
  prefix: string,
): Generator<{ path: string; registry: string; value: unknown }> {
  const fields = fieldsAt(section, release);
  for (const [key, v] of Object.entries(value)) {
    const f = fields.get(key);
    if (!f || v === null || v === undefined) continue;
    const path = `${prefix}${key}`;
    if (f.values && 'registry' in f.values) yield { path, registry: f.values.registry, value: v };
    const fixed = PATH_REGISTRIES.find((p) => p.pattern.test(path));
    if (fixed) yield { path, registry: fixed.registry, value: v };
    yield* nested(f.type, v, release, path);
  }
}

function* nested(
  type: ValueType,
  v: unknown,
  release: Release,
  path: string,
): Generator<{ path: string; registry: string; value: unknown }> {
  if (v === null || typeof v !== 'object') return;
  if (type.kind === 'section' && !Array.isArray(v))
    yield* registryValues(type.section, v as Record<string, unknown>, release, `${path}.`);
  else if (type.kind === 'list' && Array.isArray(v))
    for (const [i, item] of v.entries()) yield* nested(type.item, item, release, `${path}.${i}`);
  else if (type.kind === 'map' && !Array.isArray(v))
    for (const [k, item] of Object.entries(v)) yield* nested(type.value, item, release, `${path}.${k}`);
}
