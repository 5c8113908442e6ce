/**
 * Nothing a config says is dropped silently: every key of main's config model is read by the runtime, refused before
 * any work (the refused settings, with everything under a refused section or behind a refused `enable`), named at the
 * run's start as scale the run does without (scale-settings.ts), or listed as having no effect locally, by design,
 * with the reason (no-effect-settings.ts). "Read" is the key's name used in the code of runtime/rft (refusals/ and
 * comments aside), runtime/config/runs (the job's paths and metric names) or check-config.ts (the stages): a new key
 * the runtime never mentions fails here until it is read, refused or listed. The list holds no key that is read or
 * refused, or that main does not have.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
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

const withoutComments = (t: string): string => t.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|\s)\/\/.*$/gm, '$1');

/** The runtime's code, comments removed. */
const CODE = [
  ...tsFiles(join(ROOT, 'runtime/rft')).filter((f) => !f.includes(`${join('rft', 'refusals')}`)),
  ...tsFiles(join(ROOT, 'runtime/config/runs')),
  join(ROOT, 'runtime/config/check-config.ts'),
]
  .map((f) => withoutComments(readFileSync(f, 'utf8')))
  .join('\n');

/** Keys the check reads into a key the runtime reads, as Trinity's launch does. */
const READ_BY_THE_CHECK = new Set([
  'chat_template_path', // into model.custom_chat_template (config_validator.py reads the file)
]);

const isRead = (key: string): boolean => READ_BY_THE_CHECK.has(key) || new RegExp(`[.'"\\s{,]${key}\\b`).test(CODE);

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
  const { field, type } = schemaAt(segs, RELEASE);
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
      return !isRead(key) && !REFUSED.has(id) && !LISTED.has(id);
    }).map(({ section, key }) => `${section}.${key}`);
    assert.deepEqual(dropped, [], 'read by nothing, refused by nothing, listed nowhere');
  });

  test('the no-effect list holds only keys main has that are neither read nor refused, each group with its reason', () => {
    const all = new Set(KEYS.map(({ section, key }) => `${section}.${key}`));
    for (const g of NO_EFFECT_LOCALLY) {
      assert.ok(g.why.length > 40 && g.where.length > 0, `${g.where}: says why`);
      for (const id of g.fields) {
        assert.ok(all.has(id), `${id}: not a key of ${RELEASE}`);
        assert.ok(!REFUSED.has(id), `${id}: refused, so not to be listed`);
        assert.ok(!isRead(id.split('.')[1]), `${id}: read by the runtime, so not to be listed`);
      }
    }
  });

  test('the sweep bites: a key nobody reads (save_input before issue 38) would be named', () => {
    assert.ok(isRead('save_input') && isRead('input_save_path'), 'read by the pipeline input store now');
    assert.ok(!isRead('a_key_no_code_mentions'));
    assert.ok(REFUSED.has('TaskPipelineConfig.num_process'), 'under a refused section');
    assert.ok(REFUSED.has('TinkerConfig.base_url'), 'behind a refused enable');
  });
});
