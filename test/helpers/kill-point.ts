/**
 * Random kill points for the kill-and-resume tests, drawn from a seed that is printed, so a failure at one point can
 * be run again at exactly that point: `TRINITY_TEST_SEED=<seed> node test/run.mjs <file>`.
 */
const SEED = Number(process.env.TRINITY_TEST_SEED ?? Date.now() % 2 ** 31);

/** The seed the kill points of this process are drawn from. */
export const TEST_SEED = SEED;

/** A stream of numbers in [0, 1) for `name`, the same for the same seed and name (mulberry32). */
export function seededRandom(name: string): () => number {
  let h = SEED >>> 0;
  for (const ch of name) h = Math.imul(h ^ ch.charCodeAt(0), 0x9e3779b1) >>> 0;
  return () => {
    h = (h + 0x6d2b79f5) >>> 0;
    let t = Math.imul(h ^ (h >>> 15), h | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/** An integer in [lo, hi], the same for the same seed and name. */
export function killPoint(name: string, lo: number, hi: number): number {
  const k = lo + Math.floor(seededRandom(name)() * (hi - lo + 1));
  console.log(`# kill point "${name}": ${k} of ${lo}..${hi} (TRINITY_TEST_SEED=${SEED})`);
  return k;
}
