/**
 * Forcing webgpu: where `webgpu` (Dawn) finds no adapter, the error says why (here: no libvulkan.so.1) and nothing
 * falls back. Run in a child process, which keeps Dawn's own stderr warning out of the test output.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { BACKEND_ENV, probeBackends } from '../../../../runtime/engine/backend';

const ROOT = resolve(__dirname, '..', '..', '..', '..');

test('forcing webgpu without an adapter is an error that says why', async (t) => {
  const webgpu = (await probeBackends()).find((p) => p.name === 'webgpu');
  if (webgpu?.available) {
    t.skip('this machine has a WebGPU adapter');
    return;
  }
  const code = `
require(${JSON.stringify(join(ROOT, 'runtime', 'engine', 'backend', 'index.ts'))}).initBackend({}).then(
  (info) => console.log(JSON.stringify({ ok: true, info })),
  (e) => console.log(JSON.stringify({ ok: false, message: e.message, tried: e.tried, navigator: typeof globalThis.navigator })),
);`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '-e', code], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', [BACKEND_ENV]: 'webgpu' },
  });
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout.trim().split('\n').pop() ?? '') as {
    ok: boolean;
    message: string;
    tried: { name: string }[];
    navigator: string;
  };
  assert.equal(out.ok, false);
  assert.match(out.message, /^backend `webgpu` \(forced by \$TRINITY_WORKBENCH_BACKEND\) cannot start: webgpu: /);
  if (webgpu?.details.includes('libvulkan.so.1: not found')) assert.match(out.message, /libvulkan\.so\.1 is missing/);
  assert.deepEqual(
    out.tried.map((x) => x.name),
    ['webgpu'],
  );
  assert.equal(out.navigator, 'undefined', 'no navigator defined without an adapter');
});
