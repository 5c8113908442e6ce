/** Acceptance through the language server: every corpus config has zero errors under its own release. */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { RELEASES } from '../../runtime/config/releases';
import { corpusConfigs, TRINITY_ENV } from '../helpers/corpus';
import { isMissingDataset, KNOWN_REJECTS, PLUGINS, SCRIPT_ENV } from '../helpers/known-rejects';
import { startInProcess } from '../helpers/lsp';

let pluginDir: string;
const saved = { ...process.env };

before(() => {
  // What a user of these examples has: Trinity's documented variables exported, and the examples' plugin
  // directories configured (here one directory registering the same names; the .py files are our own).
  Object.assign(process.env, TRINITY_ENV, ...Object.values(SCRIPT_ENV));
  pluginDir = mkdtempSync(join(tmpdir(), 'tw-plugins-'));
  const lines: string[] = [];
  for (const names of Object.values(PLUGINS)) {
    for (const w of names.workflow ?? []) lines.push(`@WORKFLOWS.register_module("${w}")`, `class W_${w}: pass`);
    for (const r of names.reward_fn ?? [])
      lines.push(`@REWARD_FUNCTIONS.register_module("${r}")`, `class R_${r}: pass`);
  }
  writeFileSync(join(pluginDir, 'plugins.py'), `${lines.join('\n')}\n`);
});

after(() => {
  process.env = saved;
});

for (const release of RELEASES) {
  describe(`corpus ${release} through the language server`, () => {
    test('no errors except the known Trinity-side rejects', async () => {
      // The examples' datasets are not on this machine: TRN304 is expected exactly on the paths listed per file.
      const c = await startInProcess({ configuration: { trinityVersion: release, pluginDirs: [pluginDir] } });
      try {
        const unexplained: string[] = [];
        const seen = new Set<string>();
        for (const { rel, abs } of corpusConfigs(release)) {
          const ds = await c.open(`file:///corpus/${release}/${rel}`, readFileSync(abs, 'utf8'));
          assert.equal(c.releaseOf(`file:///corpus/${release}/${rel}`)?.release, release);
          for (const d of ds.filter((x) => x.severity === 1)) {
            const line = d.range.start.line + 1;
            if (isMissingDataset(rel, String(d.code), d.message)) continue;
            if (
              KNOWN_REJECTS.some((k) => k.release === release && k.file === rel && k.line === line && k.code === d.code)
            )
              seen.add(`${rel}:${line} ${d.code}`);
            else unexplained.push(`${rel}:${line} ${d.code} ${d.message}`);
          }
        }
        assert.deepEqual(unexplained, []);
        // And every known reject is still reported, so the list cannot go stale.
        const expected = KNOWN_REJECTS.filter((k) => k.release === release).map((k) => `${k.file}:${k.line} ${k.code}`);
        assert.deepEqual(
          expected.filter((k) => !seen.has(k)),
          [],
        );
      } finally {
        await c.close();
      }
    });
  });
}
