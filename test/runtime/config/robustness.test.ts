/**
 * Whatever the text, the validator answers: random edits of real configs (deletions, insertions, swaps,
 * truncations) never throw and never hang, and hostile YAML is refused quickly with a diagnostic.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { loadConfig } from '../../../runtime/config/load/load-config';
import { RELEASES } from '../../../runtime/config/releases';
import { checkLoaded } from '../../../runtime/config/check-config';
import { corpusConfigs, TRINITY_ENV } from '../../helpers/corpus';

const FILES = RELEASES.flatMap((r) =>
  corpusConfigs(r).map((f) => ({ release: r, text: readFileSync(f.abs, 'utf8'), rel: f.rel })),
);

/** Fragments that stress YAML and OmegaConf parsing when spliced in anywhere. */
const NASTY = [
  '${',
  '}',
  '${oc.env:',
  '${..',
  '\\${',
  ':',
  ': ',
  '- ',
  '&a ',
  '*a',
  '<<: ',
  '"',
  "'",
  '\n  ',
  '\t',
  '#',
  '[',
  ']{',
  '? ',
  '|\n',
  '>-\n',
  '!!python/object ',
  '0x1F',
  '1e309',
  '~',
  '\u0000',
  '\ufeff',
];

type Edit =
  | { kind: 'delete'; at: number; len: number }
  | { kind: 'insert'; at: number; text: string }
  | { kind: 'swap-lines'; a: number; b: number }
  | { kind: 'truncate'; at: number }
  | { kind: 'duplicate-line'; line: number };

const edit: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), len: fc.integer({ min: 1, max: 40 }) }),
  fc.record({
    kind: fc.constant('insert' as const),
    at: fc.nat(),
    text: fc.oneof(fc.constantFrom(...NASTY), fc.string({ maxLength: 12 })),
  }),
  fc.record({ kind: fc.constant('swap-lines' as const), a: fc.nat(), b: fc.nat() }),
  fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('duplicate-line' as const), line: fc.nat() }),
);

function apply(text: string, e: Edit): string {
  const n = Math.max(text.length, 1);
  switch (e.kind) {
    case 'delete': {
      const at = e.at % n;
      return text.slice(0, at) + text.slice(at + e.len);
    }
    case 'insert': {
      const at = e.at % (text.length + 1);
      return text.slice(0, at) + e.text + text.slice(at);
    }
    case 'truncate':
      return text.slice(0, e.at % n);
    case 'swap-lines':
    case 'duplicate-line': {
      const lines = text.split('\n');
      if (e.kind === 'duplicate-line') {
        const i = e.line % lines.length;
        lines.splice(i, 0, lines[i]);
      } else {
        const a = e.a % lines.length;
        const b = e.b % lines.length;
        [lines[a], lines[b]] = [lines[b], lines[a]];
      }
      return lines.join('\n');
    }
  }
}

/**
 * What these bounds catch is a hang or a blow-up (an exponential parse, an alias expanded in full), which takes
 * minutes to hours; a check takes milliseconds. They are generous so that a loaded 2-core machine never fails them.
 */
const HANG_MS = 10_000;

function checkWithin(text: string, release: (typeof RELEASES)[number], ms: number): void {
  const t0 = performance.now();
  const loaded = loadConfig(text, { release, env: TRINITY_ENV });
  const result = checkLoaded(loaded, {});
  const dt = performance.now() - t0;
  assert.ok(dt < ms, `took ${dt.toFixed(0)} ms`);
  for (const d of result.diagnostics) {
    assert.notEqual(d.code, 'TRN009', `a check crashed: ${d.message}`);
    assert.ok(
      d.range[0] >= 0 && d.range[1] >= d.range[0] && d.range[1] <= text.length + 1,
      `range ${d.range} outside the text`,
    );
    assert.ok(d.message.length > 0);
  }
}

describe('random edits of corpus configs', () => {
  test('never throw, never hang, keep ranges inside the text', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: FILES.length - 1 }),
        fc.array(edit, { minLength: 1, maxLength: 6 }),
        (i, edits) => {
          const f = FILES[i];
          const text = edits.reduce(apply, f.text);
          checkWithin(text, f.release, HANG_MS);
        },
      ),
      { numRuns: 1500, seed: 20261129 },
    );
  });
});

describe('hostile YAML', () => {
  test('an alias bomb is refused quickly with a clear diagnostic', () => {
    let bomb = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n';
    const names = 'abcdefghij';
    for (let i = 1; i < names.length; i++) {
      const p = names[i - 1];
      bomb += `${names[i]}: &${names[i]} [*${p},*${p},*${p},*${p},*${p},*${p},*${p},*${p},*${p}]\n`;
    }
    const t0 = performance.now();
    const c = loadConfig(bomb, { release: 'main' });
    const dt = performance.now() - t0;
    // Expanded in full, the bomb is 9^10 (3.5 billion) strings: refusing it must not take anywhere near that work.
    assert.ok(dt < HANG_MS, `took ${dt.toFixed(0)} ms`);
    assert.equal(c.diagnostics[0].code, 'TRN003');
    assert.match(c.diagnostics[0].message, /aliases expand to more than/);
  });

  test('deep nesting and very long lines do not blow the stack or hang', () => {
    checkWithin(`${'['.repeat(5000)}${']'.repeat(5000)}\n`, 'main', 2000);
    checkWithin(`name: ${'${'.repeat(20000)}\n`, 'main', 2000);
    checkWithin(`project: ${'x'.repeat(200000)}\n`, 'main', 2000);
    checkWithin('a:\n'.repeat(3000), 'main', 2000);
  });

  test('self-referencing aliases terminate', () => {
    checkWithin('a: &a\n  b: *a\n', 'main', 1000);
  });
});
