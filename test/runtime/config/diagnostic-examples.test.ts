/**
 * Every example in the diagnostics reference (docs/diagnostics.md, from CODE_DOCS) reports its own code when checked
 * as the CLI checks a file, so each documented code is named by a test and a doc example that drifts from the
 * checker fails here. A few examples are about files on disk; those get the folder they describe.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { CODE_DOCS } from '../../../runtime/config/codegen/diagnostic-docs';
import type { DiagnosticCode } from '../../../runtime/config/diagnostics';
import { checkConfig } from '../../../runtime/config/check-config';
import { localRefusals } from '../../../runtime/rft/refusals/refusals';
import { readModelConfigJson } from '../../../runtime/engine/lm/config-json-cache';
import { promptTokens } from '../../../runtime/rft/workflows/prompt-tokens';
import { buildByteTokenizer } from '../../../runtime/engine/tokenizer';
import { QWEN25_05B_JSON, SHRUNK_MODEL_JSON } from '../../helpers/shrunk-model-json';

/** The files an example's folder must hold for its finding to exist (paths relative to the config's folder). */
const FILES: Partial<Record<DiagnosticCode, Record<string, string>>> = {
  // An earlier run of the same job, not empty.
  TRN209: { 'checkpoints/gsm8k/grpo-qwen/monitor/metrics.jsonl': '{}\n' },
  // A taskset whose columns are GSM8K's (question, answer), not `problem`.
  TRN305: { 'data/gsm8k/train.jsonl': '{"question": "1+1?", "answer": "2"}\n' },
  // A dataset folder with a train split only, asked for its test split.
  TRN306: { 'data/gsm8k/train.jsonl': '{"question": "1+1?", "answer": "2"}\n' },
  // FrozenLake tasks written as prompts, without the seed/size/p the environment reads.
  TRN317: { 'data/frozenlake/train.jsonl': '{"question": "Reach the goal."}\n' },
  // A model folder made for 512 positions.
  TRN318: { 'tiny-model/config.json': '{"model_type": "qwen2", "max_position_embeddings": 512}\n' },
  // A FrozenLake task and a model folder with a byte-level tokenizer (ChatML template): the prompt is ~1000 tokens.
  TRN321: {
    'data/frozenlake/train.jsonl': '{"seed": 1, "size": 4, "p": 0.8}\n',
    'tiny-model/config.json': '{"model_type": "qwen2", "max_position_embeddings": 512}\n',
    'tiny-model/tokenizer.json': JSON.stringify(buildByteTokenizer().tokenizerJson),
    'tiny-model/tokenizer_config.json': JSON.stringify(buildByteTokenizer().tokenizerConfig),
  },
};
// The same folder: its first prompt (~1350 tokens) fits 1800, ten turns of ~250 more do not.
FILES.TRN322 = FILES.TRN321;
// The model a user shrank Trinity's FrozenLake example to: 2 layers, 64 wide, a byte-level vocabulary.
FILES.TRN323 = { 'tiny-model/config.json': JSON.stringify(SHRUNK_MODEL_JSON) };
FILES.TRN324 = FILES.TRN323;
FILES.TRN325 = { 'small-model/config.json': JSON.stringify(QWEN25_05B_JSON) };
FILES.TRN326 = FILES.TRN325;

/**
 * Run health (TRN4xx) comes from a run's metrics, not from the config alone: its examples name the key a finding
 * lands on, and test/runtime/config/run-health.test.ts checks each code on a recorded run.
 */
const FROM_A_RUN = (code: string) => /^TRN4\d\d$/.test(code);
const RUN_HEALTH_TESTS = readFileSync(join(__dirname, 'run-health.test.ts'), 'utf8');

/** Codes that no config can trigger (an internal error of a check). */
const NO_EXAMPLE: DiagnosticCode[] = ['TRN009'];

const documented = Object.entries(CODE_DOCS) as [DiagnosticCode, (typeof CODE_DOCS)[DiagnosticCode]][];

test('every code but the internal error has an example', () => {
  assert.ok(documented.length >= 70, `only ${documented.length} codes documented`);
  assert.deepEqual(
    documented.filter(([, d]) => !d.example).map(([c]) => c),
    NO_EXAMPLE,
  );
});

for (const [code, doc] of documented) {
  if (!doc.example) continue;
  if (FROM_A_RUN(code)) {
    test(`${code}: checked on a recorded run`, () =>
      assert.ok(RUN_HEALTH_TESTS.includes(code), `run-health.test.ts names no ${code}`));
    continue;
  }
  test(`${code}: the documented example reports ${code}`, async () => {
    const dir = mkdtempSync(join(tmpdir(), `${code}-`));
    for (const [path, text] of Object.entries(FILES[code] ?? {})) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    const result = await checkConfig(doc.example, {
      release: 'auto',
      env: {},
      host: {
        baseDirs: [dir],
        env: {},
        exists: existsSync,
        modelConfig: readModelConfigJson,
        promptTokens: (req) => promptTokens(req, {}),
        localRuns: true,
      },
    });
    // TRN312 is what the local runtime refuses: the language server shows localRefusals under that code.
    const codes = [...result.diagnostics.map((d) => d.code), ...(localRefusals(result).length > 0 ? ['TRN312'] : [])];
    assert.ok(codes.includes(code), `${code}'s example reports ${JSON.stringify([...new Set(codes)])}`);
  });
}
