/**
 * A run's output channel fed in batches. VS Code's extension host, for a channel that is shown, flushes its log file
 * and sends the window an update for every append (code-server 4.100.3's extensionHostProcess.js: the channel's write
 * ends in `flush()` and `$update(id, Append)` when visible), and the window then reads the file's new bytes. A
 * runtime flooding its output sent 400 of those a second (the output limiter's two budgets), each queued ahead of
 * the status bar's update on the same connection; here the lines of up to `everyMs` go as one append. Pure: the
 * writer and the timers are given.
 */
export interface BatchedLinesOptions {
  /** Appends text (whole lines, each ending in a line feed) to the channel. */
  append(text: string): void;
  /** The longest a line waits; default 100 ms. */
  everyMs?: number;
  setTimer?: (f: () => void, ms: number) => unknown;
  clearTimer?: (t: unknown) => void;
}

export class BatchedLines {
  private pending: string[] = [];
  private timer: unknown;

  constructor(private readonly opts: BatchedLinesOptions) {}

  line(text: string): void {
    this.pending.push(text);
    this.timer ??= (this.opts.setTimer ?? setTimeout)(() => this.flush(), this.opts.everyMs ?? 100);
  }

  /** Appends what is waiting now (the run ended, or the channel is about to go). */
  flush(): void {
    if (this.timer !== undefined) (this.opts.clearTimer ?? ((t) => clearTimeout(t as NodeJS.Timeout)))(this.timer);
    this.timer = undefined;
    if (this.pending.length === 0) return;
    const text = `${this.pending.join('\n')}\n`;
    this.pending = [];
    this.opts.append(text);
  }
}
