/**
 * Collects items and hands them over in one batch at most every `intervalMs` (a live run's metrics become at most
 * ~10 messages a second to the webview, however fast the run logs).
 */
export class Coalescer<T> {
  private items: T[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly flush: (items: T[]) => void,
    private readonly intervalMs = 100,
  ) {}

  push(...items: T[]): void {
    this.items.push(...items);
    this.timer ??= setTimeout(() => this.drain(), this.intervalMs);
  }

  /** Hands over what is pending now. */
  drain(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.items.length) return;
    const batch = this.items;
    this.items = [];
    this.flush(batch);
  }

  /** Drops what is pending. */
  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.items = [];
  }
}
