/**
 * `# trinity-disable-next-line [TRN123 ...]` comments: the finding codes a comment silences on the line after it (no
 * codes: every finding there). The one rule the editor's diagnostics and `trinity-workbench check` both apply.
 */

const DISABLE_NEXT_LINE = /#\s*trinity-disable-next-line\b([^\n]*)/g;
const LINE_BREAK = /\r\n|\r|\n/g;

/** Whether a finding of `code` starting at `offset` of the text is silenced. */
export type Silenced = (offset: number, code: string) => boolean;

/** The silencing rule of `text`'s disable comments (lines counted at \n, \r\n and \r, as an editor counts them). */
export function disableComments(text: string): Silenced {
  const breaks = [...text.matchAll(LINE_BREAK)].map((m) => (m.index ?? 0) + m[0].length);
  const lineOf = (offset: number): number => {
    let lo = 0;
    let hi = breaks.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (breaks[mid] <= offset) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const silenced = new Map<number, Set<string>>();
  for (const m of text.matchAll(DISABLE_NEXT_LINE)) {
    const codes = new Set((m[1].match(/TRN\d{3}/gi) ?? []).map((c) => c.toUpperCase()));
    silenced.set(lineOf(m.index ?? 0) + 1, codes);
  }
  if (silenced.size === 0) return () => false;
  return (offset, code) => {
    const codes = silenced.get(lineOf(offset));
    return codes !== undefined && (codes.size === 0 || codes.has(code));
  };
}
