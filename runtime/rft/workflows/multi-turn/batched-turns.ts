/**
 * Turns of concurrent episodes as one engine call (as vLLM batches the concurrent requests of Trinity's workflow
 * runners): every episode asks for its next turn through a sampler this scheduler opens, the requests that arrive
 * while the engine is busy or in the same tick wait together, and each batch of them (grouped by sampling
 * arguments) is one `generateContinued` call. With `reuseCache` each episode keeps the KV cache of what it has fed
 * between its turns, so a turn prefills only the template and environment tokens after the last one; the cache is
 * freed when the episode closes.
 *
 * Each episode draws one seed from the rollout model when it opens (in opening order) and its turn k samples with
 * seed + k, so a run's seed fixes every episode's draws whatever episodes its turns are batched with.
 *
 * An episode opened with a deadline (its task's timeout) ends there: a turn it asks for after it, or one still
 * waiting or decoding at it, fails with the engine's GenerationStoppedError at the deadline, as Trinity's runner
 * stops waiting for a task past its timeout (scheduler.py `run_with_retry`: `asyncio.wait_for`). The episodes it was
 * batched with go on: the batch call in flight finishes for them and its row of the late episode is dropped. The
 * deadline is read again at every decode step, so one that comes closer while a turn waits or decodes (over-rollout's
 * cut) ends it there too; a batch whose every turn has failed stops decoding.
 */
import { generateContinued, type ContinuedRow, type RowCache } from '../../../engine/continued-generation';
import { GenerationStoppedError } from '../../../engine/sampling';
import type { RolloutArgs, RolloutModel } from '../../models/rollout-model';
import type { SampledTurn, TurnSampler } from './turn-sampler';
import type { StopPoint } from '../../stop-point';

interface Request {
  session: Session;
  context: readonly number[];
  args: RolloutArgs;
  resolve: (turn: SampledTurn) => void;
  reject: (e: unknown) => void;
  /** Set once the request was answered (or failed at its episode's deadline): later outcomes are dropped. */
  settled?: boolean;
  timer?: ReturnType<typeof setTimeout>;
  deadline?: () => number | null;
}

interface Session {
  seed: number;
  turns: number;
  cache: RowCache | null;
  closed: boolean;
}

export class TurnBatcher {
  private queue: Request[] = [];
  /** The turns of the batch being decoded now. */
  private decoding: readonly Request[] = [];
  private scheduled = false;
  private running = false;
  private readonly sessions = new Set<Session>();

  constructor(
    private readonly model: RolloutModel,
    /** `stop`: awaited before each engine call; what it throws (the run is stopping) fails that call's turns. */
    private readonly opts: { reuseCache: boolean; stop?: StopPoint } = { reuseCache: true },
  ) {}

  /** A sampler for one episode; `deadline` (a `performance.now()` time, read at each turn) ends it there. */
  open(deadline?: () => number | null): TurnSampler {
    const session: Session = { seed: this.model.nextSeed(), turns: 0, cache: null, closed: false };
    this.sessions.add(session);
    return {
      sampleTurn: (context, args) => {
        if (session.closed) return Promise.reject(new Error('the episode has ended'));
        const due = deadline?.() ?? null;
        if (due !== null && performance.now() >= due) return Promise.reject(pastDeadline());
        return new Promise<SampledTurn>((resolve, reject) => {
          const request: Request = { session, context, args, resolve, reject, deadline };
          if (due !== null) request.timer = setTimeout(() => this.expire(request), due - performance.now());
          this.queue.push(request);
          this.schedule();
        });
      },
      close: () => this.closeSession(session),
    };
  }

  /** Frees every cache still held (episodes that never closed). */
  dispose(): void {
    for (const s of [...this.sessions]) this.closeSession(s);
  }

  /** The episode's deadline came while its turn waited or decoded: it fails now, and leaves the queue. */
  private expire(r: Request): void {
    if (r.settled) return;
    r.settled = true;
    this.queue = this.queue.filter((q) => q !== r);
    r.reject(pastDeadline());
  }

  /** Fails every turn, waiting or decoding, whose episode's deadline has come (it may have come closer). */
  private expireDue(requests: readonly Request[] = [...this.queue, ...this.decoding]): void {
    for (const r of requests) {
      const due = r.deadline?.() ?? null;
      if (due !== null && performance.now() >= due) this.expire(r);
    }
  }

  private closeSession(s: Session): void {
    s.closed = true;
    s.cache?.dispose();
    s.cache = null;
    this.sessions.delete(s);
  }

  /** The next batch starts once the current tick's requests are in (and the engine is free). */
  private schedule(): void {
    if (this.scheduled || this.running) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    if (this.running || this.queue.length === 0) return;
    this.running = true;
    const batch = this.queue;
    this.queue = [];
    try {
      for (const group of groupByArgs(batch)) await this.runGroup(group);
    } finally {
      this.running = false;
      if (this.queue.length > 0) this.schedule();
    }
  }

  private async runGroup(asked: readonly Request[]): Promise<void> {
    // A turn whose episode's deadline passed while earlier groups ran is not computed.
    this.expireDue(asked);
    const group = asked.filter((r) => !r.settled);
    if (group.length === 0) return;
    const model = this.model;
    const rows: ContinuedRow[] = group.map((r) => {
      const cache = r.session.cache;
      r.session.cache = null;
      return {
        context: r.context,
        cache: this.opts.reuseCache ? cache : (cache?.dispose(), null),
        maxNewTokens: r.args.max_tokens ?? model.limits.maxResponseTokens,
        seed: r.session.seed + r.session.turns++,
      };
    });
    let results;
    const sampling = model.samplingParams(group[0].args);
    const stop = sampling.shouldStop;
    try {
      await this.opts.stop?.();
      this.decoding = group;
      results = await generateContinued(
        model.model,
        rows,
        {
          ...sampling,
          // Asked once per decode step: turns whose deadline came fail now; with none left, the batch stops.
          shouldStop: () => {
            this.expireDue();
            return (stop?.() ?? false) || group.every((r) => r.settled);
          },
        },
        model.decodeResponse,
      );
    } catch (e) {
      for (const r of rows) r.cache?.dispose();
      for (const r of group) settle(r, () => r.reject(e));
      return;
    } finally {
      this.decoding = [];
    }
    results.forEach(({ completion: c, cache }, i) => {
      const r = group[i];
      if (r.settled || r.session.closed || !this.opts.reuseCache) cache?.dispose();
      else r.session.cache = cache;
      settle(r, () =>
        r.resolve({ ids: c.tokens, logprobs: c.logprobs, text: c.text ?? '', finishReason: c.finishReason }),
      );
    });
  }
}

/** Answers a request unless its deadline already failed it. */
function settle(r: Request, answer: () => void): void {
  clearTimeout(r.timer);
  if (r.settled) return;
  r.settled = true;
  answer();
}

function pastDeadline(): GenerationStoppedError {
  return new GenerationStoppedError("the episode's task ran past its timeout");
}

/** Requests with the same sampling arguments (all but max_tokens, which is each row's), in arrival order. */
function groupByArgs(batch: readonly Request[]): Request[][] {
  const groups = new Map<string, Request[]>();
  for (const r of batch) {
    const { max_tokens: _, n: __, ...rest } = r.args;
    const key = JSON.stringify(Object.entries(rest).sort(([a], [b]) => a.localeCompare(b)));
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  return [...groups.values()];
}
