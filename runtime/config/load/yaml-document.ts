/**
 * YAML documents through the `yaml` library, refused before a hostile text can run the thread's stack out.
 *
 * The library's lexer recurses once per block indicator that opens a line (`- - - - x`), and its composer once per
 * level of nested collections (`[[[[…]]]]`). Thousands of levels overflow the stack: V8 mostly throws a RangeError
 * then, but an overflow that lands inside one of its native routines (the regular-expression compiler checks the
 * stack and aborts) ends the whole process — the language server, the extension host, a test process. So the nesting
 * is measured first, by a linear scan of the lines and an iterative walk of the library's CST (its parser keeps an
 * explicit stack), and a document deeper than MAX_NESTING is never composed.
 */
import {
  Composer,
  Parser,
  YAMLParseError,
  type CST,
  type Document,
  type DocumentOptions,
  type ParseOptions,
  type SchemaOptions,
} from 'yaml';

/** Deepest nesting of collections accepted. Real configs nest under ten levels; PyYAML's composer recurses too. */
export const MAX_NESTING = 200;

export type YamlOptions = ParseOptions & DocumentOptions & SchemaOptions;

/** The error a refused document carries (its code is `RESOURCE_EXHAUSTION`). */
export const TOO_DEEP_MESSAGE = `YAML nests deeper than ${MAX_NESTING} levels; refusing to load.`;

/**
 * The first document of `text`, as `parseDocument` composes it (a second one is a MULTIPLE_DOCS error; errors are not
 * prettified), or, where `text` nests deeper than MAX_NESTING, an empty document whose one error says so.
 */
export function parseYamlDocument(text: string, options: YamlOptions = {}): Document.Parsed {
  const chainAt = indicatorChainOverLimit(text);
  if (chainAt !== undefined) return refused(options, chainAt);
  const tokens = Array.from(new Parser().parse(text));
  const deepAt = collectionOverLimit(tokens);
  if (deepAt !== undefined) return refused(options, deepAt);
  let doc: Document.Parsed | undefined;
  for (const next of new Composer(options).compose(tokens, true, text.length)) {
    if (!doc) {
      doc = next;
      continue;
    }
    const [start, end] = next.range;
    doc.errors.push(new YAMLParseError([start, end], 'MULTIPLE_DOCS', 'Source contains multiple documents'));
    break;
  }
  // compose(…, forceDoc = true) ends on a document even for an empty text.
  return doc as Document.Parsed;
}

function refused(options: YamlOptions, offset: number): Document.Parsed {
  const [empty] = Array.from(new Composer(options).compose([], true, 0));
  empty.errors.push(new YAMLParseError([offset, offset + 1], 'RESOURCE_EXHAUSTION', TOO_DEEP_MESSAGE));
  return empty;
}

/**
 * Where a line first opens more than MAX_NESTING collections by block indicators (`-`, `?` or `:` each followed by a
 * blank or the line's end), the offset of the indicator past the limit.
 */
function indicatorChainOverLimit(text: string): number | undefined {
  let i = 0;
  while (i < text.length) {
    let run = 0;
    for (;;) {
      while (text[i] === ' ' || text[i] === '\t') i++;
      const c = text[i];
      const after = text[i + 1];
      const blankAfter = after === undefined || after === ' ' || after === '\t' || after === '\n' || after === '\r';
      if ((c !== '-' && c !== '?' && c !== ':') || !blankAfter) break;
      if (++run > MAX_NESTING) return i;
      i++;
    }
    const eol = text.indexOf('\n', i);
    if (eol < 0) break;
    i = eol + 1;
  }
  return undefined;
}

/** The offset of the first collection nested deeper than MAX_NESTING in the CST, walked without recursion. */
function collectionOverLimit(tokens: readonly CST.Token[]): number | undefined {
  const pending: [CST.Token, number][] = tokens.map((t) => [t, 0]);
  while (pending.length) {
    const [token, depth] = pending.pop() as [CST.Token, number];
    if (token.type === 'document') {
      if (token.value) pending.push([token.value, depth]);
      continue;
    }
    if (token.type !== 'block-map' && token.type !== 'block-seq' && token.type !== 'flow-collection') continue;
    if (depth + 1 > MAX_NESTING) return token.offset;
    for (const item of token.items as CST.CollectionItem[]) {
      if (item.key) pending.push([item.key, depth + 1]);
      if (item.value) pending.push([item.value, depth + 1]);
    }
  }
  return undefined;
}
