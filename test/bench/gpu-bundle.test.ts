/**
 * `npm run gpu:bundle` (bench/gpu-bundle.mjs): the folder a lent GPU machine (no Node, nothing to fetch, 64 MiB a
 * call) runs the GPU check from. Built here with xz's fastest level (the real bundle is smaller), it must stay under
 * 50 MiB and hold what the check needs; then its run.sh runs as on that machine — copied into an empty folder, no Node
 * on PATH, the carried Vulkan loader (bench/gpu-rehearse.sh) — with no time for the checks themselves (a deadline of
 * 1 s skips every part): it unpacks, its own Node runs `doctor`, which finds Dawn's SwiftShader adapter through the
 * carried loader, and the results folder gets the summary, the run log and the logs' tarball. The whole check on
 * SwiftShader takes minutes: `bash bench/gpu-rehearse.sh` (docs/gpu-check.md).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

const ROOT = join(__dirname, '..', '..');
const work = mkdtempSync(join(tmpdir(), 'twb-gpu-bundle-test-'));
const bundle = join(work, 'bundle');
let contents: string[] = [];

before(() => {
  const r = spawnSync(process.execPath, [join(ROOT, 'bench', 'gpu-bundle.mjs'), '--out', bundle, '--xz-level', '0'], {
    encoding: 'utf8',
  });
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
  const tar = spawnSync('tar', ['-tJf', join(bundle, 'app.tar.xz')], { encoding: 'utf8', maxBuffer: 64 << 20 });
  assert.equal(tar.status, 0, tar.stderr);
  contents = tar.stdout.split('\n').filter(Boolean);
});
after(() => rmSync(work, { recursive: true, force: true }));

test('the bundle is under 50 MiB and holds Node, the runtime as the VSIX ships it, the compiled checks and their files', () => {
  const sizes = spawnSync('du', ['-sb', bundle], { encoding: 'utf8' });
  const bytes = Number(sizes.stdout.split('\t')[0]);
  assert.ok(bytes > 10 << 20 && bytes <= 50 << 20, `${(bytes / 2 ** 20).toFixed(1)} MiB`);

  const checks = JSON.parse(readFileSync(join(ROOT, 'bench', 'gpu-checks.json'), 'utf8')) as {
    tests: string[];
    scripts: string[];
  };
  for (const f of [
    'app/bin/node',
    'app/dist/cli.js',
    'app/dist/explorer-worker.js',
    'app/node_modules/webgpu/dist/linux-x64/dawn.node',
    'app/node_modules/better-sqlite3/build/Release/better_sqlite3.node',
    'app/node_modules/@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm',
    'app/node_modules/@tensorflow/tfjs-backend-webgpu/dist/tf-backend-webgpu.node.js',
    'app/bench/gpu-check.sh',
    'app/bench/gpu-checks.json',
    'app/bench/engine_torch.py',
    'app/test/fixtures/engine/parity/qwen2/reference-logits.json',
    ...[...checks.tests, ...checks.scripts].map((f) => `app/${f.replace(/\.ts$/, '.js')}`),
  ])
    assert.ok(contents.includes(f), `${f} is in app.tar.xz`);
  assert.deepEqual(
    contents.filter((f) => f.endsWith('.ts')),
    [],
    'no TypeScript: nothing there can run it',
  );
  assert.ok(!contents.some((f) => f.includes('blas_matmul')), 'no OpenBLAS addon (no libopenblas there)');
  const debs = readdirSync(join(bundle, 'vulkan'));
  for (const p of ['libvulkan1_', 'libglvnd0_', 'libglx0_'])
    assert.ok(
      debs.some((d) => d.startsWith(p)),
      p,
    );
  assert.ok(existsSync(join(bundle, 'run.sh')));
});

test('its run.sh, in an empty folder with no Node on PATH: unpacks, runs doctor on its own Node, finds SwiftShader through the carried loader', () => {
  const results = join(work, 'results');
  const r = spawnSync('bash', [join(ROOT, 'bench', 'gpu-rehearse.sh'), bundle, results], {
    encoding: 'utf8',
    env: { ...process.env, GPU_CHECK_DEADLINE_S: '1', GPU_CHECK_MODELS: '' },
  });
  assert.equal(r.status, 1, `every part is skipped, so the check fails:\n${r.stdout}\n${r.stderr}`);
  const summary = readFileSync(join(results, 'summary.md'), 'utf8');
  assert.match(summary, /^node v20\.\d+\.\d+ \(bundle\)/m);
  assert.match(summary, /webgpu {10}available/);
  assert.match(
    summary,
    /libvulkan\.so\.1: \/tmp\/twb-gpu-rehearsal\.\w+\/work\/sys\/usr\/lib\/x86_64-linux-gnu\/libvulkan\.so\.1/,
  );
  assert.match(summary, /adapter: google \/ swiftshader/);
  assert.match(summary, /\| tests \| SKIPPED/);
  assert.deepEqual(readdirSync(results).sort(), ['gpu-check-logs.tar.gz', 'run.log', 'summary.md']);
  assert.match(readFileSync(join(results, 'run.log'), 'utf8'), /Vulkan loader: the carried packages/);
});
