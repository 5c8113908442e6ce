/**
 * The run output channel's batches (client/runs/batched-lines.ts) with real timers: a burst of lines reaches the
 * channel as one append, in order, whole lines each ending in a line feed, within the wait; flush appends at once and
 * only what waits; a line after a flush waits for a batch of its own.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BatchedLines } from '../../client/runs/batched-lines';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('a burst of 1000 lines is one append within the wait; flush appends what waits, at once', async () => {
  const appends: { at: number; text: string }[] = [];
  const lines = new BatchedLines({ append: (text) => appends.push({ at: Date.now(), text }), everyMs: 50 });
  const t0 = Date.now();
  for (let i = 0; i < 1000; i++) lines.line(`line ${i}`);
  assert.equal(appends.length, 0, 'nothing is appended line by line');
  await sleep(400);
  assert.equal(appends.length, 1);
  assert.equal(appends[0].text, `${Array.from({ length: 1000 }, (_, i) => `line ${i}`).join('\n')}\n`);
  assert.ok(appends[0].at - t0 >= 45, `appended after ${appends[0].at - t0} ms`);

  lines.line('last words');
  lines.flush();
  assert.equal(appends.length, 2);
  assert.equal(appends[1].text, 'last words\n');
  lines.flush();
  await sleep(120);
  assert.equal(appends.length, 2, 'a flush with nothing waiting appends nothing, and leaves no timer behind');

  lines.line('again');
  await sleep(120);
  assert.deepEqual(
    appends.slice(2).map((a) => a.text),
    ['again\n'],
  );
});
