/**
 * Keeps a run's output channel readable and the editor responsive when a runtime prints thousands of lines a
 * second: up to `perSecond` lines go through in each one-second window, the rest are counted and summed up in one
 * line when the window closes. Pure: the clock and the writer are given.
 */
export interface OutputLimiterOptions {
  write(line: string): void;
  perSecond?: number;
  now?: () => number;
}

export class OutputLimiter {
  private windowStart = 0;
  private shown = 0;
  private dropped = 0;
  private readonly perSecond: number;
  private readonly now: () => number;

  constructor(private readonly opts: OutputLimiterOptions) {
    this.perSecond = opts.perSecond ?? 200;
    this.now = opts.now ?? Date.now;
  }

  line(text: string): void {
    const t = this.now();
    if (t - this.windowStart >= 1000) {
      this.flush();
      this.windowStart = t;
      this.shown = 0;
    }
    if (this.shown < this.perSecond) {
      this.shown++;
      this.opts.write(text);
    } else this.dropped++;
  }

  /** Writes the count of what was left out, if anything (the window closed, or the run ended). */
  flush(): void {
    if (!this.dropped) return;
    this.opts.write(
      `[workbench] … ${this.dropped} more line${this.dropped === 1 ? '' : 's'} in that second not shown (more than ${this.perSecond} a second)`,
    );
    this.dropped = 0;
  }
}
