/**
 * Real Trinity task rows (the shared corpus, $TRINITY_CORPUS_DIR or ../shared/corpus): the ground truth, written
 * into a response the way the workflow's prompt asks for it, gets the full reward.
 *
 * - GSM8K rows (gsm8k, eval_short, eval_long) with math_workflow + math_reward: the model is asked for
 *   `<think> … </think> <answer> … </answer>`; the truth column is the whole worked solution ending in `#### N`.
 *   Full reward = accuracy 1 + format 0.1.
 * - Countdown rows with countdown_reward (Trinity's ppo_countdown example: math_workflow, the prompt already ends
 *   in `<think>`): the response closes the reasoning and puts an equation in `<answer>` on its last line. The rows
 *   carry only numbers and target, so a solution is found by search. Full reward = score 1.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { corpusData } from '../../../helpers/corpus';
import { createReward, evaluateCountdownExpression, totalReward } from '../../../../runtime/rft/rewards';

function rows(...parts: string[]): Array<Record<string, string>> {
  const text = readFileSync(corpusData(...parts), 'utf8');
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, string>);
}

/** A Countdown solution using every number once (exhaustive search; the rows have 3–4 numbers). */
function solveCountdown(numbers: number[], target: number): string | null {
  type Item = { v: number; e: string };
  const go = (items: Item[]): string | null => {
    if (items.length === 1) return Math.abs(items[0].v - target) < 1e-9 ? items[0].e : null;
    for (let i = 0; i < items.length; i++) {
      for (let j = 0; j < items.length; j++) {
        if (i === j) continue;
        const a = items[i];
        const b = items[j];
        const rest = items.filter((_, k) => k !== i && k !== j);
        const next: Item[] = [
          { v: a.v + b.v, e: `(${a.e} + ${b.e})` },
          { v: a.v - b.v, e: `(${a.e} - ${b.e})` },
          { v: a.v * b.v, e: `(${a.e} * ${b.e})` },
        ];
        if (b.v !== 0) next.push({ v: a.v / b.v, e: `(${a.e} / ${b.e})` });
        for (const c of next) {
          const r = go([...rest, c]);
          if (r) return r;
        }
      }
    }
    return null;
  };
  return go(numbers.map((n) => ({ v: n, e: String(n) })));
}

describe('corpus: GSM8K truths score full reward with math_reward', () => {
  const files = [
    ['gsm8k', 'train.jsonl'],
    ['gsm8k', 'test.jsonl'],
    ['eval_short', 'test.jsonl'],
    ['eval_long', 'test.jsonl'],
  ];
  const mathReward = createReward('math_reward');
  for (const f of files) {
    test(f.join('/'), () => {
      const data = rows(...f);
      assert.ok(data.length > 0);
      for (const row of data) {
        const truth = row.answer;
        const m = /####\s*(.+)\s*$/.exec(truth);
        assert.ok(m, `no #### answer in ${JSON.stringify(truth.slice(-40))}`);
        const final = m[1].trim();
        const reasoning = truth.slice(0, m.index).trim();
        const response = `<think> ${reasoning} </think>\n<answer> ${final} </answer>`;
        const d = mathReward({ response, truth, prompt: row.question });
        assert.deepEqual(d, { accuracy: 1, format_score: 0.1 }, `${row.question.slice(0, 60)}… answer ${final}`);
        assert.ok(Math.abs(totalReward(d) - 1.1) < 1e-12);
        // and a wrong final answer loses the accuracy
        const wrong = mathReward({
          response: `<think> ${reasoning} </think>\n<answer> ${Number(final.replace(/,/g, '')) + 1} </answer>`,
          truth,
        });
        assert.deepEqual(wrong, { accuracy: 0, format_score: 0.1 });
      }
    });
  }
});

describe('corpus: countdown truths score full reward with countdown_reward', () => {
  const countdown = createReward('countdown_reward');
  for (const file of ['train.jsonl', 'test.jsonl']) {
    test(`countdown/${file}`, () => {
      const data = rows('countdown', file);
      assert.ok(data.length > 0);
      for (const row of data) {
        assert.match(row.question, /<think>$/, 'the prompt ends in <think>');
        const { numbers, target } = JSON.parse(row.answer) as { numbers: number[]; target: number };
        const eq = solveCountdown(numbers, target);
        assert.ok(eq, `no solution for ${row.answer}`);
        const check = evaluateCountdownExpression(eq);
        assert.ok(check.ok && check.exact !== null && check.exact.num === BigInt(target) * check.exact.den, eq);
        const response = ` I combine the numbers.\n${eq} = ${target}</think>\n<answer>${eq}</answer>`;
        assert.deepEqual(countdown({ response, truth: row.answer }), { score: 1 }, `${row.answer}: ${eq}`);
        // the same equation with one number used twice drops to the format score
        const reused = eq.replace(String(numbers[0]), `${numbers[0]} + ${numbers[0]} - ${numbers[0]}`);
        assert.deepEqual(countdown({ response: `</think>\n<answer>${reused}</answer>`, truth: row.answer }), {
          score: 0.1,
        });
      }
    });
  }
});
