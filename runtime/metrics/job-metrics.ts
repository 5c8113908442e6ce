/**
 * Every scalar series under one or more paths, read incrementally: a job directory (`<job>/monitor/tensorboard/
 * <role>/events.out.tfevents.*` and `<job>/monitor/metrics.jsonl`; a staged job's `<job>/<stage>/monitor/…`), a
 * tensorboard directory, one role directory, or one file. Each `read()` finds files that appeared since the last
 * call and returns only rows not returned before.
 *
 * Run names: the event file's folder relative to the path given, without `monitor` and `tensorboard` segments
 * (`explorer`, `sft/trainer`), or the folder's own name when that leaves nothing; metrics.jsonl rows are named by
 * their `role` the same way. Where a monitor folder has both (the local runtime writes both), metrics.jsonl wins
 * for the roles it holds: the same numbers, in float64 rather than TensorBoard's float32.
 *
 * A restart (restarts.ts) drops the abandoned timeline's points: from this read's rows at once, and from earlier
 * reads' rows through the read's `purges`, which a caller holding rows applies before adding the new ones.
 */
import { readdirSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, sep } from 'node:path';
import { EventFileReader } from './event-file';
import { MetricsJsonlReader } from './metrics-jsonl';
import { RunRestarts, withoutPurged } from './restarts';
import type { MetricsProblem, MetricsRead } from './types';

export interface MetricsReaderOptions {
  /** Files already present at the first read are read only from their current end (what a new run appends). */
  skipExisting?: boolean;
}

interface EventSource {
  kind: 'events';
  reader: EventFileReader;
  /** The monitor folder above `tensorboard/<role>`, and the role, when the file sits in that layout. */
  monitorDir?: string;
  role?: string;
}

interface JsonlSource {
  kind: 'jsonl';
  reader: MetricsJsonlReader;
  roles: Set<string>;
}

const MAX_DEPTH = 8;

export class MetricsReader {
  private readonly events = new Map<string, EventSource>();
  private readonly jsonl = new Map<string, JsonlSource>();
  /** One per run of event files: its files are read in name order through it. */
  private readonly restarts = new Map<string, RunRestarts>();
  private first = true;

  constructor(
    readonly roots: readonly string[],
    private readonly options: MetricsReaderOptions = {},
  ) {}

  /** New rows from every file found under the roots. A root that does not exist (yet) gives nothing. */
  read(): MetricsRead {
    const out: MetricsRead = { rows: [], problems: [], purges: [] };
    this.discover(out.problems);
    // metrics.jsonl first, so that its roles are known before the event files of the same monitor folder.
    for (const src of this.jsonl.values()) {
      const got = this.guarded(src.reader.path, () => src.reader.read(), out.problems);
      for (const r of got.rows) src.roles.add(r.run.slice(src.reader.prefix.length));
      for (const p of got.purges) src.roles.add(p.run.slice(src.reader.prefix.length));
      add(out, got);
    }
    for (const src of this.events.values()) {
      if (src.monitorDir && src.role && this.jsonl.get(join(src.monitorDir, 'metrics.jsonl'))?.roles.has(src.role))
        continue;
      add(
        out,
        this.guarded(src.reader.path, () => src.reader.read(), out.problems),
      );
    }
    return out;
  }

  private guarded(file: string, read: () => MetricsRead, problems: MetricsProblem[]): MetricsRead {
    try {
      return read();
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      // A file removed between discovery and reading (a rotated or cleaned-up run) is not a problem.
      if (code !== 'ENOENT') problems.push({ file, message: `${file}: cannot read (${code ?? (e as Error).message})` });
      return { rows: [], problems: [], purges: [] };
    }
  }

  private discover(problems: MetricsProblem[]): void {
    const skip = this.first && this.options.skipExisting === true;
    this.first = false;
    for (const root of this.roots) {
      let st;
      try {
        st = statSync(root);
      } catch {
        continue;
      }
      if (st.isFile()) {
        if (!this.events.has(root) && !this.jsonl.has(root)) this.add(root, dirname(root), skip ? st.size : 0);
      } else if (st.isDirectory()) this.walk(root, 0, skip, problems);
    }
  }

  private walk(root: string, depth: number, skip: boolean, problems: MetricsProblem[], dir = root): void {
    let names: string[];
    try {
      names = readdirSync(dir).sort();
    } catch (e) {
      problems.push({
        file: dir,
        message: `${dir}: cannot list (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
      });
      return;
    }
    for (const name of names) {
      const p = join(dir, name);
      if (this.events.has(p) || this.jsonl.has(p)) continue;
      let st;
      try {
        st = statSync(p);
      } catch {
        continue;
      }
      if (st.isDirectory()) {
        // Checkpoints and dot folders hold no metrics and can be large.
        if (depth < MAX_DEPTH && !name.startsWith('.') && !name.startsWith('global_step_') && name !== 'node_modules')
          this.walk(root, depth + 1, skip, problems, p);
      } else if (st.isFile() && (name.includes('tfevents') || name === 'metrics.jsonl')) {
        this.add(p, root, skip ? st.size : 0);
      }
    }
  }

  private add(file: string, base: string, from: number): void {
    const segments = relative(base, dirname(file))
      .split(sep)
      .filter((s) => s && s !== '.');
    const named = segments.filter((s) => s !== 'monitor' && s !== 'tensorboard');
    if (basename(file) === 'metrics.jsonl' || file.endsWith('.jsonl')) {
      const prefix = named.length ? `${named.join('/')}/` : '';
      this.jsonl.set(file, { kind: 'jsonl', reader: new MetricsJsonlReader(file, prefix, from), roles: new Set() });
      return;
    }
    const run = named.length ? named.join('/') : basename(dirname(file));
    const parent = dirname(file);
    const inLayout = basename(dirname(parent)) === 'tensorboard';
    let restarts = this.restarts.get(run);
    if (!restarts) this.restarts.set(run, (restarts = new RunRestarts(run)));
    this.events.set(file, {
      kind: 'events',
      reader: new EventFileReader(file, run, from, restarts),
      ...(inLayout ? { monitorDir: dirname(dirname(parent)), role: basename(parent) } : {}),
    });
  }
}

/**
 * Adds one file's read to the whole read: its purges drop the whole read's rows so far (an earlier file of the run
 * read in this same call) and go on to the caller for rows of earlier calls.
 */
function add(out: MetricsRead, got: MetricsRead): void {
  if (got.purges.length) out.rows = withoutPurged(out.rows, got.purges);
  out.rows.push(...got.rows);
  out.problems.push(...got.problems);
  out.purges.push(...got.purges);
}

/** Reads every scalar under the paths once (what the CLI prints). */
export function readAllMetrics(paths: readonly string[]): MetricsRead {
  return new MetricsReader(paths).read();
}
