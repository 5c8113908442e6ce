/**
 * npm ci on a machine without OpenBLAS: the addon's postinstall says in one line that the native matmul is off,
 * why, and the fix, and succeeds (the engine runs on plain wasm); under --strict (the test set-up) it is an error.
 * A `cc` that cannot find cblas.h stands in for the missing package; the check stops before node-gyp touches the
 * built addon.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const BUILD = join(__dirname, '..', '..', 'native', 'blas-matmul', 'build.mjs');

function withoutOpenBlas(...args: string[]) {
  const bin = mkdtempSync(join(tmpdir(), 'no-openblas-'));
  writeFileSync(
    join(bin, 'cc'),
    // Reads its input as cc does: a stand-in that exits first makes the build's write fail with EPIPE.
    '#!/bin/sh\ncat >/dev/null\necho "<stdin>:1:10: fatal error: cblas.h: No such file or directory" >&2\nexit 1\n',
  );
  chmodSync(join(bin, 'cc'), 0o755);
  return spawnSync(process.execPath, [BUILD, ...args], {
    encoding: 'utf8',
    env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
  });
}

test('without OpenBLAS the postinstall prints one line (off, why, the fix) and succeeds', () => {
  const r = withoutOpenBlas();
  assert.equal(r.status, 0);
  assert.equal(r.stdout, '');
  const lines = r.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, r.stderr);
  assert.match(
    lines[0],
    /^native\/blas-matmul: off \(cblas\.h not found: OpenBLAS is not installed\); the engine runs on plain wasm.*apt-get install libopenblas-dev, then npm run build:native$/,
  );
});

test('without OpenBLAS a strict build (the test set-up) fails and says how to fix it', () => {
  const r = withoutOpenBlas('--strict');
  assert.equal(r.status, 1);
  assert.match(
    r.stderr,
    /error: native\/blas-matmul: cblas\.h not found.*\n  To build it: apt-get install libopenblas-dev/,
  );
});
