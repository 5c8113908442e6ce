/**
 * The float64 reference numbers of the algorithm tests, regenerated: `node --import tsx
 * test/runtime/rft/algorithm/reference/generate.ts` prints them as JSON, under the names the expected-value modules
 * (advantage-expected.ts, kl-expected.ts) export them; reference-numbers.test.ts compares the two.
 */
import { groupReference, trainerReference } from './advantage';
import { klReference } from './kl';

export function references() {
  return { advantage: { GROUP: groupReference(), TRAINER: trainerReference() }, kl: klReference() };
}

if (require.main === module) console.log(JSON.stringify(references(), null, 2));
