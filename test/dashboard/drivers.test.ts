/** The dashboard's config-key messages (client/dashboard/messages.ts): `drivers` to the webview, `revealKey` back. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseHostMessage, parseWebviewMessage } from '../../client/dashboard/messages';

describe('drivers and revealKey messages', () => {
  test('dotted config paths pass; anything else drops the message', () => {
    const ok = {
      type: 'drivers',
      drivers: { 'actor/grad_norm': ['trainer.grad_clip', 'algorithm.optimizer.lr'], 'x/y': [] },
    };
    assert.deepEqual(parseHostMessage(ok), ok);
    for (const bad of [
      { type: 'drivers' },
      { type: 'drivers', drivers: [] },
      { type: 'drivers', drivers: { a: 'model.x' } },
      { type: 'drivers', drivers: { a: ['model..x'] } },
      { type: 'drivers', drivers: { a: ['<b>'] } },
    ])
      assert.equal(parseHostMessage(bad), undefined, JSON.stringify(bad));
    assert.deepEqual(parseWebviewMessage({ type: 'revealKey', key: 'model.max_response_tokens', extra: 1 }), {
      type: 'revealKey',
      key: 'model.max_response_tokens',
    });
    for (const bad of [
      { type: 'revealKey' },
      { type: 'revealKey', key: 3 },
      { type: 'revealKey', key: 'a b' },
      { type: 'revealKey', key: `a.${'b'.repeat(300)}` },
    ])
      assert.equal(parseWebviewMessage(bad), undefined, JSON.stringify(bad));
  });
});
