/**
 * Answer extraction and verification in the way `accuracy_reward` and `math_reward` use math_verify's
 * `parse`/`verify` (our own implementation of that behaviour, on top of math-equivalence.ts):
 *
 * `extractAnswers(text, config)` looks for answer candidates in priority groups, lowest first:
 *    boxed         the last `\boxed{...}` (priority 50 by default; accuracy_reward puts it first, at 0)
 *    50            right after "final answer ... is"
 *    100           within 50 characters after "answer:" (or after the last "=" within 100 characters)
 *    200           the same after "answer"
 *    300           anywhere (only when `withoutAnchor`): LaTeX `$..$`, `$$..$$`, `\(..\)`, `\[..\]`, a bare
 *                  `\frac{1}{2}`, and plain numbers (`1,234.5`, `-3`, `.5`, `$100`) / simple expressions (`3/4`)
 * Within a group the rightmost candidate is tried first. In `any_match` mode the first candidate that parses
 * wins; in `first_match` mode only the first candidate of the first group with candidates is tried. Like
 * math_verify's default `fallback_mode="first_match"`, the text of the first candidate tried is also returned as
 * a plain-string item.
 *
 * `verifyAnswers(gold, target)`: true when any pair matches — two parsed values by `mathValuesEqual`, two
 * strings by exact (trimmed, non-empty) equality; a value never equals a string.
 *
 * Known differences from math_verify: a trailing `%` is ignored instead of dividing by 100; LaTeX text that
 * latex2sympy would turn into symbols (e.g. `\text{Monday}`) stays a string.
 */

import { lastBoxedContent } from './boxed';
import { mathValuesEqual, normalizeAnswerLatex, parseMathAnswer, type MathValue } from './math-equivalence';

export type AnswerItem = { kind: 'value'; value: MathValue; text: string } | { kind: 'str'; text: string };

export interface ExtractionConfig {
  /** LaTeX extraction; `boxedPriority` < 0 disables boxed matching. */
  latex: { boxedPriority: number; withoutAnchor: boolean } | null;
  /** Plain number/expression extraction. */
  expr: { withoutAnchor: boolean } | null;
  mode: 'first_match' | 'any_match';
}

/** math_verify.parse's defaults (LatexExtractionConfig() + ExprExtractionConfig(), any_match). */
export const DEFAULT_EXTRACTION: ExtractionConfig = {
  latex: { boxedPriority: 50, withoutAnchor: true },
  expr: { withoutAnchor: true },
  mode: 'any_match',
};

/** What accuracy_reward uses for the response: LaTeX only, boxed first, no unanchored LaTeX, first_match. */
export const RESPONSE_EXTRACTION: ExtractionConfig = {
  latex: { boxedPriority: 0, withoutAnchor: false },
  expr: null,
  mode: 'first_match',
};

/** What accuracy_reward uses for the ground truth: LaTeXExtractionConfig() only, first_match. */
export const TRUTH_EXTRACTION: ExtractionConfig = {
  latex: { boxedPriority: 50, withoutAnchor: true },
  expr: null,
  mode: 'first_match',
};

interface Candidate {
  start: number;
  end: number;
  priority: number;
  source: 'latex' | 'expr';
  /** Text to parse. */
  text: string;
}

interface Span {
  start: number;
  end: number;
  text: string;
}

function allMatches(re: RegExp, text: string, group = 1): Span[] {
  const out: Span[] = [];
  re.lastIndex = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m[0].length === 0) {
      re.lastIndex++;
      continue;
    }
    out.push({ start: m.index, end: m.index + m[0].length, text: m[group] ?? m[0] });
  }
  return out;
}

function latexEnvs(text: string, plain: boolean): Span[] {
  const spans = [
    ...allMatches(/(?<!\\)\$\$([\s\S]+?)(?<!\\)\$\$/g, text),
    ...allMatches(/(?<!\\)\\\[([\s\S]+?)(?<!\\)\\\]/g, text),
    ...allMatches(/(?<![\\\d$])\$((?:\\\$|[^\n$])+?)(?<!\\)\$(?!\$)/g, text),
    ...allMatches(/(?<!\\)\\\(((?:[^\\\n]|\\(?!\)))+?)(?<!\\)\\\)/g, text),
  ];
  if (plain) spans.push(...allMatches(/(-?\\frac\{-?\d+(?:[.,]\d+)?\}\{-?\d+(?:[.,]\d+)?\})/g, text));
  return spans;
}

const NUMBER_RE =
  /(?:^|(?<=[\s=*]))[$€£¥₹]?(-?[1-9]\d{0,2}(?:[ ,]\d{3})+(?:\.\d+)?|-?\d+[.,]\d+|\.\d+|-?\d+)(?!\d)(?:\s*(?:%|[Pp]ercent(?:age)?|[Pp]ct))?/g;
const EXPR_RE = /(?:^|(?<=[\s=]))(-?\(?-?\d[\d.\s+\-*×/^()÷]*[+\-*×/^÷][\d.\s+\-*×/^()÷]*\d\)?)(?=[.,:\s)$]|$)/g;

function numberText(raw: string): string {
  // math_verify: thousands separators dropped, leading zeros dropped, decimal comma read as a point
  let m = /^(-?)([\d, ]+?)((?:[.,]\d+)?)$/.exec(raw);
  if (!m) return raw;
  const thousands = /^-?[1-9]\d{0,2}(?:[ ,]\d{3})+(?:\.\d+)?$/.test(raw);
  if (thousands) m = /^(-?)([\d, ]+)((?:\.\d+)?)$/.exec(raw) ?? m;
  const int = m[2].replace(/[, ]/g, '').replace(/^0+(?=\d)/, '');
  return `${m[1]}${int}${m[3].replace(',', '.')}`;
}

function exprCandidates(text: string): Span[] {
  const out: Span[] = [];
  for (const s of allMatches(EXPR_RE, text)) out.push({ ...s, text: s.text.trim() });
  NUMBER_RE.lastIndex = 0;
  for (let m = NUMBER_RE.exec(text); m; m = NUMBER_RE.exec(text)) {
    if (m[0].length === 0) {
      NUMBER_RE.lastIndex++;
      continue;
    }
    out.push({ start: m.index, end: m.index + m[0].length, text: numberText(m[1]) });
  }
  return out;
}

function anchoredGroups(text: string, all: Candidate[], priorityBase: number, out: Candidate[]): void {
  // "final answer ... is X"
  for (let m, re = /final answer.{0,100}?\s+is:?\s*/gis; (m = re.exec(text)); ) {
    const at = m.index + m[0].length;
    const c = all.find((x) => x.start >= at - 1 && x.start <= at + 1);
    if (c) out.push({ ...c, priority: 50 });
  }
  // "answer:" (100) and "answer" (200)
  for (let m, re = /answer(:?)/gi; (m = re.exec(text)); ) {
    const at = m.index + m[0].length;
    const priority = m[1] ? 100 : 200;
    const window = text.slice(at, at + 100);
    const eq = window.lastIndexOf('=');
    let c: Candidate | undefined;
    if (eq >= 0) {
      const after = at + eq + 1;
      c = all.find((x) => x.source === 'expr' && x.start >= after && text.slice(after, x.start).trim() === '');
    }
    c ??= all.filter((x) => x.start >= at && x.start <= at + 51).sort((a, b) => a.start - b.start)[0];
    if (c) out.push({ ...c, priority: priority + priorityBase });
  }
}

function parseCandidate(c: Candidate): AnswerItem | null {
  const value = parseMathAnswer(c.text);
  if (value.kind === 'text') return null;
  return { kind: 'value', value, text: c.text };
}

/** Finds the answer in `text` (see the module comment). Never throws. */
export function extractAnswers(text: string, config: ExtractionConfig = DEFAULT_EXTRACTION): AnswerItem[] {
  try {
    return extract(String(text ?? ''), config);
  } catch {
    return [];
  }
}

function extract(text: string, config: ExtractionConfig): AnswerItem[] {
  const base: Candidate[] = [];
  if (config.latex) {
    for (const s of latexEnvs(text, true)) {
      base.push({ start: s.start, end: s.end, priority: 300, source: 'latex', text: s.text });
    }
  }
  if (config.expr) {
    for (const s of exprCandidates(text))
      base.push({ start: s.start, end: s.end, priority: 300, source: 'expr', text: s.text });
  }
  const cands: Candidate[] = [];
  // unanchored
  for (const c of base) {
    if (c.source === 'latex' && config.latex?.withoutAnchor) cands.push(c);
    if (c.source === 'expr' && config.expr?.withoutAnchor) cands.push(c);
  }
  anchoredGroups(text, base, 0, cands);
  // boxed
  if (config.latex && config.latex.boxedPriority >= 0) {
    const content = lastBoxedContent(text);
    const first = text.search(/\\(?:boxed|fbox)\b/);
    if (content !== null && first >= 0) {
      const end = text.lastIndexOf(content) + content.length + 1;
      cands.push({ start: first, end, priority: config.latex.boxedPriority, source: 'latex', text: content });
    }
  }
  const priorities = [...new Set(cands.map((c) => c.priority))].sort((a, b) => a - b);
  const fallbacks: string[] = [];
  const failedLatex: Array<[number, number]> = [];
  let found: AnswerItem | null = null;
  let matched = false;
  for (const p of priorities) {
    const group = cands.filter((c) => c.priority === p).sort((a, b) => b.end - a.end || a.start - b.start);
    for (const c of group) {
      if (c.source === 'expr' && failedLatex.some(([lo, hi]) => c.start < hi && c.end > lo)) continue;
      matched = true;
      const item = parseCandidate(c);
      const fallback = c.source === 'latex' ? normalizeAnswerLatex(c.text) || c.text.trim() : c.text;
      if (fallback) fallbacks.push(fallback);
      if (item) {
        found = item;
        break;
      }
      if (c.source === 'latex') failedLatex.push([c.start, c.end]);
      if (config.mode === 'first_match') break;
    }
    if (found || (matched && config.mode === 'first_match')) break;
  }
  const out: AnswerItem[] = [];
  if (found) out.push(found);
  if (fallbacks.length > 0) out.push({ kind: 'str', text: fallbacks[0] });
  return out;
}

/** math_verify-style `verify`: any pair of items matches. */
export function verifyAnswers(gold: readonly AnswerItem[], target: readonly AnswerItem[]): boolean {
  for (const g of gold) {
    for (const t of target) {
      if (g.kind === 'value' && t.kind === 'value') {
        if (mathValuesEqual(g.value, t.value)) return true;
      } else if (g.kind === 'str' && t.kind === 'str') {
        const a = g.text.trim();
        const b = t.text.trim();
        if (a.length > 0 && a === b) return true;
      }
    }
  }
  return false;
}

/** Trinity's `simple_answer_parser`: the first single-line `<answer>...</answer>` (else the whole text), parsed. */
export function simpleAnswerParser(text: string): AnswerItem[] {
  const m = /<answer>(.*?)<\/answer>/.exec(text);
  return extractAnswers(m ? m[1] : text, DEFAULT_EXTRACTION);
}
