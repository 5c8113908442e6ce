// Bundles each entry point into dist/. Type checking is `tsc --noEmit`, not esbuild's job.
import { readFileSync } from 'node:fs';
import { build } from 'esbuild';

const { version } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'));

const entries = [
  { in: 'runtime/cli/main.ts', out: 'cli', banner: '#!/usr/bin/env node' },
  { in: 'server/main.ts', out: 'server' },
  { in: 'client/extension.ts', out: 'extension' },
];

await Promise.all(
  entries.map((e) =>
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
      // tfjs loads .wasm files and native addons relative to its own package, so it stays in node_modules.
      external: ['vscode', '@tensorflow/*', 'webgpu'],
      define: { __VERSION__: JSON.stringify(version) },
      logLevel: 'warning',
    }),
  ),
);
