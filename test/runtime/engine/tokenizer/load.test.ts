/**
 * loadTokenizer on a directory: save -> load is exact, generation_config.json and chat_template.jinja are read,
 * and every error names the file (or directory) it is about.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import {
  buildByteTokenizer,
  buildCharTokenizer,
  loadTokenizer,
  tokenizerFromJson,
  TokenizerError,
  writeTokenizerFiles,
  type TokenizerJsonFiles,
} from '../../../../runtime/engine/tokenizer/index';

const root = mkdtempSync(join(tmpdir(), 'tokenizer-load-'));
after(() => rmSync(root, { recursive: true, force: true }));
let dirCount = 0;
const freshDir = (): string => join(root, `t${dirCount++}`);

/** A directory holding `files`, with the config changed by `edit`. */
function dirWith(files: TokenizerJsonFiles, edit: (config: Record<string, unknown>) => void = () => {}): string {
  const config = structuredClone(files.tokenizerConfig) as Record<string, unknown>;
  edit(config);
  const dir = freshDir();
  writeTokenizerFiles(dir, { tokenizerJson: files.tokenizerJson, tokenizerConfig: config });
  return dir;
}

const SAMPLES = ['', 'hello world', '12+34=46\n', 'é😀 <|im_start|>user\nhi<|im_end|>', '(7*8)-1=55 xyz'];

describe('save and load', () => {
  for (const [name, files] of [
    ['byte', buildByteTokenizer()],
    ['char', buildCharTokenizer('0123456789+-*/=() \nabcdefghijklmnopqrstuvwxyz')],
  ] as const) {
    test(`${name} tokenizer: save -> load encodes identically and rewrites the same bytes`, () => {
      const built = tokenizerFromJson(files);
      const dir = freshDir();
      built.save(dir);
      const text = (d: string, f: string): string => readFileSync(join(d, f), 'utf8');
      assert.equal(text(dir, 'tokenizer.json'), `${JSON.stringify(files.tokenizerJson, null, 2)}\n`);
      assert.equal(text(dir, 'tokenizer_config.json'), `${JSON.stringify(files.tokenizerConfig, null, 2)}\n`);
      const loaded = loadTokenizer(dir);
      for (const s of SAMPLES) assert.deepEqual(loaded.encode(s), built.encode(s), JSON.stringify(s));
      assert.equal(loaded.vocabSize, built.vocabSize);
      assert.deepEqual(loaded.eosTokenIds, built.eosTokenIds);
      assert.equal(loaded.padTokenId, built.padTokenId);
      const messages = [{ role: 'user', content: '1+1=' }] as const;
      assert.equal(
        loaded.applyChatTemplate(messages, { addGenerationPrompt: true }),
        built.applyChatTemplate(messages, { addGenerationPrompt: true }),
      );
      const again = freshDir();
      loaded.save(again);
      for (const f of ['tokenizer.json', 'tokenizer_config.json']) assert.equal(text(again, f), text(dir, f), f);
    });
  }

  test('saving keeps the loaded text byte for byte (formatting included)', () => {
    const dir = freshDir();
    mkdirSync(dir);
    const json = JSON.stringify(buildByteTokenizer().tokenizerJson);
    const config = `{"eos_token":   "<|im_end|>", "pad_token": null,\n "chat_template": "{{ messages[0].content }}"}`;
    writeFileSync(join(dir, 'tokenizer.json'), json);
    writeFileSync(join(dir, 'tokenizer_config.json'), config);
    const out = freshDir();
    loadTokenizer(dir).save(out);
    assert.equal(readFileSync(join(out, 'tokenizer.json'), 'utf8'), json);
    assert.equal(readFileSync(join(out, 'tokenizer_config.json'), 'utf8'), config);
  });
});

describe('special tokens', () => {
  test('generation_config.json eos_token_id adds stop ids after the config eos_token', () => {
    const dir = dirWith(buildByteTokenizer());
    writeFileSync(join(dir, 'generation_config.json'), JSON.stringify({ eos_token_id: [258, 256], pad_token_id: 256 }));
    assert.deepEqual(loadTokenizer(dir).eosTokenIds, [258, 256]);
    writeFileSync(join(dir, 'generation_config.json'), JSON.stringify({ eos_token_id: 256 }));
    assert.deepEqual(loadTokenizer(dir).eosTokenIds, [258, 256]);
    writeFileSync(join(dir, 'generation_config.json'), JSON.stringify({ bos_token_id: 1 }));
    assert.deepEqual(loadTokenizer(dir).eosTokenIds, [258]);
  });

  test('pad falls back to the first eos; bos and AddedToken-style entries resolve', () => {
    const noPad = loadTokenizer(dirWith(buildByteTokenizer(), (c) => (c.pad_token = null)));
    assert.equal(noPad.padTokenId, 258);
    const objects = loadTokenizer(
      dirWith(buildByteTokenizer(), (c) => {
        c.bos_token = {
          __type: 'AddedToken',
          content: '<|endoftext|>',
          lstrip: false,
          normalized: false,
          rstrip: false,
          single_word: false,
        };
        c.eos_token = { content: '<|endoftext|>' };
      }),
    );
    assert.equal(objects.bosTokenId, 256);
    assert.deepEqual(objects.eosTokenIds, [256]);
  });

  test('bos_token and eos_token reach the template', () => {
    const dir = dirWith(buildByteTokenizer(), (c) => {
      c.bos_token = '<|endoftext|>';
      c.chat_template = '{{ bos_token }}{% for m in messages %}{{ m.content }}{{ eos_token }}{% endfor %}';
    });
    assert.equal(loadTokenizer(dir).applyChatTemplate([{ role: 'user', content: 'x' }]), '<|endoftext|>x<|im_end|>');
  });
});

describe('chat templates', () => {
  test('chat_template.jinja beside the config wins, and is saved again', () => {
    const dir = dirWith(buildByteTokenizer());
    writeFileSync(
      join(dir, 'chat_template.jinja'),
      '{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}',
    );
    const tok = loadTokenizer(dir);
    assert.equal(
      tok.applyChatTemplate([
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'yo' },
      ]),
      '[user] hi\n[assistant] yo\n',
    );
    const out = freshDir();
    tok.save(out);
    assert.equal(
      readFileSync(join(out, 'chat_template.jinja'), 'utf8'),
      readFileSync(join(dir, 'chat_template.jinja'), 'utf8'),
    );
  });

  test('a list of named templates uses "default"', () => {
    const dir = dirWith(
      buildByteTokenizer(),
      (c) =>
        (c.chat_template = [
          { name: 'tool_use', template: 'T' },
          { name: 'default', template: 'D{{ messages|length }}' },
        ]),
    );
    assert.equal(loadTokenizer(dir).applyChatTemplate([{ role: 'user', content: 'a' }]), 'D1');
  });

  test('no template: hasChatTemplate is false and applying names the directory', () => {
    const dir = dirWith(buildByteTokenizer(), (c) => delete c.chat_template);
    const tok = loadTokenizer(dir);
    assert.equal(tok.hasChatTemplate, false);
    assert.throws(
      () => tok.applyChatTemplate([{ role: 'user', content: 'hi' }]),
      (e: Error) => e instanceof TokenizerError && e.message.includes(dir) && /no chat template/.test(e.message),
    );
  });

  test('raise_exception in a template becomes a TokenizerError naming the config', () => {
    const dir = dirWith(
      buildByteTokenizer(),
      (c) =>
        (c.chat_template =
          "{% if messages[0].role != 'user' %}{{ raise_exception('first message must be from the user') }}{% endif %}ok"),
    );
    const tok = loadTokenizer(dir);
    assert.equal(tok.applyChatTemplate([{ role: 'user', content: 'a' }]), 'ok');
    assert.throws(
      () => tok.applyChatTemplate([{ role: 'assistant', content: 'a' }]),
      (e: Error) =>
        e instanceof TokenizerError &&
        e.message.includes(join(dir, 'tokenizer_config.json')) &&
        e.message.includes('first message must be from the user'),
    );
  });

  test('a template that does not parse names the config', () => {
    const dir = dirWith(buildByteTokenizer(), (c) => (c.chat_template = '{% for m in messages %}'));
    assert.throws(
      () => loadTokenizer(dir).applyChatTemplate([{ role: 'user', content: 'a' }]),
      (e: Error) => e.message.includes(join(dir, 'tokenizer_config.json')),
    );
  });
});

describe('errors name the path', () => {
  const expectError = (fn: () => unknown, ...parts: string[]): void =>
    assert.throws(
      fn,
      (e: Error) => e instanceof TokenizerError && parts.every((p) => e.message.includes(p)),
      `expected a TokenizerError mentioning ${parts.join(', ')}`,
    );

  test('missing directory, missing files', () => {
    const missing = join(root, 'does-not-exist');
    expectError(() => loadTokenizer(missing), missing, 'not found');
    const empty = freshDir();
    mkdirSync(empty);
    expectError(() => loadTokenizer(empty), join(empty, 'tokenizer.json'), 'not found');
    writeFileSync(join(empty, 'tokenizer.json'), JSON.stringify(buildByteTokenizer().tokenizerJson));
    expectError(() => loadTokenizer(empty), join(empty, 'tokenizer_config.json'), 'not found');
    const file = join(empty, 'tokenizer.json');
    expectError(() => loadTokenizer(file), file, 'not a directory');
  });

  test('malformed JSON in each file', () => {
    for (const f of ['tokenizer.json', 'tokenizer_config.json', 'generation_config.json']) {
      const dir = dirWith(buildByteTokenizer());
      writeFileSync(join(dir, f), '{"model": {');
      expectError(() => loadTokenizer(dir), join(dir, f), 'not valid JSON');
    }
    const dir = dirWith(buildByteTokenizer());
    writeFileSync(join(dir, 'tokenizer_config.json'), '[1, 2]');
    expectError(() => loadTokenizer(dir), join(dir, 'tokenizer_config.json'), 'JSON object');
  });

  test('well-formed JSON that is not a tokenizer', () => {
    const files = buildByteTokenizer();
    const noModel = freshDir();
    writeTokenizerFiles(noModel, {
      tokenizerJson: { ...files.tokenizerJson, model: undefined },
      tokenizerConfig: files.tokenizerConfig,
    });
    expectError(() => loadTokenizer(noModel), join(noModel, 'tokenizer.json'), '"model"');
    const badType = freshDir();
    writeTokenizerFiles(badType, {
      tokenizerJson: { ...files.tokenizerJson, pre_tokenizer: { type: 'Nonsense' } },
      tokenizerConfig: files.tokenizerConfig,
    });
    expectError(() => loadTokenizer(badType), join(badType, 'tokenizer.json'), 'Nonsense');
    const unknownEos = dirWith(files, (c) => (c.eos_token = '</s>'));
    expectError(() => loadTokenizer(unknownEos), join(unknownEos, 'tokenizer_config.json'), '"</s>"', 'vocabulary');
    const noStop = dirWith(files, (c) => {
      c.eos_token = null;
      c.pad_token = null;
    });
    expectError(() => loadTokenizer(noStop), noStop, 'no pad_token and no eos_token');
    const badGen = dirWith(files);
    writeFileSync(join(badGen, 'generation_config.json'), JSON.stringify({ eos_token_id: ['x'] }));
    expectError(() => loadTokenizer(badGen), join(badGen, 'generation_config.json'), 'eos_token_id');
  });
});
