/**
 * What the compare panel calls each run (its legend, the series' labels, the run filter, the header): the run's
 * title where it has one, otherwise its job folder's name; two runs that would read the same are told apart by their
 * job folders. Pure.
 */
export interface NamedRun {
  key: string;
  title: string;
  jobDir: string;
}

/** The last `segments` of a job directory (`/ckpt/proj/grpo-lr1e-6/` -> `grpo-lr1e-6`, or `proj/grpo-lr1e-6`). */
export function jobFolderName(jobDir: string, segments = 1): string {
  return jobDir
    .split(/[\\/]+/)
    .filter(Boolean)
    .slice(-segments)
    .join('/');
}

/** Each run's name, by key, in the runs' order. */
export function runNames(runs: readonly NamedRun[]): Map<string, string> {
  const base = runs.map((r) => r.title.trim() || jobFolderName(r.jobDir) || r.key);
  const count = new Map<string, number>();
  for (const b of base) count.set(b, (count.get(b) ?? 0) + 1);
  const out = new Map<string, string>();
  runs.forEach((r, i) => {
    let name = base[i];
    // Trinity's job folders are <checkpoint_root_dir>/<project>/<name>: the project tells alike names apart.
    if (count.get(name)! > 1) name = `${name} (${jobFolderName(r.jobDir, 2) || `#${i + 1}`})`;
    out.set(r.key, name);
  });
  return out;
}

/** The compare panel's header: the runs by name (the count is shown beside it, once). */
export function compareHeading(names: readonly string[]): { title: string; status: string } {
  return { title: `Compare: ${names.join(', ')}`, status: `${names.length} runs` };
}
