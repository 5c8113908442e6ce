// Writes the arithmetic demo's datasets (our own, generated): every sum a + b of two digits, the answers in
// \boxed{} so Trinity's math_boxed_reward scores them. sft.jsonl: demonstrations for the warm-up stage;
// train.jsonl: the GRPO taskset; eval.jsonl: every problem, for eval accuracy.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { jsonLines, seededRandom } from '../seeded-random.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, 'data');
mkdirSync(out, { recursive: true });

const problems = [];
for (let a = 0; a <= 9; a++)
  for (let b = 0; b <= 9; b++) problems.push({ question: `${a}+${b}`, answer: String(a + b) });
const rand = seededRandom(20261129);
const shuffled = [...problems];
for (let i = shuffled.length - 1; i > 0; i--) {
  const j = Math.floor(rand() * (i + 1));
  [shuffled[i], shuffled[j]] = [shuffled[j], shuffled[i]];
}

writeFileSync(
  join(out, 'sft.jsonl'),
  jsonLines(shuffled.map((p) => ({ question: p.question, answer: `\\boxed{${p.answer}}` }))),
);
writeFileSync(join(out, 'train.jsonl'), jsonLines(shuffled));
writeFileSync(join(out, 'eval.jsonl'), jsonLines(problems));
console.log(`wrote ${problems.length} problems to ${out}`);
