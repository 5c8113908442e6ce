/** `trinity-workbench doctor` through the bundled dist/cli.js (run `npm run build` first), text and --json. */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { runNodeChild } from '../helpers/node-child';

const CLI = resolve(__dirname, '..', '..', 'dist', 'cli.js');

/** doctor's wall time is bench/latency.bench.ts's to report; its work (one 256³ matmul probe) is asserted below. */
function run(args: string[], env: Record<string, string> = {}) {
  // Asynchronous: two of the describe's tests run at once, each waiting on its own doctor.
  return runNodeChild([CLI, ...args], { env: { PATH: process.env.PATH ?? '', ...env } });
}

interface Report {
  node: string;
  platform: string;
  arch: string;
  cpu: { model: string; cores: number; features: string[] };
  memory: { totalBytes: number; freeBytes: number };
  backends: { name: string; available: boolean; reason?: string; details: string[] }[];
  engineMemory: {
    backend: string;
    allocatedBytes: number;
    reservedBytes?: number;
    gpu?: { bytesInUse: number; bytesAllocated: number };
    rssBytes: number;
    maxRssBytes: number;
    machineUsedBytes: number;
  };
  selection: {
    preference: string;
    ok: boolean;
    name?: string;
    tfBackend?: string;
    threads?: number;
    gflops?: number;
    comparison?: { webgpuGflops: number; wasmGflops?: number; adapter?: string; pick: string; reason: string };
    error?: string;
    tried: { name: string; ok: boolean; reason?: string }[];
  };
}

describe('trinity-workbench doctor', { concurrency: 2 }, () => {
  test('--json prints one object: host, every backend with a reason when unavailable, and what auto picks', async () => {
    const r = await run(['doctor', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as Report;
    assert.deepEqual(Object.keys(report), [
      'node',
      'napi',
      'platform',
      'arch',
      'cpu',
      'memory',
      'backends',
      'selection',
      'engineMemory',
    ]);
    assert.equal(report.node, process.version);
    assert.equal(report.platform, process.platform);
    assert.ok(report.cpu.cores >= 1 && report.cpu.model.length > 0);
    assert.ok(report.memory.totalBytes > 0 && report.memory.freeBytes > 0);
    assert.deepEqual(
      report.backends.map((b) => b.name),
      ['tensorflow-gpu', 'tensorflow', 'webgpu', 'wasm', 'cpu'],
    );
    for (const b of report.backends) if (!b.available) assert.ok(b.reason && b.reason.length > 10, b.name);
    const webgpu = report.backends.find((b) => b.name === 'webgpu');
    assert.ok(
      webgpu?.details.some((d) => /^webgpu .*loads/.test(d)),
      'says whether the webgpu package loads',
    );
    assert.equal(report.backends.find((b) => b.name === 'wasm')?.available, true);
    assert.equal(report.selection.preference, 'auto');
    assert.equal(report.selection.ok, true);
    assert.ok((report.selection.gflops ?? 0) > 0);
    const mem = report.engineMemory;
    assert.equal(mem.backend, report.selection.tfBackend);
    assert.ok(mem.rssBytes > 0 && mem.maxRssBytes >= mem.rssBytes && mem.machineUsedBytes > 0, JSON.stringify(mem));
    if (mem.backend === 'wasm') assert.ok((mem.reservedBytes ?? 0) >= 16 * 2 ** 20, 'the wasm heap');
    const better = report.backends.filter(
      (b) => ['tensorflow-gpu', 'tensorflow', 'webgpu'].includes(b.name) && b.available,
    );
    if (better.length === 0) {
      assert.equal(report.selection.name, 'wasm');
      assert.equal(report.selection.threads, 1);
      assert.deepEqual(
        report.selection.tried.map((t) => t.ok),
        [false, false, false, true],
      );
    }
  });

  test('text: one line per fact, one per backend, and the pick with its GFLOP/s', async () => {
    const r = await run(['doctor']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`^Node      ${process.version.replace(/\./g, '\\.')} `, 'm'));
    assert.match(r.stdout, /^Platform  \w+ \w+$/m);
    assert.match(r.stdout, /^CPU       .+, \d+ cores?/m);
    assert.match(r.stdout, /^Memory    [\d.]+ GiB total, [\d.]+ GiB free$/m);
    for (const name of ['tensorflow-gpu', 'tensorflow', 'webgpu', 'wasm', 'cpu']) {
      assert.match(r.stdout, new RegExp(`^  ${name} +(available|not available: .+)$`, 'm'), name);
    }
    assert.match(r.stdout, /^auto picks: [\w-]+ \(tfjs backend `\w+`.*\), [\d.]+ GFLOP\/s on a 256³ float32 matmul$/m);
    assert.match(r.stdout, /^  why       .+$/m);
    assert.match(
      r.stdout,
      /^Engine memory \(\w+\): [\d.]+ MiB in tensors \(peak [\d.]+ MiB\), .*process RSS [\d.]+ MiB \(peak [\d.]+ MiB\)$/m,
    );
    assert.equal(r.stderr, '');
  });

  test('$TRINITY_WORKBENCH_BACKEND is honoured, and a forced backend that cannot start is reported (exit 0)', async (t) => {
    const cpu = await run(['doctor'], { TRINITY_WORKBENCH_BACKEND: 'cpu' });
    assert.equal(cpu.code, 0, cpu.stderr);
    assert.match(
      cpu.stdout,
      /^\$TRINITY_WORKBENCH_BACKEND=cpu: cpu \(tfjs backend `cpu`, 1 thread\), [\d.]+ GFLOP\/s/m,
    );
    const tf = await run(['doctor', '--json'], { TRINITY_WORKBENCH_BACKEND: 'tensorflow' });
    assert.equal(tf.code, 0, tf.stderr);
    const report = JSON.parse(tf.stdout) as Report;
    if (report.backends.find((b) => b.name === 'tensorflow')?.available) {
      assert.deepEqual([report.selection.ok, report.selection.name], [true, 'tensorflow']);
      t.skip('tfjs-node starts on this machine: a forced backend that cannot start needs one without it');
      return;
    }
    assert.equal(report.selection.ok, false);
    assert.match(
      report.selection.error ?? '',
      /^backend `tensorflow` \(forced by \$TRINITY_WORKBENCH_BACKEND\) cannot start: tfjs-node: /,
    );
  });

  test('auto never picks a software WebGPU adapter (SwiftShader): doctor says why; without libvulkan1 it names the package', async () => {
    const icd = '/usr/lib/chromium/vk_swiftshader_icd.json';
    const env = { VK_ICD_FILENAMES: icd, XDG_RUNTIME_DIR: tmpdir() };
    // The three doctors at once (each probes both backends: on CI's two cores, their time is the longest one's).
    const [r, text, forced] = await Promise.all([
      run(['doctor', '--json'], env),
      run(['doctor'], env),
      // Forced onto webgpu.
      run(['doctor', '--json'], { ...env, TRINITY_WORKBENCH_BACKEND: 'webgpu' }),
    ]);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as Report;
    const webgpu = report.backends.find((b) => b.name === 'webgpu')!;
    assert.notEqual(report.selection.name, 'webgpu');
    if (webgpu.details.includes('libvulkan.so.1: not found')) {
      // A machine without libvulkan1 (CI installs it): the reason names what to install.
      assert.match(webgpu.reason ?? '', /libvulkan\.so\.1 is missing \(Debian\/Ubuntu: apt-get install libvulkan1/);
      return;
    }
    assert.equal(webgpu.available, true, webgpu.reason);
    assert.ok(
      webgpu.details.some((d) => /^adapter: .*swiftshader/i.test(d)),
      webgpu.details.join('; '),
    );
    assert.ok(
      webgpu.details.some((d) => /^auto skips it: the adapter is a fallback \(software\) adapter/.test(d)),
      webgpu.details.join('; '),
    );
    const tried = report.selection.tried.find((t) => t.name === 'webgpu');
    assert.match(tried?.reason ?? '', /auto skips it/);
    // doctor measured the software adapter anyway: both rates, and why wasm.
    const c = report.selection.comparison;
    assert.ok(c, 'a comparison of webgpu and wasm');
    assert.equal(c.pick, 'wasm');
    assert.equal(report.selection.name, 'wasm');
    assert.ok(c.webgpuGflops > 0 && (c.wasmGflops ?? 0) > 0, JSON.stringify(c));
    assert.equal(report.selection.gflops, c.wasmGflops);
    assert.match(c.adapter ?? '', /swiftshader/i);
    assert.match(
      c.reason,
      /^auto skips it: the adapter is a fallback \(software\) adapter \(webgpu [\d.]+ GFLOP\/s, wasm [\d.]+ GFLOP\/s\)$/,
    );
    assert.equal(text.code, 0, text.stderr);
    assert.match(
      text.stdout,
      /^auto picks: wasm \(tfjs backend `wasm`.*\), [\d.]+ GFLOP\/s on a 256³ float32 matmul$/m,
    );
    assert.match(text.stdout, /^  webgpu    [\d.]+ GFLOP\/s \(.*swiftshader.*\)$/im);
    assert.match(text.stdout, /^  wasm      [\d.]+ GFLOP\/s$/m);
    assert.match(text.stdout, /^  why       auto skips it: the adapter is a fallback \(software\) adapter \(webgpu /m);
    // Forced onto it, doctor reports the GPU buffers webgpu holds (its measurement's, pooled for reuse).
    assert.equal(forced.code, 0, forced.stderr);
    const onGpu = JSON.parse(forced.stdout) as Report;
    assert.equal(onGpu.selection.name, 'webgpu');
    const gpu = onGpu.engineMemory.gpu;
    assert.ok(
      gpu && gpu.bytesAllocated >= 3 * 256 * 256 * 4 && gpu.bytesAllocated >= gpu.bytesInUse,
      JSON.stringify(gpu),
    );
    assert.equal(onGpu.engineMemory.reservedBytes, gpu.bytesAllocated);
  });

  test('an installed tfjs-node without its native addon is reported as such, without loading it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tw-doctor-'));
    const pkg = join(dir, 'node_modules', '@tensorflow', 'tfjs-node');
    mkdirSync(pkg, { recursive: true });
    writeFileSync(
      join(pkg, 'package.json'),
      JSON.stringify({ name: '@tensorflow/tfjs-node', version: '4.22.0', main: 'index.js' }),
    );
    writeFileSync(join(pkg, 'index.js'), 'throw new Error("must not be loaded")');
    const r = await run(['doctor', '--json'], { NODE_PATH: join(dir, 'node_modules') });
    assert.equal(r.code, 0, r.stderr);
    const b = (JSON.parse(r.stdout) as Report).backends.find((x) => x.name === 'tensorflow');
    assert.equal(b?.available, false);
    assert.equal(
      b?.reason,
      'tfjs-node: the native addon tfjs_binding.node is missing (its install needs storage.googleapis.com)',
    );
    assert.ok(b?.details.includes('@tensorflow/tfjs-node 4.22.0'));
  });

  test('bad usage exits 2; --help exits 0; the top-level usage lists doctor', async () => {
    assert.equal((await run(['doctor', '--jsn'])).code, 2);
    assert.equal((await run(['doctor', 'extra'])).code, 2);
    const help = await run(['doctor', '--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^Usage: trinity-workbench doctor \[--json\]/);
    assert.match((await run(['--help'])).stdout, /^  doctor \[--json\]$/m);
  });
});
