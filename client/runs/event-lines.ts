/**
 * The runtime's stdout as events: splits a byte stream into lines and each line into a `RuntimeEvent`. A line that
 * is not an event (a plugin's `console.log`, a library's banner) is reported to the caller, never fatal.
 */
import type { RuntimeEvent } from '../../runtime/protocol';

export type ParsedLine = { event: RuntimeEvent } | { notEvent: string };

const KNOWN = new Set<RuntimeEvent['type']>([
  'run',
  'stage',
  'progress',
  'metrics',
  'rollouts',
  'log',
  'checkpoint',
  'done',
]);

/** One stdout line. Event types this client does not know yet are dropped silently (newer runtimes add some). */
export function parseEventLine(line: string): ParsedLine | undefined {
  const text = line.trim();
  if (!text) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { notEvent: line };
  }
  if (
    !value ||
    typeof value !== 'object' ||
    Array.isArray(value) ||
    typeof (value as { type?: unknown }).type !== 'string'
  )
    return { notEvent: line };
  const type = (value as { type: string }).type;
  if (!KNOWN.has(type as RuntimeEvent['type'])) return undefined;
  return { event: value as RuntimeEvent };
}

/** Calls `onLine` for every complete line of a stream delivered in chunks; `flush` hands over an unterminated tail. */
export class LineSplitter {
  private tail = '';
  constructor(private readonly onLine: (line: string) => void) {}

  push(chunk: string): void {
    const parts = (this.tail + chunk).split('\n');
    this.tail = parts.pop() ?? '';
    for (const p of parts) this.onLine(p.endsWith('\r') ? p.slice(0, -1) : p);
  }

  flush(): void {
    if (this.tail) this.onLine(this.tail);
    this.tail = '';
  }
}
