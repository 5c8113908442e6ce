// Bundles each entry point into dist/. Type checking is `tsc --noEmit`, not esbuild's job.
import { readFileSync } from 'node:fs';
import { build } from 'esbuild';

const { version } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'));

const entries = [
  { in: 'runtime/cli/main.ts', out: 'cli', banner: '#!/usr/bin/env node' },
  { in: 'server/main.ts', out: 'server' },
  { in: 'client/extension.ts', out: 'extension' },
  { in: 'runtime/rft/run/explorer-side/explorer-worker.ts', out: 'explorer-worker' },
  { in: 'server/host/prompt-tokens-worker.ts', out: 'prompt-tokens-worker' },
];

// tfjs loads .wasm files and native addons relative to its own package, so it stays in node_modules. The one
// exception is the gradient registrations: the core package's Node (CommonJS) build has none, and its ES-module
// file cannot be required from CommonJS, so those are bundled (they register into tfjs' global registry).
const tfjsExternal = {
  name: 'tfjs-external',
  setup(b) {
    b.onResolve({ filter: /^@tensorflow\// }, (args) =>
      args.path.includes('register_all_gradients') ? undefined : { path: args.path, external: true },
    );
  },
};

// The dashboard webview (media/dashboard): one browser script and its stylesheet, loaded by client/dashboard/html.ts.
const webview = build({
  entryPoints: { dashboard: 'media/dashboard/main.ts' },
  outdir: 'dist/media',
  bundle: true,
  platform: 'browser',
  format: 'iife',
  target: 'chrome114',
  minify: !process.env.DEBUG_WEBVIEW,
  sourcemap: true,
  logLevel: 'warning',
});
const webviewStyle = build({
  entryPoints: { dashboard: 'media/dashboard/dashboard.css' },
  outdir: 'dist/media',
  bundle: true,
  minify: true,
  logLevel: 'warning',
});

await Promise.all([
  webview,
  webviewStyle,
  ...entries.map((e) =>
    build({
      entryPoints: { [e.out]: e.in },
      outdir: 'dist',
      bundle: true,
      platform: 'node',
      // jsonc-parser's UMD build (main) hides its requires from the bundler; its ESM build bundles cleanly.
      mainFields: ['module', 'main'],
      target: 'node20',
      format: 'cjs',
      sourcemap: true,
      banner: e.banner ? { js: e.banner } : undefined,
      // tsx/cjs: only the explorer worker's from-source path (tests under tsx) asks for it; the bundle never loads it.
      external: ['vscode', 'webgpu', 'better-sqlite3', 'tsx/cjs'],
      plugins: [tfjsExternal],
      define: { __VERSION__: JSON.stringify(version) },
      logLevel: 'warning',
    }),
  ),
]);
