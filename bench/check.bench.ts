/**
 * `npm run bench:check`: median time to check each corpus config with trinity-workbench (load + launch checks +
 * run-time checks, no dataset I/O), next to yaml-language-server validating the same text against the same
 * generated JSON Schema, in the same process and run. Reports per-file medians and the ratio.
 *
 * Both sides are warmed up first; each file is checked REPEATS times and the median is kept, so the numbers are
 * steady-state per-keystroke costs, not start-up.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { getLanguageService, SchemaPriority } from 'yaml-language-server';
import { loadConfig } from '../runtime/config/load/load-config';
import { RELEASES, type Release } from '../runtime/config/releases';
import { checkLoaded } from '../runtime/config/check-config';
import { corpusConfigs, TRINITY_ENV } from '../test/helpers/corpus';

const REPEATS = Number(process.env.BENCH_REPEATS ?? 15);

interface Sample {
  release: Release;
  file: string;
  bytes: number;
  ours: number;
  peer: number;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

async function main(): Promise<void> {
  const root = join(__dirname, '..');
  const samples: Sample[] = [];
  let version = 0;
  for (const release of RELEASES) {
    const schema = JSON.parse(readFileSync(join(root, 'schemas', `trinity-${release}.schema.json`), 'utf8'));
    const uri = `trinity://schema/${release}.json`;
    const ls = getLanguageService({
      schemaRequestService: async () => JSON.stringify(schema),
      workspaceContext: { resolveRelativePath: (rel: string, res: string) => new URL(rel, res).toString() },
    });
    ls.configure({
      validate: true,
      hover: false,
      completion: false,
      format: false,
      isKubernetes: false,
      yamlVersion: '1.1',
      schemas: [{ uri, fileMatch: ['*'], schema, priority: SchemaPriority.Settings }],
    });

    const files = corpusConfigs(release).map((f) => ({ rel: f.rel, text: readFileSync(f.abs, 'utf8') }));
    const ours = (text: string) => checkLoaded(loadConfig(text, { release, env: TRINITY_ENV }));
    // Every validation gets a new document version, as an editor sends after each keystroke: no cached parse.
    const peer = (rel: string, text: string) =>
      ls.doValidation(TextDocument.create(`file:///${release}/${rel}`, 'yaml', ++version, text), false);

    for (const f of files.slice(0, 5)) {
      ours(f.text);
      await peer(f.rel, f.text);
    }
    for (const f of files) {
      const a: number[] = [];
      const b: number[] = [];
      for (let i = 0; i < REPEATS; i++) {
        // Alternate the order so neither side always runs on a warmer cache.
        if (i % 2 === 0) {
          let t = performance.now();
          ours(f.text);
          a.push(performance.now() - t);
          t = performance.now();
          await peer(f.rel, f.text);
          b.push(performance.now() - t);
        } else {
          let t = performance.now();
          await peer(f.rel, f.text);
          b.push(performance.now() - t);
          t = performance.now();
          ours(f.text);
          a.push(performance.now() - t);
        }
      }
      samples.push({ release, file: f.rel, bytes: f.text.length, ours: median(a), peer: median(b) });
    }
  }

  const ours = median(samples.map((s) => s.ours));
  const peer = median(samples.map((s) => s.peer));
  const largest = [...samples].sort((x, y) => y.bytes - x.bytes).slice(0, 5);
  const lines = [
    `check benchmark: ${samples.length} corpus configs across ${RELEASES.length} releases, ${REPEATS} runs each (median per file)`,
    '',
    '| | median ms / file | p90 ms / file | ratio to yaml-language-server |',
    '|---|---|---|---|',
    `| trinity-workbench check (schema + interpolation + all Trinity rules) | ${ours.toFixed(3)} | ${p90(samples.map((s) => s.ours)).toFixed(3)} | ${(ours / peer).toFixed(2)}x |`,
    `| yaml-language-server 1.25 doValidation (same schema) | ${peer.toFixed(3)} | ${p90(samples.map((s) => s.peer)).toFixed(3)} | 1.00x |`,
    '',
    'Largest files:',
    ...largest.map(
      (s) =>
        `  ${s.release}/${s.file} (${s.bytes} B): ours ${s.ours.toFixed(3)} ms, yaml-language-server ${s.peer.toFixed(3)} ms, ratio ${(s.ours / s.peer).toFixed(2)}x`,
    ),
    '',
    `Target: within 1.5x of yaml-language-server — ${ours / peer <= 1.5 ? 'met' : 'NOT met'} (${(ours / peer).toFixed(2)}x).`,
  ];
  console.log(lines.join('\n'));
}

function p90(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * 0.9))];
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
