/**
 * Which Trinity release is installed in the user's Python: asked once by running the interpreter. A stand-in
 * interpreter (a script answering like `importlib.metadata.version('trinity-rft')`) plays the installed package;
 * a missing interpreter or package means "no opinion", never an error.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { detectTrinityRelease } from '../../server/host/python';

function fakePython(body: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'tw-py-'));
  const p = join(dir, 'python');
  writeFileSync(p, `#!/bin/sh\n${body}\n`);
  chmodSync(p, 0o755);
  return p;
}

test('an installed trinity-rft selects its release', async () => {
  assert.equal(await detectTrinityRelease(fakePython('echo 0.4.0')), 'v0.4.0');
  assert.equal(await detectTrinityRelease(fakePython('echo 0.5.2.dev0')), 'v0.5.0');
});

test('the interpreter is asked with importlib.metadata for the trinity-rft distribution', async () => {
  const py = fakePython('case "$2" in *"importlib.metadata"*"trinity-rft"*) echo 0.3.1;; *) exit 3;; esac');
  assert.equal(await detectTrinityRelease(py), 'v0.3.1');
});

test('no Python, or no trinity-rft in it, gives no release', async () => {
  assert.equal(await detectTrinityRelease(join(tmpdir(), 'no-such-python')), undefined);
  assert.equal(
    await detectTrinityRelease(fakePython('echo "PackageNotFoundError: trinity-rft" >&2; exit 1')),
    undefined,
  );
});
