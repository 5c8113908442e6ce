/**
 * The TextMate injection grammar, tokenized by VS Code's own engine (vscode-textmate + Oniguruma WASM).
 * VS Code's YAML grammar is not in this repository; a minimal stand-in with its comment scope takes its place,
 * enough to check that interpolations are scoped and that comments are left alone.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import * as oniguruma from 'vscode-oniguruma';
import { INITIAL, Registry, type IGrammar } from 'vscode-textmate';

const root = join(__dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

const YAML_STAND_IN = {
  scopeName: 'source.yaml',
  patterns: [
    { match: '#.*$', name: 'comment.line.number-sign.yaml' },
    { match: '^\\s*([\\w.-]+)(:)', captures: { 1: { name: 'entity.name.tag.yaml' } } },
  ],
};

let grammar: IGrammar;

before(async () => {
  const wasm = readFileSync(join(root, 'node_modules', 'vscode-oniguruma', 'release', 'onig.wasm'));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength) as ArrayBuffer);
  const contributed = pkg.contributes.grammars as { scopeName: string; path: string; injectTo?: string[] }[];
  const registry = new Registry({
    onigLib: Promise.resolve({ createOnigScanner: (p: string[]) => new oniguruma.OnigScanner(p), createOnigString: (s: string) => new oniguruma.OnigString(s) }),
    loadGrammar: async (scope) => {
      if (scope === 'source.yaml') return YAML_STAND_IN as never;
      const g = contributed.find((x) => x.scopeName === scope);
      return g ? JSON.parse(readFileSync(join(root, g.path), 'utf8')) : null;
    },
    getInjections: (scope) => contributed.filter((g) => g.injectTo?.includes(scope)).map((g) => g.scopeName),
  });
  grammar = (await registry.loadGrammar('source.trinity-yaml'))!;
});

function scopesOf(line: string): { text: string; scopes: string[] }[] {
  const r = grammar.tokenizeLine(line, INITIAL);
  return r.tokens.map((t) => ({ text: line.slice(t.startIndex, t.endIndex), scopes: t.scopes }));
}

const has = (line: string, text: string, scope: string) => scopesOf(line).some((t) => t.text === text && t.scopes.some((s) => s.startsWith(scope)));

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
    assert.ok(begins[1].scopes.filter((s) => s.startsWith('meta.interpolation')).length === 2, 'inner one is inside the outer one');
  });

  test('comments and escaped \\${ are not interpolations', () => {
    assert.ok(!scopesOf('# uses ${model.x} later').some((t) => t.scopes.some((s) => s.startsWith('meta.interpolation'))));
    assert.ok(!scopesOf('name: a\\${b}').some((t) => t.scopes.some((s) => s.startsWith('meta.interpolation'))));
  });
});
