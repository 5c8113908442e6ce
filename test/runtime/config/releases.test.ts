/** Mapping what users write as a Trinity version to a modelled release. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseRelease } from '../../../runtime/config/releases';

test('exact releases, with or without v', () => {
  assert.equal(parseRelease('0.4.0'), 'v0.4.0');
  assert.equal(parseRelease('v0.5.2'), 'v0.5.2');
  assert.equal(parseRelease('main'), 'main');
  assert.equal(parseRelease('latest'), 'main');
});

test('a version between modelled releases maps to the older one', () => {
  assert.equal(parseRelease('0.5.1'), 'v0.5.0');
  assert.equal(parseRelease('0.4.3'), 'v0.4.0');
});

test('a dev build of a release precedes it', () => {
  assert.equal(parseRelease('0.5.2.dev0'), 'v0.5.0');
  assert.equal(parseRelease('0.3.1.dev0'), 'v0.3.0');
});

test('versions newer than every modelled release use main; older or garbage are unknown', () => {
  assert.equal(parseRelease('0.6.0'), 'main');
  assert.equal(parseRelease('0.2.0'), undefined);
  assert.equal(parseRelease('banana'), undefined);
});
