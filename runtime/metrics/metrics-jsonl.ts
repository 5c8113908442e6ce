/**
 * The local runtime's `<job dir>/monitor/metrics.jsonl` read incrementally: one `{role, step, time, values}` line
 * per role and step (runtime/rft/monitor/run-monitor.ts), plus `wallTime` in lines written since it was added. Only
 * whole lines are read; a line still being written waits for the next call. A line that is not such an object is
 * reported with its byte offset and skipped. A line with `"restart": true` says the role restarted at its step:
 * its points at that step or later, from earlier lines, are dropped (restarts.ts).
 */
import { closeSync, openSync } from 'node:fs';
import { readAt } from './read-at';
import { ReadBatch } from './restarts';
import type { MetricsRead } from './types';

export class MetricsJsonlReader {
  private offset: number;

  /** `prefix`: put before each role to make the run name (a stage folder, `sft/`), empty for a plain job. */
  constructor(
    readonly path: string,
    readonly prefix = '',
    from = 0,
  ) {
    this.offset = from;
  }

  get position(): number {
    return this.offset;
  }

  read(): MetricsRead {
    const out = new ReadBatch();
    const text = this.readNewBytes();
    let start = 0;
    for (;;) {
      const nl = text.indexOf(0x0a, start);
      if (nl < 0) break;
      const at = this.offset + start;
      const line = Buffer.from(text.buffer, text.byteOffset + start, nl - start)
        .toString('utf8')
        .trim();
      start = nl + 1;
      if (!line) continue;
      const problem = (why: string) =>
        out.problems.push({
          file: this.path,
          offset: at,
          message: `${this.path}: the line at byte ${at} ${why}; skipped`,
        });
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        problem('is not JSON');
        continue;
      }
      const r = parsed as { role?: unknown; step?: unknown; wallTime?: unknown; values?: unknown; restart?: unknown };
      if (
        typeof r !== 'object' ||
        r === null ||
        typeof r.role !== 'string' ||
        typeof r.step !== 'number' ||
        typeof r.values !== 'object' ||
        r.values === null
      ) {
        problem('is not a {role, step, time, values} object');
        continue;
      }
      if (r.restart === true) out.purge({ run: this.prefix + r.role, fromStep: r.step });
      const wallTime = typeof r.wallTime === 'number' ? r.wallTime : null;
      for (const [tag, value] of Object.entries(r.values as Record<string, unknown>)) {
        if (typeof value === 'number') out.add({ run: this.prefix + r.role, tag, step: r.step, wallTime, value });
      }
    }
    this.offset += start;
    return out.result();
  }

  private readNewBytes(): Uint8Array {
    const fd = openSync(this.path, 'r');
    try {
      return readAt(fd, this.offset);
    } finally {
      closeSync(fd);
    }
  }
}
