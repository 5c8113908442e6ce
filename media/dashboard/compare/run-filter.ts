/**
 * The compare panel's run filter, as TensorBoard's: a case-insensitive regular expression over run names. An
 * invalid expression filters nothing and says why (the box shows it), it never throws. Pure (no DOM).
 */

export interface RunFilter {
  valid: boolean;
  /** The RegExp engine's message when `valid` is false. */
  error?: string;
  match(name: string): boolean;
}

export function runFilter(text: string): RunFilter {
  const f = text.trim();
  if (!f) return { valid: true, match: () => true };
  try {
    const re = new RegExp(f, 'i');
    return { valid: true, match: (name) => re.test(name) };
  } catch (e) {
    return { valid: false, error: (e as Error).message, match: () => true };
  }
}

/**
 * A compared run's colour slot: the theme's chart colours in order, then the same colours dashed, then dotted, so
 * that a run keeps its look whatever the filter hides (the slot is its place in the panel, not among those shown).
 */
export function colourSlot(index: number, colours: number): { colour: number; dash: number[] } {
  const cycle = Math.floor(index / colours);
  const dashes = [[], [6, 3], [2, 2], [8, 3, 2, 3]];
  return { colour: index % colours, dash: dashes[cycle % dashes.length] };
}
