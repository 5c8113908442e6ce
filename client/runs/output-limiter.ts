/**
 * Keeps a run's output channel readable and the editor responsive when a runtime prints thousands of lines a
 * second. Two sources share the channel, each with its own budget of `perSecond` lines in each one-second window:
 * the runtime's own messages (its `log` events, the workbench's lines) and its raw output (stderr, stray stdout).
 * Raw lines arrive at once and events after their batch, so with one budget a flood of stderr would use up every
 * second before the runtime's messages got there. What a budget leaves out is counted and summed up in one line per
 * source when the window closes. Pure: the clock and the writer are given.
 */
export interface OutputLimiterOptions {
  write(line: string): void;
  perSecond?: number;
  now?: () => number;
}

/** Where a line comes from: the runtime's structured messages, or its raw output. */
export type OutputSource = 'messages' | 'output';

const SOURCE_WORDS: Record<OutputSource, string> = {
  messages: "of the runtime's messages",
  output: "of the runtime's output (stderr)",
};

export class OutputLimiter {
  private windowStart = 0;
  private readonly shown: Record<OutputSource, number> = { messages: 0, output: 0 };
  private readonly dropped: Record<OutputSource, number> = { messages: 0, output: 0 };
  private readonly perSecond: number;
  private readonly now: () => number;

  constructor(private readonly opts: OutputLimiterOptions) {
    this.perSecond = opts.perSecond ?? 200;
    this.now = opts.now ?? Date.now;
  }

  line(text: string, source: OutputSource): void {
    const t = this.now();
    if (t - this.windowStart >= 1000) {
      this.flush();
      this.windowStart = t;
      this.shown.messages = this.shown.output = 0;
    }
    if (this.shown[source] < this.perSecond) {
      this.shown[source]++;
      this.opts.write(text);
    } else this.dropped[source]++;
  }

  /** Writes the count of what was left out, if anything (the window closed, or the run ended). */
  flush(): void {
    for (const source of ['messages', 'output'] as const) {
      const n = this.dropped[source];
      if (!n) continue;
      this.opts.write(
        `[workbench] … ${n} more line${n === 1 ? '' : 's'} ${SOURCE_WORDS[source]} in that second not shown (more than ${this.perSecond} a second)`,
      );
      this.dropped[source] = 0;
    }
  }
}
