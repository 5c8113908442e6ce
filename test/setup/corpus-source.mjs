// Where the tests' Trinity-RFT corpus comes from: an existing folder ($TRINITY_CORPUS_DIR, ../shared/corpus, or
// one this module built earlier in the cache), else Trinity-RFT's own repository at the pinned commits, from which
// the configs and datasets are extracted by the same rule the shared corpus was made with. The corpus is Trinity's,
// not ours: it lives outside the repository (the cache dir) and is never committed.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

export const TRINITY_RFT_URL = 'https://github.com/agentscope-ai/Trinity-RFT.git';

/**
 * The releases the corpus holds: `ref` is what is fetched (a tag, or main back to `since`), `commit` the abbreviated
 * commit it must resolve to (runtime/config/releases.ts names the same commits).
 */
export const CORPUS_RELEASES = [
  { release: 'v0.2.0', ref: 'refs/tags/v0.2.0', commit: 'c8dec22' },
  { release: 'v0.3.0', ref: 'refs/tags/v0.3.0', commit: '7d2323f' },
  { release: 'v0.3.1', ref: 'refs/tags/v0.3.1', commit: 'c04b993' },
  { release: 'v0.3.2', ref: 'refs/tags/v0.3.2', commit: '30ca213' },
  { release: 'v0.4.0', ref: 'refs/tags/v0.4.0', commit: '4b27dff' },
  { release: 'v0.5.0', ref: 'refs/tags/v0.5.0', commit: 'fdfdc7b' },
  { release: 'v0.5.2', ref: 'refs/tags/v0.5.2', commit: 'eedef4b' },
  { release: 'main', ref: 'refs/heads/main', commit: '10796ed', since: '2026-04-20' },
];

/** The release whose `tests/template/data/` becomes the corpus' `data/`. */
export const DATA_RELEASE = 'main';
const DATA_DIR = 'tests/template/data/';

/** Trinity's root sections (runtime/config/root-keys.json, which the editor's config detection reads too). */
function rootKeys() {
  const url = new URL('../../runtime/config/root-keys.json', import.meta.url);
  return new Set(JSON.parse(readFileSync(url, 'utf8')).rootKeys);
}

export function cacheDir() {
  return process.env.TRINITY_WORKBENCH_CACHE ?? join(homedir(), '.cache', 'trinity-workbench');
}

const isCorpus = (dir) => existsSync(join(dir, 'trinity-configs')) && existsSync(join(dir, 'data'));

/**
 * The corpus folder to use, or undefined. An explicit $TRINITY_CORPUS_DIR is the only candidate when set (a wrong
 * path is the user's to fix, not to paper over); otherwise ../shared/corpus from the repository root, then the cache.
 */
export function locateCorpus(repoRoot) {
  if (process.env.TRINITY_CORPUS_DIR) {
    const dir = resolve(repoRoot, process.env.TRINITY_CORPUS_DIR);
    return isCorpus(dir) ? dir : undefined;
  }
  return [resolve(repoRoot, '..', 'shared', 'corpus'), join(cacheDir(), 'corpus')].find(isCorpus);
}

/**
 * A YAML file is a Trinity config when at least three of its top-level keys are Trinity's root sections. `parse` is
 * the `yaml` package's (imported by the caller: this module loads before npm ci has run).
 */
export function isTrinityConfig(text, parse, keys = rootKeys()) {
  let doc;
  try {
    doc = parse(text);
  } catch {
    return false;
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return false;
  return Object.keys(doc).filter((k) => keys.has(k)).length >= 3;
}

function git(gitDir, args, opts = {}) {
  const r = spawnSync('git', ['--git-dir', gitDir, ...args], {
    encoding: opts.binary ? 'buffer' : 'utf8',
    maxBuffer: 1 << 28,
  });
  if (r.error) throw new Error(`git did not run: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`git ${args.join(' ')} failed: ${String(r.stderr).trim().split('\n').pop()}`);
  return r.stdout;
}

/** Fetches one release into the bare repository and returns its full commit, checked against the pinned one. */
function fetchRelease(gitDir, url, { release, ref, commit, since }) {
  const depth = since ? [`--shallow-since=${since}`] : ['--depth=1'];
  git(gitDir, ['fetch', '--quiet', '--no-tags', ...depth, url, `+${ref}:refs/corpus/${release}`]);
  const full = since
    ? git(gitDir, ['rev-parse', '--verify', '--quiet', `${commit}^{commit}`]).trim()
    : git(gitDir, ['rev-parse', `refs/corpus/${release}^{commit}`]).trim();
  if (!full.startsWith(commit)) throw new Error(`${release}: ${ref} is ${full.slice(0, 7)}, not the pinned ${commit}`);
  return full;
}

/**
 * Builds the corpus from Trinity-RFT's repository at `url` into `<cache>/corpus` (atomically: a half-fetched corpus is
 * never left where locateCorpus looks). Returns the folder and what it holds per release.
 */
export async function fetchCorpus(url = TRINITY_RFT_URL, cache = cacheDir(), releases = CORPUS_RELEASES) {
  const { parse } = await import('yaml');
  const keys = rootKeys();
  const gitDir = join(cache, 'trinity-rft.git');
  if (!existsSync(gitDir)) {
    mkdirSync(gitDir, { recursive: true });
    git(gitDir, ['init', '--quiet', '--bare']);
  }
  const target = join(cache, 'corpus');
  const staging = `${target}.partial`;
  rmSync(staging, { recursive: true, force: true });
  const counts = {};
  for (const rel of releases) {
    const commit = fetchRelease(gitDir, url, rel);
    const paths = git(gitDir, ['ls-tree', '-r', '-z', '--name-only', commit]).split('\0').filter(Boolean);
    counts[rel.release] = 0;
    for (const path of paths) {
      const isData = rel.release === DATA_RELEASE && path.startsWith(DATA_DIR);
      const isYaml = /\.ya?ml$/.test(path);
      if (!isData && !isYaml) continue;
      const bytes = git(gitDir, ['cat-file', 'blob', `${commit}:${path}`], { binary: true });
      if (isYaml && isTrinityConfig(bytes.toString('utf8'), parse, keys)) {
        write(join(staging, 'trinity-configs', rel.release, path), bytes);
        counts[rel.release]++;
      }
      if (isData) write(join(staging, 'data', path.slice(DATA_DIR.length)), bytes);
    }
  }
  mkdirSync(join(staging, 'data'), { recursive: true });
  writeFileSync(
    join(staging, 'README.md'),
    `Trinity-RFT's files (Apache-2.0), extracted from ${url} by test/setup/corpus-source.mjs. Not ours: never commit them.\n`,
  );
  rmSync(target, { recursive: true, force: true });
  renameSync(staging, target);
  return { dir: target, counts };
}

function write(file, bytes) {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, bytes);
}
