/**
 * Acceptance: every real Trinity-RFT config of each supported release checks with zero errors against its own
 * release, except files Trinity itself would reject; each of those is named below with its line, code and reason.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { describe, test } from 'node:test';
import { lineColumn } from '../../../runtime/config/load/load-config';
import { RELEASES, type Release } from '../../../runtime/config/releases';
import { checkConfig } from '../../../runtime/config/check-config';
import { corpusConfigs, TRINITY_ENV } from '../../helpers/corpus';
import {
  isMissingDataset,
  KNOWN_REJECTS,
  MISSING_DATASETS,
  missingPathOf,
  PLUGINS,
  SCRIPT_ENV,
} from '../../helpers/known-rejects';

async function errorsOf(release: Release, abs: string, rel: string) {
  const text = readFileSync(abs, 'utf8');
  const env = { ...TRINITY_ENV, ...(SCRIPT_ENV[rel] ?? {}) };
  const result = await checkConfig(text, {
    release,
    env,
    datasets: false,
    host: { plugins: PLUGINS[rel], exists: existsSync, baseDirs: [dirname(abs)] },
  });
  return result.diagnostics
    .filter((d) => d.severity === 'error')
    .map((d) => ({ line: lineColumn(result.loaded.source, d.range[0]).line, code: d.code, message: d.message }));
}

const reportedMissing = new Set<string>();

for (const release of RELEASES) {
  describe(`corpus ${release}`, () => {
    const files = corpusConfigs(release);
    test(`has configs for ${release}`, () => assert.ok(files.length > 10, `only ${files.length} configs`));
    for (const { rel, abs } of files) {
      test(rel, async () => {
        const errors = await errorsOf(release, abs, rel);
        const expected = KNOWN_REJECTS.filter((k) => k.release === release && k.file === rel);
        const missing = errors.filter((e) => isMissingDataset(rel, e.code, e.message));
        const unexplained = errors.filter(
          (e) => !missing.includes(e) && !expected.some((k) => k.line === e.line && k.code === e.code),
        );
        assert.deepEqual(unexplained, [], `${rel} has errors under ${release}`);
        for (const e of missing) reportedMissing.add(`${rel} ${missingPathOf(e.message)}`);
        for (const k of expected) {
          assert.ok(
            errors.some((e) => e.line === k.line && e.code === k.code),
            `${rel}:${k.line} should report ${k.code} (${k.reason})`,
          );
        }
      });
    }
  });
}

describe('corpus: missing datasets', () => {
  test('every listed missing path is reported (the list cannot go stale)', () => {
    const listed = Object.entries(MISSING_DATASETS).flatMap(([file, paths]) => paths.map((p) => `${file} ${p}`));
    assert.deepEqual(
      listed.filter((k) => !reportedMissing.has(k)),
      [],
    );
  });
});
