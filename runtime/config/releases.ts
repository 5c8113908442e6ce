/** Trinity-RFT releases whose config schema this project models, oldest first. */
export const RELEASES = ['v0.3.0', 'v0.3.1', 'v0.3.2', 'v0.4.0', 'v0.5.0', 'v0.5.2', 'main'] as const;

export type Release = (typeof RELEASES)[number];

/** The release a file is checked against when nothing else says which. */
export const NEWEST_RELEASE: Release = 'main';

/**
 * The upstream commit each release was read from (Trinity-RFT history).
 *
 * `main` is the newest state this project could read, not one commit. Its config dataclasses and launch checks
 * (trinity/common/config.py, config_validator.py) were read at `f3c8dec` (2026-06-25, {@link MAIN_FIELDS_COMMIT}),
 * the newest upstream commit a readable copy of the repository holds; registries, algorithm types and checks that a
 * public code index holds in newer versions name their own commit (e.g. `RegistryEntry.source`), and the README at
 * `0c34dfa` announces v0.6.0 as released (2026-06). At f3c8dec `trinity.__version__` is still "0.5.2": the v0.6.0
 * tag (f39a4d8bf3…) is a later commit whose tree could not be read (README.md says where it was looked for; a fork's
 * copy shows only its version string, and the docs site's v0.6.0 build matches f3c8dec where compared), so there is
 * no separate `v0.6.0` release and an installed 0.6.x maps to `main` (see parseRelease).
 */
export const RELEASE_COMMITS: Record<Release, string> = {
  'v0.3.0': '7d2323f',
  'v0.3.1': 'c04b993',
  'v0.3.2': '30ca213',
  'v0.4.0': '4b27dff',
  'v0.5.0': 'fdfdc7b',
  'v0.5.2': 'eedef4b',
  main: '0c34dfa',
};

/** When the modelled `main` was last moved forward, and the commit its config fields and launch checks were read at. */
export const MAIN_AS_OF = '2026-06-25';
export const MAIN_FIELDS_COMMIT = 'f3c8dec';

export function releaseIndex(r: Release): number {
  return RELEASES.indexOf(r);
}

/** True when `r` lies in the inclusive range [since, until]; an absent bound is open. */
export function inRange(r: Release, since?: Release, until?: Release): boolean {
  const i = releaseIndex(r);
  return (since === undefined || i >= releaseIndex(since)) && (until === undefined || i <= releaseIndex(until));
}

export function atLeast(r: Release, since: Release): boolean {
  return releaseIndex(r) >= releaseIndex(since);
}

/**
 * Maps what users write (`0.4.0`, `v0.4`, `0.5.2.dev0`, `latest`) to a modelled release.
 * A version between two modelled releases maps to the older one, whose schema it shares; one newer than the newest
 * numbered release (0.6.x, the newest on PyPI) maps to `main`.
 */
export function parseRelease(text: string): Release | undefined {
  const t = text.trim().toLowerCase();
  if (t === 'main' || t === 'latest' || t === 'newest') return 'main';
  const m = /^v?(\d+)\.(\d+)(?:\.(\d+))?/.exec(t);
  if (!m) return undefined;
  const want = [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)];
  const dev = /dev|rc|a\d|b\d/.test(t.slice(m[0].length));
  let best: Release | undefined;
  for (const r of RELEASES) {
    if (r === 'main') continue;
    const v = r.slice(1).split('.').map(Number);
    const cmp = v[0] - want[0] || v[1] - want[1] || v[2] - want[2];
    if (cmp < 0 || (cmp === 0 && !dev)) best = r;
  }
  const newest = RELEASES[RELEASES.length - 2].slice(1).split('.').map(Number);
  const beyond = want[0] - newest[0] || want[1] - newest[1] || want[2] - newest[2];
  if (beyond > 0) return 'main';
  return best;
}
