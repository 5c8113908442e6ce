/**
 * An I/O failure in the explorer's worker thread reaches the run's error as itself: the worker posts its fields
 * (structured clone, as postMessage does) and the trainer's thread rebuilds it, so the run says what to do about it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MessageChannel } from 'node:worker_threads';
import { IoFailure, ioFailureData, ioFailureFrom, ioFailureMessage, withIo } from '../../../runtime/rft/io-failure';

const full = (): never => {
  throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
};

test('an IoFailure posted across a MessageChannel comes back with the message and the advice of the original', async () => {
  let original: unknown;
  try {
    withIo('rollouts append', '/job/monitor/rollouts.jsonl', full);
  } catch (e) {
    original = e;
  }
  assert.ok(original instanceof IoFailure);
  const { port1, port2 } = new MessageChannel();
  const arrived = new Promise<unknown>((resolve) => port2.once('message', resolve));
  port1.postMessage({ io: ioFailureData(original) });
  const { io } = (await arrived) as { io: Parameters<typeof ioFailureFrom>[0] };
  port1.close();
  const rebuilt = ioFailureFrom(io);
  assert.ok(rebuilt instanceof IoFailure);
  assert.equal(
    rebuilt.message,
    'rollouts append failed: /job/monitor/rollouts.jsonl: database or disk is full (SQLITE_FULL)',
  );
  const said = ioFailureMessage(rebuilt, '/w/run.yaml');
  assert.equal(said, ioFailureMessage(original, '/w/run.yaml'));
  assert.match(said ?? '', /^rollouts append failed: .*\. The disk is full: free space on it, then resume the run/);
  // Any other error is not an I/O failure, whatever its text says.
  assert.equal(ioFailureMessage(new Error(rebuilt.message), '/w/run.yaml'), undefined);
  assert.equal(ioFailureData(new Error('x')), undefined);
});
