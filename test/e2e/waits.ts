/** What the e2e tests share besides code-server itself: polling for a state, and the tiny model they run. */
import assert from 'node:assert/strict';

/** Polls `f` every 100 ms until it returns something truthy (returned), failing after `timeoutMs` naming `what`. */
export async function until<T>(
  what: string,
  f: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs: number,
): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() - t0 > timeoutMs) assert.fail(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * `trinity-workbench model create` arguments for the smallest Qwen2 model the arithmetic example trains (one layer,
 * hidden 32, a character vocabulary of its data), written to `out`: it trains in seconds on the CPU.
 */
export function tinyArithmeticModelArgs(out: string): string[] {
  return [
    'model',
    'create',
    '--arch',
    'qwen2',
    '--layers',
    '1',
    '--hidden',
    '32',
    '--heads',
    '4',
    '--kv-heads',
    '2',
    '--vocab',
    'char:0123456789+{}\\ \nabcdefghijklmnopqrstuvwxyz',
    '--out',
    out,
  ];
}
