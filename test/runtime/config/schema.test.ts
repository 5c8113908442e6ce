/**
 * The generated JSON Schemas as an editor consumes them: yaml-language-server validating every real Trinity config
 * of a release against that release's schema reports nothing but real deprecations, and the schema carries the
 * hover, enum, default, deprecation and snippet annotations VS Code reads.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { getLanguageService, SchemaPriority } from 'yaml-language-server';
import { RELEASES } from '../../../runtime/config/releases';
import { corpusConfigs, corpusDir } from '../../helpers/corpus';

const root = join(__dirname, '..', '..', '..');
const schemaOf = (r: string) => JSON.parse(readFileSync(join(root, 'schemas', `trinity-${r}.schema.json`), 'utf8'));

/** What yaml-language-server may say about clean corpus files: deprecations the model declares, and one real bug. */
const EXPECTED = [/`explorer\.runner_num` is deprecated/, /Property base_model is not allowed/];

/** yaml-language-server validating with `release`'s generated schema, as an editor configures it. */
function schemaValidator(release: string) {
  const schema = schemaOf(release);
  const ls = getLanguageService({
    schemaRequestService: async () => JSON.stringify(schema),
    workspaceContext: { resolveRelativePath: (rel: string, base: string) => new URL(rel, base).toString() },
  });
  ls.configure({
    validate: true,
    yamlVersion: '1.1',
    schemas: [{ uri: `trinity://${release}`, fileMatch: ['*'], schema, priority: SchemaPriority.Settings }],
  });
  return ls;
}

describe('yaml-language-server with the generated schemas', () => {
  let version = 0;
  for (const release of RELEASES) {
    test(`accepts the ${release} corpus`, async () => {
      const ls = schemaValidator(release);
      // it saw data: the release has configs, and this validator holds the release's schema (a typo is flagged)
      const configs = corpusConfigs(release);
      assert.ok(
        configs.length > 0,
        `the corpus holds no ${release} configs (${corpusDir()}/trinity-configs/${release})`,
      );
      const typo = TextDocument.create(
        `file:///${release}/typo.yaml`,
        'yaml',
        ++version,
        'algorithm:\n  repeat_time: 8\n',
      );
      assert.ok(
        (await ls.doValidation(typo, false)).some((d) => /repeat_time is not allowed/.test(d.message)),
        `the ${release} schema did not apply`,
      );
      const unexpected: string[] = [];
      for (const f of configs) {
        const doc = TextDocument.create(`file:///${release}/${f.rel}`, 'yaml', ++version, readFileSync(f.abs, 'utf8'));
        for (const d of await ls.doValidation(doc, false)) {
          if (!EXPECTED.some((re) => re.test(d.message)))
            unexpected.push(`${f.rel}:${d.range.start.line + 1} ${d.message}`);
        }
      }
      assert.deepEqual(unexpected, []);
    });
  }

  test('a misspelled key is flagged by the schema alone', async () => {
    const ls = schemaValidator('main');
    const diags = await ls.doValidation(
      TextDocument.create('file:///x.yaml', 'yaml', 1, 'algorithm:\n  repeat_time: 8\n'),
      false,
    );
    assert.ok(diags.some((d) => /repeat_time is not allowed/.test(d.message)));
  });

  test("a model's sampling bounds follow its engine: SGLang's with engine_type sglang, vLLM's otherwise", async () => {
    const problems = async (release: string, text: string) => {
      const ls = schemaValidator(release);
      const diags = await ls.doValidation(TextDocument.create('file:///x.yaml', 'yaml', ++version, text), false);
      return diags.map((d) => d.range.start.line + 1);
    };
    const rollout = (lines: string) => `explorer:\n  rollout_model:\n${lines}`;
    // top_k 0: "disabled" for vLLM, an error for SGLang unless the model's temperature is greedy (< 1e-6)
    assert.deepEqual(await problems('main', rollout('    top_k: 0\n')), []);
    assert.deepEqual(
      await problems('main', rollout('    engine_type: sglang\n    temperature: 1.0\n    top_k: 0\n')),
      [5],
    );
    assert.deepEqual(
      await problems('main', rollout('    engine_type: sglang\n    temperature: 0\n    top_k: 0\n')),
      [],
    );
    // logprobs past 20: vLLM's limit; SGLang is asked for no top log-probs
    assert.deepEqual(await problems('main', rollout('    logprobs: 32\n')), [3]);
    assert.deepEqual(await problems('main', rollout('    engine_type: sglang\n    logprobs: 32\n')), []);
    // repetition_penalty above 2 and max_response_tokens 0: SGLang's bounds differ from vLLM's both ways
    assert.deepEqual(await problems('main', rollout('    repetition_penalty: 2.5\n')), []);
    assert.deepEqual(await problems('main', rollout('    engine_type: sglang\n    repetition_penalty: 2.5\n')), [4]);
    assert.deepEqual(await problems('main', rollout('    max_response_tokens: 0\n')), [3]);
    assert.deepEqual(await problems('main', rollout('    engine_type: sglang\n    max_response_tokens: 0\n')), []);
    // a model-wide value may reach either engine: the schema admits what either does; the checker knows which
    assert.deepEqual(await problems('main', 'model:\n  max_response_tokens: 0\n'), []);
    assert.deepEqual(await problems('main', 'model:\n  max_response_tokens: -1\n'), [2]);
    assert.deepEqual(await problems('v0.5.2', 'model:\n  max_response_tokens: 0\n'), [2]);
  });
});

describe('schema annotations', () => {
  const s = schemaOf('main');
  const algo = s.definitions.AlgorithmConfig.properties;

  test('keys carry Markdown descriptions with default and release', () => {
    assert.match(algo.repeat_times.markdownDescription, /Default: `1` · Since Trinity v0\.3\.0/);
    assert.equal(algo.repeat_times.default, 1);
  });

  test('registries list their names with descriptions', () => {
    const names = algo.algorithm_type.anyOf[0];
    assert.ok(names.enum.includes('grpo') && names.enum.includes('dpo'));
    assert.equal(names.enum.length, names.markdownEnumDescriptions.length);
    assert.ok(names.markdownEnumDescriptions.every((d: string) => d.length > 10));
  });

  test('deprecated keys say what replaces them, only from the release that deprecated them', () => {
    assert.match(s.definitions.ExplorerConfig.properties.runner_num.deprecationMessage, /runner_per_model/);
    assert.match(s.definitions.OptimizerConfig.properties.warmup_style.deprecationMessage, /lr_scheduler_type/);
    assert.equal(schemaOf('v0.4.0').definitions.OptimizerConfig.properties.warmup_style.deprecationMessage, undefined);
  });

  test('whole-section snippets are offered', () => {
    assert.ok(s.definitions.AlgorithmConfig.defaultSnippets.some((x: { label: string }) => x.label === 'GRPO'));
  });

  test('each release has exactly its own keys', () => {
    assert.ok('proxy_port' in s.definitions.ExplorerConfig.properties);
    assert.ok(!('proxy_port' in schemaOf('v0.3.1').definitions.ExplorerConfig.properties));
    assert.ok('api_port' in schemaOf('v0.3.1').definitions.ExplorerConfig.properties);
  });
});
