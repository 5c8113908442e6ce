/**
 * Chat-template rendering for SFT/DPO data, as transformers' `apply_chat_template` does it for Trinity's formatters:
 * whole message dicts (tool_calls, tool_call_id, name, non-string content...) and `tools` reach the template, and
 * the rendered text is tokenised without adding special tokens.
 *
 * TextTokenizer.applyChatTemplate passes only `role` and `content` and has no `tools`, so the template is rendered
 * here (with the same @huggingface/jinja and the same `bos_token` / `eos_token` strings). Its text is the given one
 * (format.chat_template / model.custom_chat_template), else the tokenizer's own, read back from `tokenizer.save()`
 * (the TextTokenizer API does not expose it).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TextTokenizer } from '../../engine/tokenizer';
import { findChatTemplate } from '../../engine/tokenizer/chat-template';
import { readTokenizerDir } from '../../engine/tokenizer/files';
import { JinjaTemplate } from '../../engine/tokenizer/hf-libs';
import { DataError } from '../../config/datasets/data-error';

/** A chat message as datasets hold them: `role` plus whatever else (content, tool_calls, tool_call_id, name...). */
export type Message = { role: string } & Record<string, unknown>;

export interface ChatRenderOptions {
  addGenerationPrompt: boolean;
  tools?: unknown[] | null;
  /** Passed as `enable_thinking` only when not null. */
  enableThinking?: boolean | null;
}

interface TokenizerTemplate {
  text: string | undefined;
  origin: string;
  bosToken: string | undefined;
  eosToken: string | undefined;
}

const tokenizerTemplates = new WeakMap<TextTokenizer, TokenizerTemplate>();

function tokenContent(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (v && typeof v === 'object' && typeof (v as { content?: unknown }).content === 'string')
    return (v as { content: string }).content;
  return undefined;
}

/** The tokenizer's chat template text and special-token strings (cached per tokenizer). */
function tokenizerTemplate(tokenizer: TextTokenizer): TokenizerTemplate {
  let t = tokenizerTemplates.get(tokenizer);
  if (!t) {
    const dir = mkdtempSync(join(tmpdir(), 'trinity-chat-template-'));
    try {
      tokenizer.save(dir);
      const docs = readTokenizerDir(dir);
      const found = findChatTemplate(docs);
      t = {
        text: found?.text,
        origin: found ? "the tokenizer's chat template" : 'the tokenizer',
        bosToken: tokenContent(docs.tokenizerConfig.value.bos_token),
        eosToken: tokenContent(docs.tokenizerConfig.value.eos_token),
      };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    tokenizerTemplates.set(tokenizer, t);
  }
  return t;
}

const compiled = new Map<string, JinjaTemplate>();

/**
 * @huggingface/jinja 0.5.x ignores the argument of `str.strip(chars)`, `lstrip(chars)` and `rstrip(chars)` and
 * strips whitespace, so Qwen3's `reasoning_content.strip('\n')` drops a leading space that Python keeps. The parsed
 * template's `x.strip(chars)` calls (one argument) are rewritten into calls of a Python-exact helper.
 */
const PY_STRIP = '__trinity_py_strip';

function pyStrip(value: unknown, chars: unknown, mode: unknown): string {
  if (typeof value !== 'string')
    throw new Error(`cannot ${String(mode)}strip a ${value === null ? 'none' : typeof value} value`);
  if (chars === null || chars === undefined)
    return mode === 'l' ? value.trimStart() : mode === 'r' ? value.trimEnd() : value.trim();
  const set = new Set(Array.from(String(chars)));
  const cps = Array.from(value);
  let a = 0;
  let b = cps.length;
  if (mode !== 'r') while (a < b && set.has(cps[a])) a++;
  if (mode !== 'l') while (b > a && set.has(cps[b - 1])) b--;
  return cps.slice(a, b).join('');
}

type Node = { type?: string } & Record<string, unknown>;

function patchStripCalls(node: unknown, seen = new Set<unknown>()): void {
  if (node === null || typeof node !== 'object' || seen.has(node)) return;
  seen.add(node);
  if (Array.isArray(node)) {
    for (const x of node) patchStripCalls(x, seen);
    return;
  }
  const n = node as Node;
  if (n.type === 'CallExpression') {
    const callee = n.callee as Node;
    const args = n.args as Node[];
    const prop = callee?.property as Node | undefined;
    const name = prop?.type === 'Identifier' ? String(prop.value) : '';
    if (
      callee?.type === 'MemberExpression' &&
      !callee.computed &&
      ['strip', 'lstrip', 'rstrip'].includes(name) &&
      args.length === 1 &&
      args[0].type !== 'KeywordArgumentExpression'
    ) {
      n.callee = { type: 'Identifier', value: PY_STRIP };
      n.args = [callee.object as Node, args[0], { type: 'StringLiteral', value: name === 'strip' ? '' : name[0] }];
    }
  }
  for (const v of Object.values(n)) patchStripCalls(v, seen);
}

function compile(text: string): JinjaTemplate {
  const tpl = new JinjaTemplate(text);
  patchStripCalls((tpl as unknown as { parsed: unknown }).parsed);
  return tpl;
}

export class ChatRenderer {
  readonly templateText: string;
  private readonly origin: string;
  private readonly special: { bosToken: string | undefined; eosToken: string | undefined };

  constructor(
    readonly tokenizer: TextTokenizer,
    chatTemplate?: string | null,
  ) {
    const own = tokenizerTemplate(tokenizer);
    const text = chatTemplate ?? own.text;
    if (text === undefined) {
      throw new DataError(
        'the tokenizer has no chat template and none is configured (format.chat_template / model.custom_chat_template)',
      );
    }
    this.templateText = text;
    this.origin = chatTemplate != null ? 'format.chat_template' : own.origin;
    this.special = { bosToken: own.bosToken, eosToken: own.eosToken };
  }

  render(messages: readonly Message[], opts: ChatRenderOptions): string {
    let tpl = compiled.get(this.templateText);
    if (!tpl) {
      try {
        tpl = compile(this.templateText);
      } catch (e) {
        throw new DataError(`${this.origin}: the chat template does not parse: ${(e as Error).message}`);
      }
      compiled.set(this.templateText, tpl);
    }
    const context: Record<string, unknown> = {
      messages,
      add_generation_prompt: opts.addGenerationPrompt,
      [PY_STRIP]: pyStrip,
    };
    if (opts.tools != null) context.tools = opts.tools;
    if (opts.enableThinking != null) context.enable_thinking = opts.enableThinking;
    if (this.special.bosToken !== undefined) context.bos_token = this.special.bosToken;
    if (this.special.eosToken !== undefined) context.eos_token = this.special.eosToken;
    try {
      return tpl.render(context);
    } catch (e) {
      throw new DataError(`${this.origin}: rendering the chat template failed: ${(e as Error).message}`);
    }
  }

  /** `apply_chat_template(..., tokenize=True)`: the rendered text's ids, no special tokens added. */
  tokenize(messages: readonly Message[], opts: ChatRenderOptions): number[] {
    return this.tokenizer.encode(this.render(messages, opts), { addSpecialTokens: false });
  }
}
