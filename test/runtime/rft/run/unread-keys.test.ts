/**
 * Nothing a config says is dropped silently: every key of main's config model is read by the runtime, refused before
 * any work (the refused settings, with everything under a refused section or behind a refused `enable`), named at the
 * run's start as scale the run does without (scale-settings.ts), or listed as having no effect locally, by design,
 * with the reason (no-effect-settings.ts). "Read" is exact (config-reads.ts): code of runtime/rft (refusals/ aside),
 * runtime/config/runs or check-config.ts reads the field through its section's generated type or names its whole
 * dotted path; the few reads from an untyped record are listed with the file that makes them. A key whose name
 * only another section's key shares (an inference model's `dtype` beside tensor dtypes) fails here until it is
 * read, refused or listed. The lists hold no key that is read or refused, or that main does not have.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, test } from 'node:test';
import { configReads } from './config-reads';
import { SCALE_SETTINGS } from '../../../../runtime/config/check/scale-settings';
import { fieldsAt, schemaAt, sectionsAt } from '../../../../runtime/config/model/index';
import type { SectionDef, ValueType } from '../../../../runtime/config/model/types';
import { NO_EFFECT_LOCALLY } from '../../../../runtime/rft/refusals/no-effect-settings';
import { REFUSED_SETTINGS } from '../../../../runtime/rft/refusals/refused-settings';

const RELEASE = 'main';
const ROOT = join(__dirname, '..', '..', '..', '..');

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? tsFiles(p) : n.endsWith('.ts') ? [p] : [];
  });
}

/** The runtime's code: runtime/rft (refusals/ aside), runtime/config/runs (the job's paths) and the check's stages. */
const FILES = [
  ...tsFiles(join(ROOT, 'runtime/rft')).filter((f) => !f.includes(`${join('rft', 'refusals')}`)),
  ...tsFiles(join(ROOT, 'runtime/config/runs')),
  join(ROOT, 'runtime/config/check-config.ts'),
];

/** `Section.field` of each key the runtime reads through its generated type or by its whole dotted path. */
const READS = configReads(FILES, RELEASE);

/** Keys the check reads into a key the runtime reads, as Trinity's launch does. */
const READ_BY_THE_CHECK = new Set([
  'ModelConfig.chat_template_path', // into model.custom_chat_template (config_validator.py reads the file)
]);

/**
 * Keys read from an untyped record (a buffer's section as the storage layer takes it, a taskset's section, the
 * algorithm's pieces by name): each with the file that reads it, which must name the key in its code.
 */
const UNTYPED_READS: readonly { file: string; fields: readonly string[] }[] = [
  {
    file: 'runtime/rft/run/stage/algorithm-setup.ts', // `piece(key)`: the written name, else the algorithm's
    fields: ['sample_strategy', 'advantage_fn', 'kl_penalty_fn', 'policy_loss_fn', 'kl_loss_fn', 'entropy_loss_fn'].map(
      (k) => `AlgorithmConfig.${k}`,
    ),
  },
  {
    file: 'runtime/rft/explorer/experience-pipeline.ts', // the operators as written
    fields: ['OperatorConfig.name', 'OperatorConfig.args'],
  },
  {
    file: 'runtime/rft/buffer/index.ts', // resolveBufferConfig: a buffer's section as the storage layer takes it
    fields: [
      ...['schema_type', 'name'].map((k) => `StorageConfig.${k}`),
      ...['StorageConfig', 'TasksetConfig', 'ExperienceBufferConfig'].flatMap((s) =>
        ['max_retry_times', 'max_retry_interval', 'index'].map((k) => `${s}.${k}`),
      ),
      ...['StorageConfig', 'ExperienceBufferConfig'].flatMap((s) =>
        ['capacity', 'max_read_timeout'].map((k) => `${s}.${k}`),
      ),
      'TasksetConfig.storage_type',
    ],
  },
  {
    file: 'runtime/rft/data/tasks.ts', // a taskset's section, with the explorer_input defaults it falls back to
    fields: [
      ...['StorageConfig', 'TasksetConfig'].flatMap((s) =>
        [
          'default_reward_fn_type',
          'workflow_args',
          'reward_fn_args',
          'repeat_times',
          'is_eval',
          'batch_size',
          'total_epochs',
          'total_steps',
        ].map((k) => `${s}.${k}`),
      ),
      'StorageConfig.default_workflow_type',
      'ExperienceBufferConfig.batch_size',
      'ExplorerInput.default_workflow_type',
      'ExplorerInput.default_eval_workflow_type',
      'ExplorerInput.default_reward_fn_type',
      'GenerationConfig.n',
    ],
  },
  {
    file: 'runtime/rft/explorer/explore-step.ts', // `explorer.dynamic_timeout` as the scheduler takes it
    fields: ['enable', 'ratio', 'warmup_min_steps'].map((k) => `DynamicTimeoutConfig.${k}`),
  },
  {
    file: 'runtime/config/check-config.ts', // a stage's name and the sections it replaces (STAGE_SECTIONS)
    fields: ['StageConfig.stage_name', 'StageConfig.mode'],
  },
  {
    file: 'runtime/rft/data/load-dataset.ts', // the dataset a buffer's path names
    fields: ['StorageConfig', 'TasksetConfig', 'ExperienceBufferConfig'].flatMap((s) =>
      ['split', 'subset_name'].map((k) => `${s}.${k}`),
    ),
  },
];
const READ_UNTYPED = new Set(UNTYPED_READS.flatMap((r) => r.fields));

const withoutComments = (t: string): string => t.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|\s)\/\/.*$/gm, '$1');

const CODE = new Map(FILES.map((f) => [f, withoutComments(readFileSync(f, 'utf8'))]));

/** The files whose code names `key` (how an untyped read is found, and a failure points at where to look). */
const naming = (key: string): string[] =>
  [...CODE].filter(([, code]) => new RegExp(`\\b${key}\\b`).test(code)).map(([f]) => relative(ROOT, f));

const isRead = (id: string): boolean => READS.has(id) || READ_BY_THE_CHECK.has(id) || READ_UNTYPED.has(id);

function sectionsIn(t: ValueType | undefined): SectionDef[] {
  if (!t) return [];
  if (t.kind === 'section') return [t.section];
  if (t.kind === 'list') return sectionsIn(t.item);
  if (t.kind === 'map') return sectionsIn(t.value);
  return [];
}

const fieldIds = (section: SectionDef): string[] =>
  [...fieldsAt(section, RELEASE).keys()].map((k) => `${section.name}.${k}`);

/** How many fields of main hold each section. */
const HOLDERS = new Map<SectionDef, number>();
for (const s of sectionsAt(RELEASE))
  for (const f of fieldsAt(s, RELEASE).values())
    for (const held of sectionsIn(f.type)) HOLDERS.set(held, (HOLDERS.get(held) ?? 0) + 1);

/** Refusals of a section only in some cases (a queue between separate processes): its fields are not covered. */
const CONDITIONAL = new Set(['buffer.trainer_input.experience_buffer']);

/**
 * The keys a refused path covers: its own; the fields of the section it holds (a refused pipeline); behind a refused
 * `enable`, its section's. A section held by other keys too is shared with keys that run (a pipeline's output is an
 * experience buffer), and sections deeper down are held elsewhere (a task pipeline's output is a taskset).
 */
function coveredBy(path: string): string[] {
  const segs = path.split('.');
  // A `*` stands for every entry of a list or map: the first stands for them all.
  const { field, type } = schemaAt(
    segs.map((s) => (s === '*' ? 0 : s)),
    RELEASE,
  );
  assert.ok(field, `${path}: a refused path main does not have`);
  const out = [`${field.section.name}.${field.key}`];
  if (!CONDITIONAL.has(path) && type?.kind === 'section' && HOLDERS.get(type.section) === 1)
    out.push(...fieldIds(type.section));
  if (segs[segs.length - 1] === 'enable') out.push(...fieldIds(field.section));
  return out;
}

const REFUSED = new Set([...REFUSED_SETTINGS, ...SCALE_SETTINGS].flatMap((s) => coveredBy(s.path)));
const LISTED = new Map(NO_EFFECT_LOCALLY.flatMap((g) => g.fields.map((f) => [f, g] as const)));

/** Every leaf key of main's model (a field holding sections is judged by the fields below it). */
const KEYS = [...sectionsAt(RELEASE)].flatMap((s) =>
  [...fieldsAt(s, RELEASE)].filter(([, f]) => !sectionsIn(f.type).length).map(([key]) => ({ section: s.name, key })),
);

describe('no key of the config model is dropped silently', () => {
  test('every key is read by the runtime, refused, or listed as having no effect locally', () => {
    const dropped = KEYS.filter(({ section, key }) => {
      const id = `${section}.${key}`;
      return !isRead(id) && !REFUSED.has(id) && !LISTED.has(id);
    }).map(({ section, key }) => `${section}.${key} (the name is in ${naming(key).join(', ') || 'no file'})`);
    assert.deepEqual(dropped, [], 'read by nothing, refused by nothing, listed nowhere');
  });

  test('the no-effect list holds only keys main has that are neither read nor refused, each group with its reason', () => {
    const all = new Set(KEYS.map(({ section, key }) => `${section}.${key}`));
    for (const g of NO_EFFECT_LOCALLY) {
      assert.ok(g.why.length > 40 && g.where.length > 0, `${g.where}: says why`);
      for (const id of g.fields) {
        assert.ok(all.has(id), `${id}: not a key of ${RELEASE}`);
        assert.ok(!REFUSED.has(id), `${id}: refused, so not to be listed`);
        assert.ok(!isRead(id), `${id}: read by the runtime, so not to be listed`);
      }
    }
  });

  test('each untyped read is a key of main that its file names and that is not read through its type', () => {
    const all = new Set(KEYS.map(({ section, key }) => `${section}.${key}`));
    const wrong = UNTYPED_READS.flatMap(({ file, fields }) =>
      fields.flatMap((id) => [
        ...(all.has(id) ? [] : [`${id}: not a key of ${RELEASE}`]),
        ...(naming(id.split('.')[1]).includes(file) ? [] : [`${id}: ${file} does not name it`]),
        ...(READS.has(id) ? [`${id}: read through its type, so not to be listed`] : []),
      ]),
    );
    assert.deepEqual(wrong, []);
  });

  test('the sweep is exact: a name another key shares is not a read (InferenceModelConfig.dtype before issue 38)', () => {
    // `dtype` is in the runtime's code (tensor dtypes), so the sweep by name counted the rollout model's as read.
    assert.ok(naming('dtype').length > 0);
    assert.ok(!READS.has('InferenceModelConfig.dtype'), "no code reads an inference model's dtype");
    assert.ok(LISTED.has('InferenceModelConfig.dtype'), 'listed with why the local engine computes the same');
    // The rollout model's seed is read since issue 38; a workflow's `raw.seed` was what the name sweep counted.
    assert.ok(READS.has('InferenceModelConfig.seed'));
    assert.ok(
      READS.has('ExperiencePipelineConfig.save_input') && READS.has('ExperiencePipelineConfig.input_save_path'),
    );
    assert.ok(!isRead('ModelConfig.a_key_no_code_mentions'));
    assert.ok(REFUSED.has('TaskPipelineConfig.num_process'), 'under a refused section');
    assert.ok(REFUSED.has('TinkerConfig.base_url'), 'behind a refused enable');
  });
});
