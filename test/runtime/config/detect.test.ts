/** Content detection of Trinity configs among YAML files. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { looksLikeTrinityConfig } from '../../../runtime/config/detect';
import { RELEASES } from '../../../runtime/config/releases';
import { corpusConfigs, corpusDir } from '../../helpers/corpus';

test('every real Trinity config of every release is recognised', () => {
  const missed = RELEASES.flatMap((r) => {
    const configs = corpusConfigs(r);
    assert.ok(configs.length > 0, `the corpus holds no ${r} configs (${corpusDir()}/trinity-configs/${r})`);
    return configs.filter((f) => !looksLikeTrinityConfig(readFileSync(f.abs, 'utf8'))).map((f) => `${r}/${f.rel}`);
  });
  assert.deepEqual(missed, []);
});

test('a version comment alone is enough', () => {
  assert.ok(looksLikeTrinityConfig('# trinity-version: 0.4.0\n'));
});

test('other YAML is left alone', () => {
  const others = {
    'GitHub Actions': 'name: CI\non: [push]\njobs:\n  build:\n    runs-on: ubuntu-latest\n',
    'Docker Compose': 'services:\n  web:\n    image: nginx\nvolumes:\n  data: {}\n',
    Kubernetes: 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec:\n  containers: []\n',
    'a model card': 'model: llama\nproject: demo\nmode: eval\nlicense: mit\n',
    'nested look-alikes': 'config:\n  algorithm: x\n  buffer: y\n  trainer: z\n',
  };
  for (const [name, text] of Object.entries(others)) assert.equal(looksLikeTrinityConfig(text), false, name);
});
