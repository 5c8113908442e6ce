// Writes the small datasets of the examples that follow Trinity's data formats (our own data, generated from a seed,
// so every example runs as it is from a fresh install and nothing reads Trinity's test files):
//   countdown/data, async/data   countdown tasks: `question`, and `answer` as the JSON {"numbers", "target"} that
//                                countdown_reward reads
//   gsm8k/data                   GSM8K-style word problems (`question`; `answer` ending in `#### N`) and SFT pairs
//                                (`prompt`; `response` in <think> </think> <answer> </answer> tags)
//   dpo/data                     preference pairs (`prompt`, `chosen`, `rejected`): a chatty reply over a stiff one
//   distill/data                 arithmetic questions (`question`, `answer`)
//   frozen-lake/data             FrozenLake tasks with the fields Trinity's get_frozen_lake_data.py writes (`seed`,
//                                `size`, `p`, `index`, `uid`): frozen_lake_workflow draws each task's map from them
//   node examples/make-example-data.mjs [--check]
// --check writes nothing and exits 1 when a committed file differs from what the script makes.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { jsonLines, seededRandom } from './seeded-random.mjs';

const here = dirname(fileURLToPath(import.meta.url));

function picker(seed) {
  const rand = seededRandom(seed);
  const int = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1));
  const pick = (xs) => xs[Math.floor(rand() * xs.length)];
  return { int, pick };
}

/** Countdown tasks whose target is reachable: a random equation over three numbers, evaluated. */
function countdownTasks(seed, count) {
  const { int, pick } = picker(seed);
  const tasks = [];
  while (tasks.length < count) {
    const nums = [int(1, 20), int(1, 20), int(1, 20)];
    const [a, b, c] = nums;
    const target = pick([a + b + c, a * b - c, (a + b) * c, a * b + c, a + b - c]);
    if (!Number.isInteger(target) || target <= 0 || target > 400) continue;
    tasks.push({
      question: `Make ${target} from the numbers ${nums.join(', ')}, each used once, with + - * /. Give the equation in <answer></answer>.`,
      answer: JSON.stringify({ numbers: nums, target }),
    });
  }
  return tasks;
}

const NAMES = ['Mia', 'Omar', 'Lena', 'Kai', 'Ravi', 'Zoe', 'Ines', 'Tom'];
const THINGS = ['apples', 'stickers', 'marbles', 'books', 'shells', 'coins'];

/** Two-step sums in GSM8K's shape: the worked answer with <<a+b=c>> calculator marks, then `#### N`. */
function wordProblems(seed, count) {
  const { int, pick } = picker(seed);
  return Array.from({ length: count }, () => {
    const [name, thing] = [pick(NAMES), pick(THINGS)];
    const [start, more, less] = [int(5, 30), int(2, 15), int(1, 9)];
    const mid = start + more;
    return {
      question: `${name} has ${start} ${thing}, gets ${more} more and gives away ${less}. How many ${thing} does ${name} have now?`,
      answer: `${name} has ${start}+${more} = <<${start}+${more}=${mid}>>${mid} ${thing}.\nThen ${mid}-${less} = <<${mid}-${less}=${mid - less}>>${mid - less}.\n#### ${mid - less}`,
      steps: `${start} + ${more} = ${mid}, ${mid} - ${less} = ${mid - less}`,
      result: mid - less,
    };
  });
}

const TOPICS = ['pizza', 'rainy days', 'jazz', 'board games', 'hiking', 'cats', 'old films', 'tea'];

/** Preference pairs: a warm, personal reply is chosen over a stiff disclaimer. */
function preferencePairs(seed, count) {
  const { pick } = picker(seed);
  return Array.from({ length: count }, () => {
    const topic = pick(TOPICS);
    return {
      prompt: pick([`Do you like ${topic}?`, `What do you think of ${topic}?`, `Any thoughts on ${topic}?`]),
      chosen: pick([`Oh, I love ${topic}! What got you asking?`, `Big fan of ${topic}, honestly. You too?`]),
      rejected: `As an AI language model, I have no opinions about ${topic}.`,
    };
  });
}

function arithmetic(seed, count) {
  const { int, pick } = picker(seed);
  return Array.from({ length: count }, () => {
    const [a, b, op] = [int(2, 49), int(2, 49), pick(['+', '-', '*'])];
    const value = op === '+' ? a + b : op === '-' ? a - b : a * b;
    return { question: `What is ${a} ${op} ${b}?`, answer: String(value) };
  });
}

/** FrozenLake tasks: small maps (size 3 or 4, 80% frozen) from distinct seeds. */
function frozenLakeTasks(seed, count, split) {
  const { int } = picker(seed);
  return Array.from({ length: count }, (_, index) => ({
    seed: int(0, 99999),
    size: int(3, 4),
    p: 0.8,
    index,
    uid: `${split}-${index}`,
  }));
}

const gsm = wordProblems(20261201, 12);
const files = {
  'countdown/data/train.jsonl': countdownTasks(20261202, 8),
  'countdown/data/test.jsonl': countdownTasks(20261203, 4),
  'async/data/train.jsonl': countdownTasks(20261204, 8),
  'gsm8k/data/train.jsonl': gsm.slice(0, 8).map(({ question, answer }) => ({ question, answer })),
  'gsm8k/data/test.jsonl': gsm.slice(8).map(({ question, answer }) => ({ question, answer })),
  'gsm8k/data/sft.jsonl': wordProblems(20261205, 8).map((p) => ({
    prompt: p.question,
    response: `<think> ${p.steps} </think>\n<answer> ${p.result} </answer>`,
  })),
  'dpo/data/train.jsonl': preferencePairs(20261206, 8),
  'distill/data/train.jsonl': arithmetic(20261207, 16),
  'distill/data/test.jsonl': arithmetic(20261208, 4),
  'frozen-lake/data/train.jsonl': frozenLakeTasks(20261209, 8, 'train'),
};

const check = process.argv.includes('--check');
const stale = [];
for (const [file, rows] of Object.entries(files)) {
  const path = join(here, file);
  const text = jsonLines(rows);
  if (check) {
    if (!existsSync(path) || readFileSync(path, 'utf8') !== text) stale.push(relative(process.cwd(), path));
    continue;
  }
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}
if (stale.length) {
  console.error(`stale (run node examples/make-example-data.mjs): ${stale.join(', ')}`);
  process.exit(1);
}
console.log(check ? 'example data is up to date' : `wrote ${Object.keys(files).length} files under ${here}`);
