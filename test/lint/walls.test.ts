/**
 * The walls of ARCHITECTURE.md are kept by ESLint (eslint.config.mjs), not by habit: an import across each wall is
 * an error naming the wall, and the imports each layer is allowed stay clean. Linted with the project's own config
 * through ESLint's API, on text placed at real paths (the import rules resolve the imported files).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { ESLint } from 'eslint';

const ROOT = join(__dirname, '..', '..');
const eslint = new ESLint({ cwd: ROOT });

async function problems(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: join(ROOT, file) });
  return result.messages.map((m) => m.message);
}

const crossings: [file: string, importing: string, wall: RegExp][] = [
  ['runtime/config/probe.ts', '../rft/experience', /runtime\/config imports nothing from the rest of runtime/],
  [
    'runtime/config/check/probe.ts',
    '../../engine/backend/init',
    /runtime\/config imports nothing from the rest of runtime/,
  ],
  ['runtime/engine/probe.ts', '../config/releases', /runtime\/engine knows nothing of Trinity configs/],
  ['runtime/engine/probe.ts', '../rft/experience', /runtime\/engine knows nothing of Trinity configs/],
  ['runtime/metrics/probe.ts', '../protocol', /runtime\/metrics imports nothing from the rest of runtime/],
  ['runtime/metrics/probe.ts', '../engine/backend/init', /runtime\/metrics imports nothing from the rest of runtime/],
  ['runtime/rft/probe.ts', '../../client/dashboard/messages', /runtime\/ never imports the extension/],
  ['runtime/rft/probe.ts', 'vscode', /only client\/ may import vscode/],
  ['server/service/probe.ts', 'vscode-languageserver/node', /the LSP library belongs to server\/host/],
  ['server/service/probe.ts', 'vscode', /only client\/ may import vscode/],
  ['runtime/rft/run/modes/probe.ts', '../../trainer/train-step', /a mode module only decides the order of work/],
  ['runtime/rft/run/modes/probe.ts', '../../explorer/explore-step', /a mode module only decides the order of work/],
  ['runtime/rft/run/modes/probe.ts', '../../../engine/pretrained', /a mode module only decides the order of work/],
  ['runtime/rft/run/modes/probe.ts', '../stage/load-model', /a mode module only decides the order of work/],
  ['server/host/probe.ts', '../../client/dashboard/messages', /server\/ never imports the extension/],
  ['media/dashboard/probe.ts', '../../client/dashboard/panel', /media\/ knows only client\/dashboard\/messages\.ts/],
  ['media/dashboard/probe.ts', '../../runtime/protocol', /media\/ knows only client\/dashboard\/messages\.ts/],
  [
    'client/dashboard/probe.ts',
    '../../runtime/config/check-config',
    /client\/ reaches the runtime only through its process/,
  ],
  ['client/probe.ts', '../runtime/rft/experience', /client\/ reaches the runtime only through its process/],
  ['client/probe.ts', '../server/service/hover', /client\/ talks to the server only through the LSP messages/],
];

for (const [file, importing, wall] of crossings) {
  test(`${file} importing ${importing} is an error`, async () => {
    const found = await problems(file, `import * as x from '${importing}';\nexport const y = x;\n`);
    assert.equal(found.length, 1, found.join('\n'));
    assert.match(found[0], wall);
  });
}

const allowed: [file: string, importing: string][] = [
  ['runtime/config/check/probe.ts', '../releases'],
  ['runtime/rft/probe.ts', '../config/releases'],
  ['runtime/rft/run/modes/probe.ts', '../trainer-side/trainer-side'],
  ['runtime/rft/run/modes/probe.ts', '../explorer-side/explorer-side'],
  ['runtime/metrics/probe.ts', './types'],
  ['runtime/metrics/probe.ts', '../engine/weights/safetensors'],
  ['server/host/probe.ts', 'vscode-languageserver/node'],
  ['media/dashboard/probe.ts', '../../client/dashboard/messages'],
  ['client/probe.ts', 'vscode'],
  ['client/probe.ts', '../runtime/protocol'],
  ['client/probe.ts', '../runtime/run-records'],
  ['client/probe.ts', '../runtime/metrics/csv'],
  ['client/probe.ts', '../runtime/config/detect'],
  ['client/probe.ts', '../server/lsp-messages'],
];

for (const [file, importing] of allowed) {
  test(`${file} importing ${importing} is allowed`, async () => {
    assert.deepEqual(await problems(file, `import * as x from '${importing}';\nexport const y = x;\n`), []);
  });
}
