/**
 * Whether a YAML file is a Trinity config, for files not named `*.trinity.yaml`: a `# trinity-version:` comment,
 * or a top level with at least three of Trinity's root sections (the same rule the corpus of real configs uses).
 * Cheap: reads only the start of the text, never parses it.
 */
// Trinity's root sections, and those only Trinity configs have (one must be among the keys, so `mode:`/`project:`/
// `model:` alone do not match). JSON, so that the test set-up, which runs before any build, reads the same list.
import TRINITY_KEYS from './root-keys.json';

const ROOT_KEYS = new Set(TRINITY_KEYS.rootKeys);
const DISTINCTIVE = new Set(TRINITY_KEYS.distinctive);

export function looksLikeTrinityConfig(text: string, maxBytes = 64 * 1024): boolean {
  const head = text.length > maxBytes ? text.slice(0, maxBytes) : text;
  if (/^[ \t]*#[ \t]*trinity-version:/m.test(head)) return true;
  const found = new Set<string>();
  for (const m of head.matchAll(/^([A-Za-z_][\w]*)[ \t]*:/gm)) {
    if (ROOT_KEYS.has(m[1])) found.add(m[1]);
  }
  return found.size >= 3 && [...found].some((k) => DISTINCTIVE.has(k));
}
