/**
 * The explorer's concurrent `chat`/`generate` calls as one engine call, as vLLM batches the concurrent requests of
 * Trinity's workflow runners (trinity/explorer/scheduler.py runs `engines × runner_per_model` runners, each calling
 * its engine). The calls that arrive while the engine is busy or together wait together; each group of them
 * with the same sampling arguments (all but the token limit and n, which are each call's) is one `generateBatch`,
 * its rows left-padded to the longest prompt, and each caller gets its own completions back.
 *
 * A call brings its seed (drawn when it was made), and its rows' generators fork from it as when it runs alone, so
 * its samples do not depend on what it is batched with (up to float32 rounding); a call alone in its batch runs
 * exactly as `generate`.
 *
 * Each call's completions go back as soon as its own rows are done (as vLLM answers each request), while the batch
 * decodes the others. A call with a deadline ends there: still waiting or decoding at its deadline, it fails with the
 * engine's GenerationStoppedError (checked at every decode step of the batch it waits behind or is in), while the
 * calls batched with it go on and its rows are no longer decoded. A call the engine cannot take (an empty prompt, no
 * room left in the model's positions) fails alone before its batch.
 */
import type { CausalLM } from '../../engine/lm/transformer';
import {
  generateBatch,
  GenerationStoppedError,
  promptProblem,
  type BatchCall,
  type Completion,
  type SharedSampling,
} from '../../engine/sampling';
import { timed } from '../monitor/phase-times';

/** Microtask rounds a batch waits for the calls made together (a run reaches its call within a few). */
const GATHER_ROUNDS = 32;

/** A `performance.now()` time or null (none), read at every check: it may come closer while a call waits. */
export type Deadline = () => number | null;

export interface SampleCall extends BatchCall {
  /** Everything but the deadline, which is the call's own. */
  sampling: Omit<SharedSampling, 'shouldStop'>;
  deadline: Deadline;
}

interface Pending {
  call: SampleCall;
  resolve: (completions: Completion[]) => void;
  reject: (e: unknown) => void;
  /** Answered, or failed at its deadline: later outcomes are dropped. */
  settled: boolean;
}

export class SampleBatcher {
  private queue: Pending[] = [];
  /** The calls of the batch being run now, group after group. */
  private flushing: Pending[] = [];
  private scheduled = false;
  private busy = false;

  constructor(
    private readonly model: CausalLM,
    private readonly decode: (ids: number[]) => string,
    /** The run is stopping: the batch being decoded ends, every call in it failing with GenerationStoppedError. */
    private readonly stopping: () => boolean = () => false,
  ) {}

  submit(call: SampleCall): Promise<Completion[]> {
    return new Promise((resolve, reject) => {
      const problem = call.prompts.map((p) => promptProblem(this.model, p, call.maxNewTokens)).find(Boolean);
      if (problem) return reject(new Error(`generate: ${problem}`));
      if (pastDeadline(call)) return reject(stoppedAtDeadline());
      if (call.n === 0 || call.prompts.length === 0) return resolve([]);
      this.queue.push({ call, resolve, reject, settled: false });
      this.schedule();
    });
  }

  /**
   * The next batch starts once the calls made together are in (and the engine is free): after GATHER_ROUNDS rounds
   * of the microtask queue, in which runs started together reach their calls, rather than at the next macrotask, so
   * an explorer taking turns with the trainer in one thread still runs its step before the trainer's next event (a
   * call made after a timer or I/O goes in the next batch).
   */
  private schedule(): void {
    if (this.scheduled || this.busy) return;
    this.scheduled = true;
    let round = 0;
    const wait = (): void => {
      if (++round < GATHER_ROUNDS) return queueMicrotask(wait);
      this.scheduled = false;
      void this.flush();
    };
    queueMicrotask(wait);
  }

  private async flush(): Promise<void> {
    if (this.busy || this.queue.length === 0) return;
    this.busy = true;
    this.flushing = this.queue;
    this.queue = [];
    try {
      for (const group of groupBySampling(this.flushing)) await this.runGroup(group);
    } finally {
      this.flushing = [];
      this.busy = false;
      if (this.queue.length > 0) this.schedule();
    }
  }

  private async runGroup(asked: readonly Pending[]): Promise<void> {
    // A call whose deadline passed while earlier groups ran is not computed.
    this.expireDue();
    const group = asked.filter((p) => !p.settled);
    if (group.length === 0) return;
    // Once the run is stopping, the calls still waiting are not computed (not even their prefill).
    if (this.stopping()) {
      const stopped = new GenerationStoppedError('generation stopped: the run is stopping');
      for (const p of group) settle(p, () => p.reject(stopped));
      return;
    }
    try {
      const out = await timed('explorer: sampling (generate)', () =>
        generateBatch(
          this.model,
          group.map((p) => p.call),
          {
            ...group[0].call.sampling,
            // Asked once per decode step: the calls whose deadline came fail now, and their rows stop; a run's stop
            // ends the whole batch.
            shouldStop: () => {
              this.expireDue();
              return this.stopping();
            },
          },
          this.decode,
          {
            left: (i) => group[i].settled,
            // A call's completions go back as soon as its rows are done, while the batch decodes the others.
            done: (i, completions) => settle(group[i], () => group[i].resolve(completions)),
          },
        ),
      );
      group.forEach((p, i) => settle(p, () => p.resolve(out[i])));
    } catch (e) {
      for (const p of group) settle(p, () => p.reject(e));
    }
  }

  /** Fails every call, waiting or decoding, whose deadline has come (its caller goes on at once). */
  private expireDue(): void {
    for (const p of [...this.flushing, ...this.queue])
      if (!p.settled && pastDeadline(p.call)) settle(p, () => p.reject(stoppedAtDeadline()));
    this.queue = this.queue.filter((p) => !p.settled);
  }
}

function settle(p: Pending, answer: () => void): void {
  if (p.settled) return;
  p.settled = true;
  answer();
}

function pastDeadline(call: SampleCall): boolean {
  const at = call.deadline();
  return at !== null && performance.now() >= at;
}

function stoppedAtDeadline(): GenerationStoppedError {
  return new GenerationStoppedError("generation stopped at its task's deadline");
}

/** Calls with the same shared sampling arguments, in arrival order. */
function groupBySampling(batch: readonly Pending[]): Pending[][] {
  const groups = new Map<string, Pending[]>();
  for (const p of batch) {
    const key = JSON.stringify(Object.entries(p.call.sampling).sort(([a], [b]) => a.localeCompare(b)));
    groups.set(key, [...(groups.get(key) ?? []), p]);
  }
  return [...groups.values()];
}
