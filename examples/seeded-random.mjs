// mulberry32: a small deterministic generator, so the examples' data files are the same on every machine.
export function seededRandom(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Writes rows as JSON Lines. */
export function jsonLines(rows) {
  return rows.map((r) => JSON.stringify(r)).join('\n') + '\n';
}
