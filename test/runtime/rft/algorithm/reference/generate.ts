/**
 * The float64 reference numbers of the algorithm tests, regenerated: `node --import tsx
 * test/runtime/rft/algorithm/reference/generate.ts` prints them as JSON, under the names the expected-value modules
 * (advantage-expected.ts, kl-expected.ts, kl-loss-expected.ts, policy-loss-expected.ts) export them;
 * reference-numbers.test.ts compares the two. The policy-loss and KL-loss numbers are printed as committed: rounded
 * to 10 significant digits.
 */
import { groupReference, trainerReference } from './advantage';
import { klLossReference, klReference } from './kl';
import { policyLossReference } from './policy-loss';

/** Every number in `x` rounded to `digits` significant digits (-0 becomes 0). */
export function rounded<T>(x: T, digits = 10): T {
  if (typeof x === 'number') return (x === 0 ? 0 : Number(x.toPrecision(digits))) as T;
  if (Array.isArray(x)) return x.map((v) => rounded(v, digits)) as T;
  if (typeof x === 'object' && x !== null)
    return Object.fromEntries(Object.entries(x).map(([k, v]) => [k, rounded(v, digits)])) as T;
  return x;
}

export function references() {
  return {
    advantage: { GROUP: groupReference(), TRAINER: trainerReference() },
    kl: klReference(),
    klLoss: { KL_LOSS: rounded(klLossReference()) },
    policyLoss: { EXPECTED: rounded(policyLossReference()) },
  };
}

if (require.main === module) console.log(JSON.stringify(references(), null, 2));
