// Writes the arithmetic demo's datasets (our own, generated): every sum a + b of two digits, the answers in
// \boxed{} so Trinity's math_boxed_reward scores them. sft.jsonl: demonstrations for the warm-up stage;
// train.jsonl: the GRPO taskset; eval.jsonl: every problem, for eval accuracy.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, 'data');
mkdirSync(out, { recursive: true });

// A small deterministic generator (mulberry32), so the files are the same on every machine.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const problems = [];
for (let a = 0; a <= 9; a++)
  for (let b = 0; b <= 9; b++) problems.push({ question: `${a}+${b}`, answer: String(a + b) });
const rand = rng(20261129);
const shuffled = [...problems];
for (let i = shuffled.length - 1; i > 0; i--) {
  const j = Math.floor(rand() * (i + 1));
  [shuffled[i], shuffled[j]] = [shuffled[j], shuffled[i]];
}
const lines = (rows) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';

writeFileSync(
  join(out, 'sft.jsonl'),
  lines(shuffled.map((p) => ({ question: p.question, answer: `\\boxed{${p.answer}}` }))),
);
writeFileSync(join(out, 'train.jsonl'), lines(shuffled));
writeFileSync(join(out, 'eval.jsonl'), lines(problems));
console.log(`wrote ${problems.length} problems to ${out}`);
