/** Shared by the data tests: a scratch directory per file, and assertions that a DataError names what it should. */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before } from 'node:test';
import { DataError } from '../../../../runtime/config/datasets/data-error';

export interface Scratch {
  /** The directory (set before the file's first test). */
  readonly path: string;
  /** Writes `content` to `rel` under the directory, creating folders; returns the absolute path. */
  write(rel: string, content: string | Uint8Array): string;
}

/** A temporary directory created before this test file's tests and removed after them. */
export function scratchDir(prefix: string): Scratch {
  let dir = '';
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return {
    get path() {
      return dir;
    },
    write(rel, content) {
      const abs = path.join(dir, rel);
      fs.mkdirSync(path.dirname(abs), { recursive: true });
      fs.writeFileSync(abs, content);
      return abs;
    },
  };
}

function checkDataError(e: unknown, re: RegExp): DataError {
  assert.ok(e instanceof DataError, `expected a DataError, got ${String(e)}`);
  assert.match(e.message, re);
  return e;
}

export async function rejectsDataError(p: Promise<unknown>, re: RegExp): Promise<DataError> {
  try {
    await p;
  } catch (e) {
    return checkDataError(e, re);
  }
  assert.fail(`expected an error matching ${re}`);
}

export function throwsDataError(fn: () => unknown, re: RegExp): DataError {
  try {
    fn();
  } catch (e) {
    return checkDataError(e, re);
  }
  assert.fail(`expected an error matching ${re}`);
}
