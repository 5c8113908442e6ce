/**
 * The TextMate injection grammar, tokenized by VS Code's own engine (vscode-textmate + Oniguruma WASM) over VS Code's
 * real YAML grammar, the one the installed code-server (real VS Code 1.100) ships in its built-in `yaml` extension.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import * as oniguruma from 'vscode-oniguruma';
import { INITIAL, Registry, type IGrammar } from 'vscode-textmate';
import { builtinExtensionDir } from '../e2e/code-server';

const root = join(__dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

interface Contributed {
  scopeName: string;
  path: string;
  injectTo?: string[];
}

/** VS Code's YAML grammars (source.yaml and the per-version ones it includes), with the folder they live in. */
function vscodeYamlGrammars(): { dir: string; grammars: Contributed[] } {
  const dir = builtinExtensionDir('yaml');
  return { dir, grammars: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).contributes.grammars };
}

let grammar: IGrammar;

before(async () => {
  const wasm = readFileSync(join(root, 'node_modules', 'vscode-oniguruma', 'release', 'onig.wasm'));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength) as ArrayBuffer);
  const contributed = pkg.contributes.grammars as Contributed[];
  const yaml = vscodeYamlGrammars();
  const registry = new Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (p: string[]) => new oniguruma.OnigScanner(p),
      createOnigString: (s: string) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scope) => {
      const ours = contributed.find((x) => x.scopeName === scope);
      if (ours) return JSON.parse(readFileSync(join(root, ours.path), 'utf8'));
      const theirs = yaml.grammars.find((x) => x.scopeName === scope);
      return theirs ? JSON.parse(readFileSync(join(yaml.dir, theirs.path), 'utf8')) : null;
    },
    getInjections: (scope) => contributed.filter((g) => g.injectTo?.includes(scope)).map((g) => g.scopeName),
  });
  grammar = (await registry.loadGrammar('source.trinity-yaml'))!;
});

function scopesOf(line: string): { text: string; scopes: string[] }[] {
  const r = grammar.tokenizeLine(line, INITIAL);
  return r.tokens.map((t) => ({ text: line.slice(t.startIndex, t.endIndex), scopes: t.scopes }));
}

const has = (line: string, text: string, scope: string) =>
  scopesOf(line).some((t) => t.text === text && t.scopes.some((s) => s.startsWith(scope)));

describe('interpolation grammar', () => {
  test('a config reference is a variable inside interpolation punctuation', () => {
    const line = 'max_prompt_tokens: ${model.max_response_tokens}';
    assert.ok(has(line, '${', 'punctuation.definition.interpolation.begin'));
    assert.ok(has(line, 'model.max_response_tokens', 'variable.other.reference'));
    assert.ok(has(line, '}', 'punctuation.definition.interpolation.end'));
  });

  test('a resolver call scopes the resolver name and its arguments', () => {
    const line = 'model_path: ${oc.env:TRINITY_MODEL_PATH,Qwen/Qwen2.5-1.5B}';
    assert.ok(has(line, 'oc.env', 'entity.name.function.resolver'));
    assert.ok(has(line, ',', 'punctuation.separator.argument'));
  });

  test('nested interpolations are scoped too', () => {
    const line = 'x: ${oc.env:A,${oc.env:B,c}}';
    const begins = scopesOf(line).filter((t) => t.text === '${');
    assert.equal(begins.length, 2);
    assert.ok(
      begins[1].scopes.filter((s) => s.startsWith('meta.interpolation')).length === 2,
      'inner one is inside the outer one',
    );
  });

  test("VS Code's YAML scopes stay around the interpolation: the key, and quoted strings", () => {
    assert.ok(has('model_path: ${oc.env:X}', 'model_path', 'entity.name.tag.yaml'));
    for (const line of ['path: "${oc.env:X}/data"', "path: '${oc.env:X}/data'"]) {
      const t = scopesOf(line).find((x) => x.text === 'oc.env');
      assert.ok(
        t?.scopes.some((s) => s.startsWith('string.quoted')) &&
          t.scopes.some((s) => s.startsWith('entity.name.function.resolver')),
        `${line}: ${JSON.stringify(t)}`,
      );
    }
  });

  test('comments and escaped \\${ are not interpolations', () => {
    assert.ok(
      !scopesOf('# uses ${model.x} later').some((t) => t.scopes.some((s) => s.startsWith('meta.interpolation'))),
    );
    assert.ok(!scopesOf('name: a\\${b}').some((t) => t.scopes.some((s) => s.startsWith('meta.interpolation'))));
  });
});
