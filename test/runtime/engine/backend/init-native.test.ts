/**
 * The native backends (tfjs-node-gpu, tfjs-node): forcing one that is not installed is an error that says why;
 * stand-in packages found through NODE_PATH (in child processes) check the on-disk probe, the util polyfill, the
 * order, and that the two variants are never both loaded in one process.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { BACKEND_ENV, BackendUnavailableError, initBackend, probeBackends } from '../../../../runtime/engine/backend';

const ROOT = resolve(__dirname, '..', '..', '..', '..');
const INDEX = join(ROOT, 'runtime', 'engine', 'backend', 'index.ts');

describe('forcing a native backend that is not installed', () => {
  test('is an error naming the package and the download it needs, then another backend can still be chosen', async (t) => {
    const probes = await probeBackends();
    if (probes.find((p) => p.name === 'tensorflow')?.available) {
      t.skip('@tensorflow/tfjs-node is installed here');
      return;
    }
    process.env[BACKEND_ENV] = 'tensorflow';
    await assert.rejects(initBackend({ prefer: 'wasm' }), (e: unknown) => {
      assert.ok(e instanceof BackendUnavailableError);
      assert.match(
        e.message,
        /^backend `tensorflow` \(forced by \$TRINITY_WORKBENCH_BACKEND\) cannot start: tfjs-node: @tensorflow\/tfjs-node is not installed \(.*storage\.googleapis\.com\)$/,
      );
      assert.deepEqual(
        e.tried.map((x) => [x.name, x.ok]),
        [['tensorflow', false]],
      );
      return true;
    });
    delete process.env[BACKEND_ENV];
    // A failed call chose nothing.
    const info = await initBackend({ prefer: 'cpu' });
    assert.equal(info.name, 'cpu');
  });
});

type Fake = 'missing-addon' | 'works' | 'factory-throws' | 'require-throws';

/** A stand-in @tensorflow/tfjs-node(-gpu) under dir/node_modules. */
function fakePackage(dir: string, variant: 'tfjs-node' | 'tfjs-node-gpu', kind: Fake): void {
  const pkg = join(dir, 'node_modules', '@tensorflow', variant);
  mkdirSync(pkg, { recursive: true });
  writeFileSync(
    join(pkg, 'package.json'),
    JSON.stringify({
      name: `@tensorflow/${variant}`,
      version: '4.22.0',
      main: 'index.js',
      binary: { module_path: './lib/napi-v{napi_build_version}/', napi_versions: [3, 4, 5, 6, 7, 8] },
    }),
  );
  if (kind === 'missing-addon') return;
  mkdirSync(join(pkg, 'lib', 'napi-v8'), { recursive: true });
  writeFileSync(join(pkg, 'lib', 'napi-v8', 'tfjs_binding.node'), '');
  mkdirSync(join(pkg, 'deps', 'lib'), { recursive: true });
  writeFileSync(join(pkg, 'deps', 'lib', 'libtensorflow.so.2.9.1'), '');
  const body = {
    'require-throws': `throw new Error('libcudart.so.11.0: cannot open shared object file: No such file or directory');`,
    'factory-throws': `tf.registerBackend('tensorflow', () => { throw new Error('CUDA driver version is insufficient for CUDA runtime version'); }, 3);`,
    works: `const cpu = require('@tensorflow/tfjs-backend-cpu');
tf.registerBackend('tensorflow', () => new cpu.MathBackendCPU(), 3);
for (const k of tf.getKernelsForBackend('cpu')) tf.registerKernel({ ...k, backendName: 'tensorflow' });`,
  }[kind];
  writeFileSync(
    join(pkg, 'index.js'),
    `globalThis.__fakeLoaded = [...(globalThis.__fakeLoaded ?? []), '${variant}'];
if (typeof require('util').isNullOrUndefined !== 'function') throw new Error('util.isNullOrUndefined is not polyfilled');
const tf = require('@tensorflow/tfjs-core');
${body}
`,
  );
}

interface ChildResult {
  ok: boolean;
  info?: { name: string; tfBackend: string; tried: { name: string; ok: boolean; reason?: string }[] };
  message?: string;
  tried?: { name: string; ok: boolean; reason?: string }[];
  loaded: string[];
}

function runChild(fakes: [variant: 'tfjs-node' | 'tfjs-node-gpu', kind: Fake][], backend?: string): ChildResult {
  const dir = mkdtempSync(join(tmpdir(), 'tw-backend-'));
  for (const [variant, kind] of fakes) fakePackage(dir, variant, kind);
  // Node ≥ 23 has no util.isNullOrUndefined, which tfjs-node 4.22 calls: simulate that here.
  const code = `
delete require('util').isNullOrUndefined;
const { initBackend } = require(${JSON.stringify(INDEX)});
const loaded = () => globalThis.__fakeLoaded ?? [];
initBackend({}).then(
  (info) => console.log(JSON.stringify({ ok: true, info, loaded: loaded() })),
  (e) => console.log(JSON.stringify({ ok: false, message: e.message, tried: e.tried, loaded: loaded() })),
);`;
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    NODE_PATH: `${join(dir, 'node_modules')}:${join(ROOT, 'node_modules')}`,
  };
  if (backend) env[BACKEND_ENV] = backend;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '-e', code], { cwd: ROOT, encoding: 'utf8', env });
  assert.equal(r.status, 0, r.stderr);
  const line = r.stdout.trim().split('\n').pop() ?? '';
  return JSON.parse(line) as ChildResult;
}

describe('native backends through stand-in packages', () => {
  test('an installed tfjs-node without its addon: the forced error says the addon is missing', () => {
    const r = runChild([['tfjs-node', 'missing-addon']], 'tensorflow');
    assert.equal(r.ok, false);
    assert.equal(
      r.message,
      'backend `tensorflow` (forced by $TRINITY_WORKBENCH_BACKEND) cannot start: tfjs-node: the native addon tfjs_binding.node is missing (its install needs storage.googleapis.com)',
    );
    assert.deepEqual(r.loaded, [], 'not loaded once the probe failed');
  });

  test('auto takes a working tfjs-node-gpu first (util.isNullOrUndefined polyfilled) and never loads tfjs-node', () => {
    const r = runChild([
      ['tfjs-node-gpu', 'works'],
      ['tfjs-node', 'works'],
    ]);
    assert.equal(r.ok, true, r.message);
    assert.equal(r.info?.name, 'tensorflow-gpu');
    assert.equal(r.info?.tfBackend, 'tensorflow');
    assert.deepEqual(r.info?.tried, [{ name: 'tensorflow-gpu', ok: true }]);
    assert.deepEqual(r.loaded, ['tfjs-node-gpu']);
  });

  test('a tfjs-node-gpu that loads but cannot start bars tfjs-node from the same process', () => {
    const r = runChild([
      ['tfjs-node-gpu', 'factory-throws'],
      ['tfjs-node', 'works'],
    ]);
    assert.equal(r.ok, true, r.message);
    assert.notEqual(r.info?.name, 'tensorflow');
    const tried = r.info?.tried ?? [];
    assert.match(tried[0].reason ?? '', /^tfjs-node-gpu: CUDA driver version is insufficient/);
    assert.match(
      tried[1].reason ?? '',
      /^tfjs-node: @tensorflow\/tfjs-node-gpu is already loaded in this process, and the two must never both be loaded$/,
    );
    assert.deepEqual(r.loaded, ['tfjs-node-gpu']);
  });

  test('a tfjs-node-gpu whose require fails before registering anything leaves tfjs-node usable', () => {
    const r = runChild([
      ['tfjs-node-gpu', 'require-throws'],
      ['tfjs-node', 'works'],
    ]);
    assert.equal(r.ok, true, r.message);
    assert.equal(r.info?.name, 'tensorflow');
    assert.match(
      r.info?.tried[0].reason ?? '',
      /^tfjs-node-gpu: loading @tensorflow\/tfjs-node-gpu failed: libcudart\.so\.11\.0: cannot open/,
    );
    assert.deepEqual(r.loaded, ['tfjs-node-gpu', 'tfjs-node']);
  });

  test('forcing tensorflow-gpu when it cannot start does not fall back', () => {
    const r = runChild([['tfjs-node-gpu', 'factory-throws']], 'tensorflow-gpu');
    assert.equal(r.ok, false);
    assert.match(
      r.message ?? '',
      /^backend `tensorflow-gpu` \(forced by \$TRINITY_WORKBENCH_BACKEND\) cannot start: tfjs-node-gpu: CUDA driver version is insufficient/,
    );
    assert.deepEqual(
      r.tried?.map((x) => x.name),
      ['tensorflow-gpu'],
    );
  });
});
