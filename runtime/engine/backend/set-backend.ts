/**
 * `tf.setBackend` that says why it failed. tfjs only reports a failed backend factory through `console.warn`
 * ("Initialization of backend X failed" + the error) and resolves `false`; this collects those lines instead of
 * letting them reach the user's terminal, and turns them into a reason.
 */
import * as tf from '@tensorflow/tfjs-core';

export type SetBackendResult = { ok: true } | { ok: false; reason: string };

export async function trySetBackend(tfName: string): Promise<SetBackendResult> {
  if (tf.findBackendFactory(tfName) == null)
    return { ok: false, reason: `no \`${tfName}\` backend is registered with tfjs-core` };
  const warnings: string[] = [];
  const original = console.warn;
  console.warn = (...args: unknown[]) => {
    warnings.push(args.map((a) => (a instanceof Error ? a.message : String(a))).join(' '));
  };
  let ok: boolean;
  try {
    ok = await tf.setBackend(tfName);
  } catch (e) {
    return { ok: false, reason: firstLine(e instanceof Error ? e.message : String(e)) };
  } finally {
    console.warn = original;
  }
  if (ok && tf.getBackend() === tfName) return { ok: true };
  const detail = warnings
    .filter((w) => !/^Initialization of backend .* failed$/.test(w))
    .map(firstLine)
    .find((w) => w.length > 0);
  return { ok: false, reason: detail ?? `tf.setBackend('${tfName}') failed` };
}

/** The first line of a message (stack traces and banners are not reasons). */
export function firstLine(s: string): string {
  return s
    .trim()
    .split('\n')[0]
    .trim()
    .replace(/^Error: /, '');
}
