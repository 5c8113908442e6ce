/** What the e2e tests share besides code-server itself: polling for a state, a dashboard's points, the tiny model they run. */
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';

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

/** Points the dashboard webview draws for `tag` (the most of any of its datasets), or 0 when no panel shows it. */
export async function dashboardPoints(page: Page, tag: string): Promise<number> {
  let most = 0;
  for (const frame of page.frames()) {
    const n = await frame
      .evaluate((t) => {
        const charts = (
          globalThis as unknown as {
            __charts?: Map<string, { data: { datasets: { data: unknown[]; allPoints?: unknown[] }[] } }>;
          }
        ).__charts;
        const chart = charts?.get(t);
        return chart ? Math.max(0, ...chart.data.datasets.map((d) => (d.allPoints ?? d.data).length)) : 0;
      }, tag)
      .catch(() => 0);
    most = Math.max(most, n);
  }
  return most;
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
