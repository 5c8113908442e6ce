/**
 * The test set-up's corpus fetch, against a real git repository built here in Trinity-RFT's shape (a tagged
 * release and a newer main): configs are picked by their top-level keys, `tests/template/data/` becomes `data/`,
 * a commit that is not the pinned one is refused and leaves no corpus behind, and `npm test` without any corpus
 * and without network stops before running anything with one message on how to provide it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
// @ts-expect-error: a plain .mjs module (the set-up runs before any build), no declaration file
import { fetchCorpus, locateCorpus } from './corpus-source.mjs';

const ROOT = join(__dirname, '..', '..');

function sh(cwd: string, ...args: string[]): string {
  const r = spawnSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@t',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@t',
    },
  });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim();
}

function put(dir: string, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
}

function tree(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d, { withFileTypes: true })) {
      if (name.isDirectory()) walk(join(d, name.name));
      else out.push(relative(dir, join(d, name.name)));
    }
  };
  walk(dir);
  return out.sort();
}

/** A repository with a release tag `v1` and, one commit later, `main`. */
function upstream(): { url: string; v1: string; main: string } {
  const dir = mkdtempSync(join(tmpdir(), 'trinity-upstream-'));
  sh(dir, 'init', '-q', '-b', 'main');
  put(dir, {
    'examples/grpo/grpo.yaml': 'project: p\nmode: both\nmodel:\n  model_path: m\nbuffer:\n  batch_size: 4\n',
    'examples/grpo/notes.yaml': 'title: not a config\nitems: [1, 2]\n',
    'examples/two-keys.yaml': 'model: {}\nbuffer: {}\n',
    'examples/broken.yaml': 'mode: both\n  project: [\n',
    'tests/template/data/gsm8k/train.jsonl': '{"question": "1+1", "answer": "2"}\n',
    'README.md': 'readme\n',
  });
  sh(dir, 'add', '.');
  sh(dir, 'commit', '-q', '-m', 'v1');
  sh(dir, 'tag', 'v1');
  const v1 = sh(dir, 'rev-parse', 'HEAD');
  put(dir, {
    'examples/sft/sft.yml': 'mode: train\nalgorithm:\n  algorithm_type: sft\ntrainer: {}\n',
    'tests/template/data/gsm8k/test.jsonl': '{"question": "2+2", "answer": "4"}\n',
  });
  sh(dir, 'add', '.');
  sh(dir, 'commit', '-q', '-m', 'main');
  return { url: dir, v1, main: sh(dir, 'rev-parse', 'HEAD') };
}

test('the corpus is extracted from the repository: configs by their root keys, data from the data release', async () => {
  const up = upstream();
  const cache = mkdtempSync(join(tmpdir(), 'trinity-cache-'));
  const { dir, counts } = await fetchCorpus(up.url, cache, [
    { release: 'v1', ref: 'refs/tags/v1', commit: up.v1.slice(0, 7) },
    { release: 'main', ref: 'refs/heads/main', commit: up.main.slice(0, 7), since: '2000-01-01' },
  ]);
  assert.equal(dir, join(cache, 'corpus'));
  assert.deepEqual(counts, { v1: 1, main: 2 });
  assert.deepEqual(tree(dir), [
    'README.md',
    'data/gsm8k/test.jsonl',
    'data/gsm8k/train.jsonl',
    'trinity-configs/main/examples/grpo/grpo.yaml',
    'trinity-configs/main/examples/sft/sft.yml',
    'trinity-configs/v1/examples/grpo/grpo.yaml',
  ]);
  assert.equal(
    readFileSync(join(dir, 'trinity-configs/v1/examples/grpo/grpo.yaml'), 'utf8'),
    readFileSync(join(up.url, 'examples/grpo/grpo.yaml'), 'utf8'),
  );
  assert.ok(!existsSync(`${dir}.partial`));
});

test('a release that does not resolve to its pinned commit is refused and leaves no corpus', async () => {
  const up = upstream();
  const cache = mkdtempSync(join(tmpdir(), 'trinity-cache-'));
  await assert.rejects(
    fetchCorpus(up.url, cache, [{ release: 'v1', ref: 'refs/tags/v1', commit: up.main.slice(0, 7) }]),
    new RegExp(`v1: refs/tags/v1 is ${up.v1.slice(0, 7)}, not the pinned ${up.main.slice(0, 7)}`),
  );
  assert.ok(!existsSync(join(cache, 'corpus')));
});

test('locateCorpus: an explicit TRINITY_CORPUS_DIR is the only candidate', () => {
  const saved = process.env.TRINITY_CORPUS_DIR;
  try {
    const good = mkdtempSync(join(tmpdir(), 'corpus-'));
    mkdirSync(join(good, 'trinity-configs'));
    mkdirSync(join(good, 'data'));
    process.env.TRINITY_CORPUS_DIR = good;
    assert.equal(locateCorpus(ROOT), good);
    process.env.TRINITY_CORPUS_DIR = join(good, 'nothing-here');
    assert.equal(locateCorpus(ROOT), undefined);
  } finally {
    if (saved === undefined) delete process.env.TRINITY_CORPUS_DIR;
    else process.env.TRINITY_CORPUS_DIR = saved;
  }
});

test('npm test with no corpus and no way to fetch one stops before running anything, saying how to provide it', () => {
  // A copy of the repository's set-up with this checkout's installed parts, in a folder with no ../shared/corpus.
  const base = mkdtempSync(join(tmpdir(), 'fresh-'));
  const repo = join(base, 'repo');
  cpSync(join(ROOT, 'test', 'setup'), join(repo, 'test', 'setup'), { recursive: true });
  cpSync(join(ROOT, 'setup'), join(repo, 'setup'), { recursive: true });
  cpSync(join(ROOT, 'runtime', 'config', 'root-keys.json'), join(repo, 'runtime', 'config', 'root-keys.json'));
  symlinkSync(join(ROOT, 'node_modules'), join(repo, 'node_modules'));
  mkdirSync(join(repo, 'native', 'blas-matmul'), { recursive: true });
  symlinkSync(join(ROOT, 'native', 'blas-matmul', 'build'), join(repo, 'native', 'blas-matmul', 'build'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TRINITY_WORKBENCH_CACHE: join(base, 'cache'),
    TRINITY_RFT_GIT_URL: join(base, 'no-such-repo'),
  };
  delete env.TRINITY_CORPUS_DIR;
  const r = spawnSync(process.execPath, [join(repo, 'test', 'setup', 'prepare.mjs')], {
    cwd: repo,
    env,
    encoding: 'utf8',
  });
  assert.equal(r.status, 1, r.stdout + r.stderr);
  assert.match(r.stderr, /npm test cannot start:/);
  assert.match(r.stderr, /no Trinity corpus, and it could not be fetched: git fetch .* failed/);
  assert.match(r.stderr, /set TRINITY_CORPUS_DIR to a folder holding trinity-configs\/<release>\/ and data\//);
  assert.ok(!existsSync(join(base, 'cache', 'corpus')));
  rmSync(base, { recursive: true, force: true });
});
