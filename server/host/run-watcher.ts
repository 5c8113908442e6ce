/**
 * The last run of each open config, read from its job directories (runtime/metrics, incrementally) and polled while
 * the document is open, so that run health and metric hovers follow a live run. I/O only: what the rows mean is the
 * service's business.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { MetricsReader } from '../../runtime/metrics/job-metrics';
import { readJobRunsNow } from '../../runtime/run-records';
import type { HealthPoint } from '../../runtime/config/runs/run-health';
import { tallyEpisodes, type EpisodeTally } from '../../runtime/config/runs/episode-tally';
import { rolloutLinesOnDisk } from '../../runtime/metrics/rollouts-jsonl';
import type { StageMetrics } from '../service/run-metrics';

export interface WatchedStage {
  run: number;
  /** Absolute. */
  jobDir: string;
}

interface StageState {
  stage: WatchedStage;
  reader: MetricsReader;
  series: Map<string, HealthPoint[]>;
  episodes: EpisodeTally[];
  /** monitor/rollouts.jsonl's size when its episodes were last counted (-1: never). */
  rolloutsSize: number;
}

interface Watched {
  /** The run's own job dir (its records in state/), absolute. */
  runDir: string;
  stages: StageState[];
  runIds: string;
  live: boolean;
  key: string;
}

const POLL_MS = 2000;

/**
 * The runs of a job dir, read as the run board reads them: their run ids (a new run, one that has only taken the
 * job's lock so far included, changes them) and whether one is running.
 */
function records(runDir: string): { ids: string; live: boolean } {
  const found = readJobRunsNow(runDir);
  return { ids: found.map((r) => r.runId).join(','), live: found.some((r) => r.live) };
}

/** How many of the latest recorded steps run health counts episodes over (more than any rule's window). */
const EPISODE_STEPS = 50;

/** Recounts a stage's recorded episodes when its rollouts file changed size; true when it did. */
function readEpisodes(s: StageState): boolean {
  let size: number;
  try {
    size = statSync(join(s.stage.jobDir, 'monitor', 'rollouts.jsonl')).size;
  } catch {
    size = -1;
  }
  if (size === s.rolloutsSize) return false;
  s.rolloutsSize = size;
  s.episodes = rolloutLinesOnDisk(s.stage.jobDir, EPISODE_STEPS).flatMap((l) => tallyEpisodes(l.step, l.samples) ?? []);
  return true;
}

export class RunWatcher {
  private readonly docs = new Map<string, Watched>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    /** Called when a document's run changed (new rows, started or ended, or live: the clock moves the stall rule). */
    private readonly changed: (uri: string) => void,
    private readonly pollMs = POLL_MS,
  ) {}

  /** Follows the job dirs of a document's run (a no-op when they are the ones already followed). */
  track(uri: string, runDir: string, stages: readonly WatchedStage[]): void {
    const key = JSON.stringify([runDir, stages]);
    if (this.docs.get(uri)?.key === key) return;
    this.docs.set(uri, { runDir, key, runIds: '', live: false, stages: [] });
    this.refresh(uri, this.docs.get(uri)!);
    this.timer ??= setInterval(() => this.poll(), this.pollMs);
    this.timer.unref?.();
  }

  untrack(uri: string): void {
    this.docs.delete(uri);
    if (this.docs.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  /** What the service is given: the stages that have logged anything. */
  snapshot(uri: string): StageMetrics[] | undefined {
    const w = this.docs.get(uri);
    if (!w) return undefined;
    const readAt = Date.now() / 1000;
    const out = w.stages
      .filter((s) => s.series.size > 0)
      .map((s) => ({
        run: s.stage.run,
        jobDir: s.stage.jobDir,
        live: w.live,
        series: s.series,
        ...(s.episodes.length ? { episodes: s.episodes } : {}),
        readAt,
      }));
    return out.length ? out : undefined;
  }

  private poll(): void {
    for (const [uri, w] of this.docs) if (this.refresh(uri, w)) this.changed(uri);
  }

  /** Reads what is new; true when the document's run looks different. */
  private refresh(uri: string, w: Watched): boolean {
    const rec = records(w.runDir);
    let changed = rec.live !== w.live || w.live;
    if (rec.ids !== w.runIds || w.stages.length === 0) {
      // A new run in the same job dir (or the first look): start over.
      w.stages = JSON.parse(w.key)[1].map((stage: WatchedStage) => ({
        stage,
        reader: new MetricsReader([stage.jobDir]),
        series: new Map(),
        episodes: [],
        rolloutsSize: -1,
      }));
      w.runIds = rec.ids;
      changed = true;
    }
    w.live = rec.live;
    for (const s of w.stages) {
      let got = s.reader.read();
      if (got.purges.length) {
        // The run restarted from a checkpoint: what its abandoned timeline logged goes; read the stage afresh.
        s.reader = new MetricsReader([s.stage.jobDir]);
        s.series = new Map();
        got = s.reader.read();
        changed = true;
      }
      const { rows } = got;
      for (const r of rows) {
        let ps = s.series.get(r.tag);
        if (!ps) s.series.set(r.tag, (ps = []));
        ps.push({ step: r.step, value: r.value, wallTime: r.wallTime });
      }
      if (rows.length) {
        changed = true;
        for (const ps of s.series.values())
          if (ps.some((p, i) => i > 0 && ps[i - 1].step > p.step)) ps.sort((a, b) => a.step - b.step);
      }
    }
    for (const s of w.stages) if (readEpisodes(s)) changed = true;
    void uri;
    return changed;
  }

  dispose(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.docs.clear();
  }
}
