/** A LaunchSink that records what a launcher reports, and waits for events. */
import type { LaunchSink } from '../../client/runs/launchers/launcher';
import type { RuntimeEvent } from '../../runtime/protocol';
import { alive } from './process';

export { alive };

export class RecordingSink implements LaunchSink {
  readonly events: RuntimeEvent[] = [];
  readonly lines: string[] = [];
  readonly warnings: string[] = [];
  private waiters: (() => void)[] = [];

  event(e: RuntimeEvent): void {
    this.events.push(e);
    this.wake();
  }
  output(line: string): void {
    this.lines.push(line);
    this.wake();
  }
  warn(message: string): void {
    this.warnings.push(message);
  }

  of<T extends RuntimeEvent['type']>(type: T): Extract<RuntimeEvent, { type: T }>[] {
    return this.events.filter((e): e is Extract<RuntimeEvent, { type: T }> => e.type === type);
  }

  /** Resolves once `ok()` holds (checked on every event and line), or rejects after `ms`. */
  async until(ok: () => boolean, ms = 15000, what = 'the condition'): Promise<void> {
    const deadline = Date.now() + ms;
    while (!ok()) {
      if (Date.now() > deadline)
        throw new Error(
          `timed out waiting for ${what}; events: ${JSON.stringify(this.events.map((e) => e.type))}; last lines: ${this.lines.slice(-5).join(' | ')}`,
        );
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 100);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }
}

/** Whether a process exists (signal 0). */
