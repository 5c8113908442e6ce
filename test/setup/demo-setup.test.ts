/**
 * `npm run demo`'s set-up (setup/demo.mjs) on a machine without OpenBLAS: the package check says it is missing (a
 * stub: this machine has it), and the commands it would run are recorded instead of run (apt-get would change the
 * machine; the addon build rewrites native/blas-matmul/build while other tests load it). What runs for real: the
 * build-tools check, the check that the built addon loads in this Node, and the whole set-up script as `npm run demo`
 * runs it, which has nothing to do here and says nothing.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
// @ts-expect-error: plain .mjs modules (the set-up runs before any build), no declaration files
import { BUILD_TOOLS, OPENBLAS } from '../../setup/debian-packages.mjs';
// @ts-expect-error: as above
import { prepareDemo } from '../../setup/demo.mjs';
// @ts-expect-error: as above
import { addonLoads } from '../../setup/openblas-addon.mjs';

const ROOT = join(__dirname, '..', '..');

/** A machine without OpenBLAS until `apt-get install` has run, and without the addon until it is built. */
function freshMachine(opts: { apt: string[] | null; aptSucceeds?: boolean }) {
  const ran: string[] = [];
  let installed = false;
  let built = false;
  const openblas = { ...OPENBLAS, present: () => installed };
  const result = prepareDemo({
    needs: [BUILD_TOOLS, openblas],
    apt: opts.apt,
    run: (argv: string[]) => {
      ran.push(argv.join(' '));
      if (argv.includes('install') && opts.aptSucceeds !== false) installed = true;
      return installed;
    },
    loads: () => built && addonLoads(),
    build: () => {
      ran.push('build the addon');
      built = installed;
      return built;
    },
    log: (line: string) => ran.push(`log: ${line}`),
  });
  return { result, ran };
}

test('as root: apt-get installs OpenBLAS first, then the addon is built, and the demo has the OpenBLAS matmul', () => {
  assert.ok(BUILD_TOOLS.present(), 'this machine has cc, make and python3');
  const { result, ran } = freshMachine({ apt: ['apt-get'] });
  assert.equal(result, 'openblas');
  assert.deepEqual(ran, [
    'log: installing libopenblas-dev (apt-get)',
    'apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends libopenblas-dev',
    'log: building the native OpenBLAS matmul addon',
    'build the addon',
  ]);
});

test('with password-less sudo the same through sudo', () => {
  const { result, ran } = freshMachine({ apt: ['sudo', 'apt-get'] });
  assert.equal(result, 'openblas');
  assert.match(ran[1], /^sudo apt-get .* install .*libopenblas-dev$/);
});

test('without the rights to install: one line naming the command, nothing run, the demo on plain wasm', () => {
  const { result, ran } = freshMachine({ apt: null });
  assert.equal(result, 'plain-wasm');
  assert.equal(ran.length, 1, ran.join('\n'));
  assert.match(
    ran[0],
    /^log: OpenBLAS is missing and this user may not install it; .* For full speed: sudo apt-get install -y libopenblas-dev && npm run build:native$/,
  );
});

test('apt-get fails (after one update and retry): says so, builds nothing, the demo on plain wasm', () => {
  const { result, ran } = freshMachine({ apt: ['apt-get'], aptSucceeds: false });
  assert.equal(result, 'plain-wasm');
  assert.deepEqual(
    ran.map((r) =>
      r
        .replace(/ -o DPkg::Lock::Timeout=300/, '')
        .split(' ')
        .slice(0, 2)
        .join(' '),
    ),
    ['log: installing', 'apt-get install', 'apt-get update', 'apt-get install', 'log: apt-get'],
  );
});

test('on this machine (OpenBLAS and the addon present): the real set-up runs nothing and prints nothing', () => {
  const r = spawnSync(process.execPath, [join(ROOT, 'setup', 'demo.mjs')], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout + r.stderr, '');
});
