/**
 * The linux-x64 VSIX (`npm run package`, from the bundles `npm run build` made): it holds exactly the allowlist
 * (bundles, schemas, grammars, media, manifest, README, licence, the runtime's external packages' run-time files and
 * the native addons), and unpacked in a temp folder outside the repository, with no node_modules above it and no
 * NODE_PATH, its own dist/cli.js checks configs, creates a model, runs a short GRPO job (SQLite buffer, explorer in
 * a worker thread, wasm with the OpenBLAS matmul) and generates from the checkpoint, loading every module from the
 * unpacked extension; and the dashboard webview runs in Chromium from the unpacked dist/media alone (its controls
 * are bundled there, as VS Code lets the webview load only from media/ and dist/).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildVsix, ROOT, type BuiltVsix } from '../helpers/vsix';
import { DashboardPage } from '../dashboard/harness';

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  devDependencies: Record<string, string>;
};

/** The runtime's external packages, with the files Node loads from them (see .vscodeignore). */
const RUNTIME_FILES = [
  'node_modules/@tensorflow/tfjs-core/package.json',
  'node_modules/@tensorflow/tfjs-core/dist/tf-core.node.js',
  'node_modules/@tensorflow/tfjs-backend-cpu/package.json',
  'node_modules/@tensorflow/tfjs-backend-cpu/dist/tf-backend-cpu.node.js',
  'node_modules/@tensorflow/tfjs-backend-wasm/package.json',
  'node_modules/@tensorflow/tfjs-backend-wasm/dist/tf-backend-wasm.node.js',
  'node_modules/@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm',
  'node_modules/@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm',
  'node_modules/@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-threaded-simd.wasm',
  'node_modules/@tensorflow/tfjs-backend-webgpu/package.json',
  'node_modules/@tensorflow/tfjs-backend-webgpu/dist/tf-backend-webgpu.node.js',
  'node_modules/seedrandom/package.json',
  'node_modules/seedrandom/index.js',
  'node_modules/seedrandom/seedrandom.js',
  ...['alea', 'tychei', 'xor128', 'xor4096', 'xorshift7', 'xorwow'].map((n) => `node_modules/seedrandom/lib/${n}.js`),
  'node_modules/better-sqlite3/package.json',
  'node_modules/better-sqlite3/LICENSE',
  'node_modules/better-sqlite3/build/Release/better_sqlite3.node',
  ...['database', 'index', 'sqlite-error', 'util'].map((n) => `node_modules/better-sqlite3/lib/${n}.js`),
  ...['aggregate', 'backup', 'function', 'inspect', 'pragma', 'serialize', 'table', 'transaction', 'wrappers'].map(
    (n) => `node_modules/better-sqlite3/lib/methods/${n}.js`,
  ),
  'node_modules/bindings/package.json',
  'node_modules/bindings/LICENSE.md',
  'node_modules/bindings/bindings.js',
  'node_modules/file-uri-to-path/package.json',
  'node_modules/file-uri-to-path/LICENSE',
  'node_modules/file-uri-to-path/index.js',
  'native/blas-matmul/build/Release/blas_matmul.node',
];
/** webgpu (Dawn) is an optional dependency: shipped when npm installed it. */
const WEBGPU_FILES = [
  'node_modules/webgpu/package.json',
  'node_modules/webgpu/LICENSE.md',
  'node_modules/webgpu/index.js',
  'node_modules/webgpu/dist/linux-x64/dawn.node',
];

function filesUnder(dir: string): string[] {
  if (!existsSync(join(ROOT, dir))) return [];
  return readdirSync(join(ROOT, dir), { recursive: true })
    .map((f) => `${dir}/${String(f)}`)
    .filter((f) => statSync(join(ROOT, f)).isFile());
}

/** The committed example configs, their datasets and plugins (New Config from Example copies them). */
function exampleFiles(): string[] {
  const r = spawnSync('git', ['ls-files', 'examples'], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout
    .split('\n')
    .filter((f) => /\.trinity\.ya?ml$/.test(f) || /(^|\/)data\//.test(f) || /(^|\/)plugins\/[^/]+\.mjs$/.test(f));
}

function expectedFiles(): string[] {
  const ext = [
    'package.json',
    'readme.md',
    'LICENSE.txt',
    ...['extension', 'server', 'cli', 'explorer-worker', 'prompt-tokens-worker'].map((n) => `dist/${n}.js`),
    'dist/media/dashboard.js',
    'dist/media/dashboard.css',
    ...filesUnder('schemas'),
    ...filesUnder('syntaxes'),
    // The dashboard's sources are bundled into dist/media, not shipped.
    ...filesUnder('media').filter((f) => !f.startsWith('media/dashboard/')),
    ...exampleFiles(),
    ...RUNTIME_FILES,
    ...(existsSync(join(ROOT, 'node_modules/webgpu/dist/linux-x64/dawn.node')) ? WEBGPU_FILES : []),
  ];
  return ['[Content_Types].xml', 'extension.vsixmanifest', ...ext.map((f) => `extension/${f}`)].sort();
}

function unzip(args: string[]): string {
  const r = spawnSync('unzip', args, { encoding: 'utf8', maxBuffer: 64 << 20 });
  assert.equal(r.status, 0, `unzip ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

let vsix: BuiltVsix;
let files: string[];

before(() => {
  vsix = buildVsix();
  files = unzip(['-Z1', vsix.path]).trim().split('\n').sort();
});

describe('the linux-x64 VSIX', () => {
  test('holds exactly the allowlist: bundles, schemas, grammars, manifest, licence, runtime packages, native addons', () => {
    const expected = expectedFiles();
    assert.deepEqual(
      { missing: expected.filter((f) => !files.includes(f)), unexpected: files.filter((f) => !expected.includes(f)) },
      { missing: [], unexpected: [] },
    );
  });

  test('holds no tests, sources, source maps, sqlite sources or dev dependencies', () => {
    const bad = files.filter(
      (f) => /(^|\/)test\//.test(f) || /\.(ts|mts|cts|map)$/.test(f) || /\/(src|deps)\//.test(f),
    );
    assert.deepEqual(bad, []);
    const modules = new Set(
      files.flatMap((f) => /^extension\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(f)?.[1] ?? []),
    );
    for (const dev of Object.keys(pkg.devDependencies)) assert.ok(!modules.has(dev), `${dev} is a dev dependency`);
    assert.deepEqual([...modules].sort(), [
      '@tensorflow/tfjs-backend-cpu',
      '@tensorflow/tfjs-backend-wasm',
      '@tensorflow/tfjs-backend-webgpu',
      '@tensorflow/tfjs-core',
      'better-sqlite3',
      'bindings',
      'file-uri-to-path',
      'seedrandom',
      ...(files.some((f) => f.startsWith('extension/node_modules/webgpu/')) ? ['webgpu'] : []),
    ]);
  });

  test('is a linux-x64 platform package of this version with the repository manifest, under 15 MB', () => {
    const manifest = unzip(['-p', vsix.path, 'extension.vsixmanifest']);
    assert.match(
      manifest,
      new RegExp(`<Identity [^>]*Id="${pkg.name}" Version="${pkg.version}" [^>]*TargetPlatform="linux-x64"`),
    );
    assert.equal(unzip(['-p', vsix.path, 'extension/package.json']), readFileSync(join(ROOT, 'package.json'), 'utf8'));
    const mb = statSync(vsix.path).size / 1e6;
    assert.ok(mb < 15, `${mb.toFixed(1)} MB`);
    console.log(
      `VSIX: ${mb.toFixed(1)} MB, ${files.length} files${vsix.seconds ? `, packaged in ${vsix.seconds.toFixed(1)} s` : ''}`,
    );
  });
});

describe('the VSIX unpacked outside the repository', () => {
  let dir: string;
  let ext: string;
  const trace = () => join(dir, 'loaded.txt');

  /** `node <unpacked>/extension/dist/cli.js …` with a clean environment; every module it loads goes to loaded.txt. */
  function cli(args: string[], cwd = dir) {
    const r = spawnSync(process.execPath, [join(ext, 'dist', 'cli.js'), ...args], {
      cwd,
      encoding: 'utf8',
      // NODE_OPTIONS reaches the explorer's worker thread too (it is started with execArgv: []).
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        NODE_OPTIONS: `--require ${join(dir, 'trace.cjs')}`,
        TWB_TRACE: trace(),
      },
      timeout: 120_000,
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  }

  before(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'twb-vsix-')));
    ext = join(dir, 'extension');
    // Outside the repository, and Node finds no node_modules but the extension's own: none above it, none in Node's
    // global folders, and the children get no NODE_PATH (their environment is built here).
    assert.ok(!dir.startsWith('/work/') && relative(ROOT, dir).startsWith('..'), dir);
    for (let d = dir; ; d = dirname(d)) {
      assert.ok(!existsSync(join(d, 'node_modules')), `${d}/node_modules exists`);
      if (dirname(d) === d) break;
    }
    for (const g of [
      join(homedir(), '.node_modules'),
      join(homedir(), '.node_libraries'),
      join(dirname(dirname(process.execPath)), 'lib', 'node'),
    ]) {
      assert.ok(
        !existsSync(join(g, '@tensorflow')) && !existsSync(join(g, 'better-sqlite3')),
        `${g} holds runtime packages`,
      );
    }
    unzip(['-q', vsix.path, '-d', dir]);
    writeFileSync(
      join(dir, 'trace.cjs'),
      `const Module = require('node:module');
const { appendFileSync } = require('node:fs');
const { threadId } = require('node:worker_threads');
for (const ext of ['.js', '.json', '.node']) {
  const load = Module._extensions[ext];
  Module._extensions[ext] = function (module, filename) {
    appendFileSync(process.env.TWB_TRACE, threadId + '\\t' + filename + '\\n');
    return load.call(this, module, filename);
  };
}
`,
    );
  });

  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** The modules loaded since the last call, as [threadId, path] (the trace's own file excluded); never none. */
  function loaded(): [string, string][] {
    assert.ok(existsSync(trace()), `no module trace at ${trace()}: the --require hook did not run`);
    const rows = readFileSync(trace(), 'utf8')
      .trim()
      .split('\n')
      .map((l) => l.split('\t') as [string, string]);
    writeFileSync(trace(), '');
    const modules = rows.filter(([, f]) => f !== join(dir, 'trace.cjs'));
    assert.ok(
      modules.some(([, f]) => f === join(ext, 'dist', 'cli.js')),
      `the module trace does not hold dist/cli.js: ${modules.length} modules`,
    );
    return modules;
  }

  function assertAllInside(rows: [string, string][]): void {
    assert.deepEqual(
      rows.filter(([, f]) => !f.startsWith(`${ext}/`)).map(([, f]) => f),
      [],
      'modules loaded from outside the unpacked VSIX',
    );
  }

  test('check reports a config error at its line, with exit status 1', () => {
    writeFileSync(join(dir, 'bad.yaml'), 'mode: both\nalgorithm:\n  algorithm_type: grpo\n  repeat_time: 8\n');
    const bad = cli(['check', 'bad.yaml']);
    assert.equal(bad.code, 1, bad.stderr);
    assert.match(
      bad.stdout,
      /^bad\.yaml:4:3 error TRN010 Unknown key `repeat_time` under `algorithm` \(AlgorithmConfig\)\. Did you mean `repeat_times`\?/m,
    );
    assertAllInside(loaded());
  });

  test('model create, a 2-step GRPO run (SQLite buffer, explorer worker, wasm + OpenBLAS), generate from its checkpoint', () => {
    const created = cli([
      'model',
      'create',
      '--arch',
      'qwen2',
      '--layers',
      '1',
      '--hidden',
      '32',
      '--heads',
      '4',
      '--kv-heads',
      '2',
      '--vocab',
      'char:0123456789+{}\\ abcdefghijklmnopqrstuvwxyz',
      '--out',
      'model',
    ]);
    assert.equal(created.code, 0, created.stderr);
    mkdirSync(join(dir, 'data'));
    const rows: string[] = [];
    for (let a = 0; a < 10; a++)
      for (let b = 0; b < 10; b += 3) rows.push(JSON.stringify({ question: `${a}+${b}`, answer: String(a + b) }));
    writeFileSync(join(dir, 'data', 'train.jsonl'), rows.join('\n') + '\n');
    writeFileSync(join(dir, 'data', 'eval.jsonl'), rows.slice(0, 8).join('\n') + '\n');
    writeFileSync(join(dir, 'tiny.trinity.yaml'), TINY_GRPO);
    const checked = cli(['check', 'tiny.trinity.yaml']);
    assert.equal(checked.code, 0, checked.stdout + checked.stderr);
    assert.match(checked.stderr, /1 file checked: 0 error\(s\), 0 warning\(s\)/);

    const run = cli(['run', '--config', 'tiny.trinity.yaml', '--events', 'jsonl']);
    assert.equal(run.code, 0, run.stderr);
    const events = run.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; [k: string]: unknown });
    assert.deepEqual([events[0].type, events[0].backend], ['run', 'wasm']);
    assert.deepEqual(
      events.filter((e) => e.type === 'metrics' && e.role === 'trainer').map((e) => e.step),
      [1, 2],
    );
    assert.deepEqual(events.at(-1), { type: 'done', status: 'finished' });
    const checkpoint = events.find((e) => e.type === 'checkpoint' && e.step === 2)?.path as string;
    assert.ok(checkpoint && existsSync(join(checkpoint, 'model.safetensors')), run.stdout);
    // With --events jsonl the run's log lines are log events only (the editor shows the stream).
    const logLines = events
      .filter((e) => e.type === 'log')
      .map((e) => e.message)
      .join('\n');
    assert.match(logLines, /the explorer runs in a worker thread/);
    assert.match(logLines, /tfjs backend: wasm \(SIMD, OpenBLAS matmul/);

    const gen = cli(['generate', '--model', checkpoint, '--prompt', '1+2', '--max-new-tokens', '4', '--json']);
    assert.equal(gen.code, 0, gen.stderr);
    assert.equal((JSON.parse(gen.stdout) as { completions: unknown[] }).completions.length, 1);

    const mods = loaded();
    assertAllInside(mods);
    const main = mods.filter(([t]) => t === '0').map(([, f]) => relative(ext, f));
    const worker = mods.filter(([t]) => t !== '0').map(([, f]) => relative(ext, f));
    for (const f of [
      'node_modules/better-sqlite3/build/Release/better_sqlite3.node',
      'native/blas-matmul/build/Release/blas_matmul.node',
      'node_modules/@tensorflow/tfjs-backend-wasm/dist/tf-backend-wasm.node.js',
    ]) {
      assert.ok(main.includes(f), `the run did not load ${f}`);
    }
    assert.ok(
      worker.includes('dist/explorer-worker.js') &&
        worker.includes('native/blas-matmul/build/Release/blas_matmul.node'),
      worker.join('\n'),
    );
  });

  test('the dashboard webview runs from the unpacked dist/media alone: its @vscode-elements controls are defined and work', async () => {
    const d = await DashboardPage.open(undefined, join(ext, 'dist', 'media'));
    try {
      await d.setTheme('dark');
      await d.post({
        type: 'init',
        run: { key: '/jobs/v', title: 'vsix', jobDir: '/jobs/v', status: 'on disk' },
        series: [
          { run: 'trainer', tag: 'critic/score/mean', steps: [1, 2, 3], times: [1, 2, 3], values: [1, 10, 100] },
        ],
      });
      await d.frames();
      const tags = ['vscode-tabs', 'vscode-tab-header', 'vscode-tab-panel', 'vscode-textfield'];
      tags.push('vscode-single-select', 'vscode-option', 'vscode-checkbox', 'vscode-button');
      assert.deepEqual(
        await d.page.evaluate((names) => names.filter((n) => !(globalThis as any).customElements.get(n)), tags),
        [],
      );
      assert.equal(
        await d.page.$eval('#x-axis', (el: any) => el.shadowRoot.querySelector('.select-face').textContent.trim()),
        'Step',
      );
      await d.page.click('#log-y');
      await d.frames();
      assert.equal((await d.chart('critic/score/mean')).y.type, 'logarithmic');
      assert.deepEqual(d.problems, []);
      assert.deepEqual(await d.page.evaluate(() => (globalThis as any).__csp), []);
    } finally {
      await d.close();
    }
  });

  test('doctor finds the wasm binaries and the OpenBLAS addon inside the extension', () => {
    const r = cli(['doctor', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as {
      backends: { name: string; available: boolean; details: string[] }[];
      selection: { ok: boolean; name?: string };
    };
    assert.deepEqual([report.selection.ok, report.selection.name], [true, 'wasm']);
    const wasm = report.backends.find((b) => b.name === 'wasm')!;
    assert.ok(
      wasm.details.includes(join(ext, 'node_modules/@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm')),
      wasm.details.join('\n'),
    );
    assert.ok(
      wasm.details.some(
        (d) =>
          d.startsWith('matmuls on native OpenBLAS') &&
          d.endsWith(`; ${join(ext, 'native/blas-matmul/build/Release/blas_matmul.node')}`),
      ),
      wasm.details.join('\n'),
    );
    assertAllInside(loaded());
  });
});

const TINY_GRPO = `# trinity-version: main
project: vsix
name: tiny
checkpoint_root_dir: ./checkpoints
model:
  model_path: model
  max_prompt_tokens: 48
  max_response_tokens: 8
  max_model_len: 64
cluster:
  node_num: 1
  gpu_per_node: 2
mode: both
algorithm:
  algorithm_type: grpo
  repeat_times: 4
  optimizer:
    lr: 1e-3
buffer:
  batch_size: 4
  total_steps: 2
  explorer_input:
    taskset:
      name: sums
      storage_type: file
      path: data/train.jsonl
      format: {prompt_key: question, response_key: answer}
    eval_tasksets:
      - name: sums-eval
        storage_type: file
        path: data/eval.jsonl
        format: {prompt_key: question, response_key: answer}
        rollout_args: {temperature: 0.0}
    default_workflow_type: simple_workflow
    default_reward_fn_type: math_boxed_reward
  trainer_input:
    experience_buffer:
      name: experiences
      storage_type: sql
synchronizer:
  sync_offset: 1
explorer:
  eval_on_startup: true
  eval_interval: 2
trainer:
  save_interval: 2
`;
