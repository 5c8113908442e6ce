/** The compare panel's config diff: the flattened keys whose values are not the same in every run. Pure (no DOM). */

export interface ConfigDiffRow {
  key: string;
  /** One per run, in the runs' order; `undefined` where the run's config has no such key. */
  values: (string | undefined)[];
}

/**
 * Keys that differ between the runs' flattened configs (a key one run lacks differs), in the order they first
 * appear (the first run's config order, then keys only later runs have). Fewer than two runs: nothing differs.
 */
export function differingKeys(flats: readonly (readonly (readonly [string, string])[])[]): ConfigDiffRow[] {
  if (flats.length < 2) return [];
  const maps = flats.map((f) => new Map(f));
  const order: string[] = [];
  const seen = new Set<string>();
  for (const f of flats) {
    for (const [k] of f) {
      if (!seen.has(k)) {
        seen.add(k);
        order.push(k);
      }
    }
  }
  const rows: ConfigDiffRow[] = [];
  for (const key of order) {
    const values = maps.map((m) => m.get(key));
    if (values.some((v) => v !== values[0])) rows.push({ key, values });
  }
  return rows;
}
