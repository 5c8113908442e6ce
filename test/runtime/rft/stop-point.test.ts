/**
 * A stop point fits its thread (runtime/rft/stop-point.ts): in the main thread, where the SIGTERM handler runs, it
 * yields a macrotask before it asks (so a handler waiting in the event loop runs first); in a real worker thread it
 * reads the shared stop flag at once, without yielding, and sees the main thread set it.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { flagStopPoint, sharedStopFlag, StepAbandoned, type StopPoint } from '../../../runtime/rft/stop-point';

/** What came first: the stop point's answer, or a macrotask queued just before it was called. */
async function order(stop: StopPoint): Promise<string[]> {
  const seen: string[] = [];
  setImmediate(() => seen.push('macrotask'));
  await stop().then(
    () => seen.push('went on'),
    (e: unknown) => seen.push(e instanceof StepAbandoned ? 'abandoned' : String(e)),
  );
  await new Promise((r) => setImmediate(r));
  return seen;
}

test('main thread: the flag’s stop point yields to the event loop first, so the abort handler it waits on runs', async () => {
  const ctl = new AbortController();
  const flag = sharedStopFlag(ctl.signal);
  assert.deepEqual(await order(flagStopPoint(flag)), ['macrotask', 'went on']);
  // The signal's abort (as the SIGTERM handler does) lands in a macrotask queued before the stop point: it is seen.
  setImmediate(() => ctl.abort());
  await assert.rejects(flagStopPoint(flag)(), StepAbandoned);
});

test('worker thread: the flag’s stop point answers before any macrotask, and sees the main thread set the flag', async () => {
  const ctl = new AbortController();
  const flag = sharedStopFlag(ctl.signal);
  const source = `
    const { parentPort, workerData } = require('node:worker_threads');
    const { flagStopPoint, StepAbandoned } = require(workerData.module);
    const stop = flagStopPoint(workerData.flag);
    async function order() {
      const seen = [];
      setImmediate(() => seen.push('macrotask'));
      await stop().then(() => seen.push('went on'), (e) => seen.push(e instanceof StepAbandoned ? 'abandoned' : String(e)));
      await new Promise((r) => setImmediate(r));
      return seen;
    }
    parentPort.on('message', async () => parentPort.postMessage(await order()));
  `;
  const worker = new Worker(source, {
    eval: true,
    execArgv: ['--require', require.resolve('tsx/cjs')],
    workerData: { module: join(__dirname, '../../../runtime/rft/stop-point.ts'), flag },
  });
  try {
    const ask = (): Promise<string[]> =>
      new Promise((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
        worker.postMessage('go');
      });
    assert.deepEqual(await ask(), ['went on', 'macrotask']);
    ctl.abort();
    assert.deepEqual(await ask(), ['abandoned', 'macrotask']);
  } finally {
    await worker.terminate();
  }
});
