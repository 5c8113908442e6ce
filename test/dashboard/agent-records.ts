/**
 * Rollout records of real FrozenLake episodes for the transcript tests: `frozen_lake_workflow` on a tiny seeded
 * model (1 layer, the byte tokenizer with a ChatML template), the real game, chat template and action mask, GRPO
 * advantages from the runtime's own advantage function, and the records made by the explorer's own `rolloutSample`.
 * The moves of most runs are chosen texts scored by the model (teacher-forced, as the workflow's tests do) so that
 * each outcome occurs: the goal, a hole, invalid moves up to the turn limit, the token budget; one run is the
 * model's own samples, and one step-wise run (Trinity's StepWiseRewardWorkflow loop, the history recorded) is too.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initBackend } from '../../runtime/engine/backend';
import { saveInitialModel } from '../../runtime/engine/lm/checkpoint';
import { newModelConfigJson, parseModelConfig } from '../../runtime/engine/lm/config';
import { loadPretrained, stopTokenIds, type Pretrained } from '../../runtime/engine/pretrained';
import { buildByteTokenizer, tokenizerFromJson, type ChatMessage } from '../../runtime/engine/tokenizer';
import type { RolloutSample } from '../../runtime/protocol';
import { grpoAdvantage } from '../../runtime/rft/algorithm/advantage/grpo';
import {
  FROZEN_LAKE_SYSTEM_PROMPT,
  FrozenLakeGame,
  parseFrozenLakeAction,
} from '../../runtime/rft/environments/frozen-lake/frozen-lake-game';
import { advantagesByUid, rolloutSample } from '../../runtime/rft/explorer/rollout-samples';
import type { Experience } from '../../runtime/rft/experience';
import { RolloutModel } from '../../runtime/rft/models/rollout-model';
import { frozenLakeWorkflow } from '../../runtime/rft/workflows/frozen-lake';
import { HistoryModel } from '../../runtime/rft/workflows/multi-turn/history-model';
import { runStepWiseReward } from '../../runtime/rft/workflows/multi-turn/step-wise';
import { completionTurnSampler, type TurnSampler } from '../../runtime/rft/workflows/multi-turn/turn-sampler';
import type { WorkflowContext } from '../../runtime/rft/workflows/types';

const MAP = ['SFF', 'FHF', 'FFG'];
const IM_END = 258;

/** What each run of the fixture does, and so what its record must show. */
export const RUNS = {
  goal: { task: 0, run: 0, forced: ['```Down```', '```Down```', '```Right```', '```Right```'] },
  hole: { task: 0, run: 1, forced: ['```Right```', '```Down```'] },
  // Text that is not an action leaves the grid unchanged: the next user message carries the invalid hint.
  invalid: {
    task: 0,
    run: 2,
    forced: ['<script>alert("x")</script> ```Jump```', '```Down```', 'no idea <b>bold</b>'],
  },
  truncated: { task: 1, run: 0, forced: ['```Down```', '```Down```', '```Right```'], budget: 24 },
  own: { task: 1, run: 1 },
} as const;

function rolloutModel(p: Pretrained, maxResponseTokens: number): RolloutModel {
  return new RolloutModel(
    p.model,
    p.tokenizer,
    {
      maxPromptTokens: null,
      maxResponseTokens,
      minResponseTokens: 0,
      enablePromptTruncation: false,
      temperature: 1,
      topP: 1,
      topK: -1,
      enableThinking: null,
    },
    3,
    stopTokenIds(p),
  );
}

function forcedSampler(p: Pretrained, model: RolloutModel, texts: readonly string[]): () => TurnSampler {
  const left = [...texts];
  return () => ({
    async sampleTurn(ctx) {
      const text = left.shift() ?? '```Up```';
      const ids = [...p.tokenizer.encode(text, { addSpecialTokens: false }), IM_END];
      const scores = await model.logprobs([...ctx, ...ids], 1);
      return { ids, logprobs: scores.slice(ctx.length - 1), text, finishReason: 'stop' };
    },
    close() {},
  });
}

/** The model's own turns, at most `maxTokens` each (Trinity lets a turn take what is left of the episode's budget). */
function ownTurns(model: RolloutModel, maxTokens: number): () => TurnSampler {
  return () => {
    const inner = completionTurnSampler(model);
    return {
      sampleTurn: (c, a) => inner.sampleTurn(c, { ...a, max_tokens: Math.min(a.max_tokens ?? maxTokens, maxTokens) }),
      close: () => inner.close(),
    };
  };
}

function context(
  model: RolloutModel,
  run: number,
  opts: { sampler?: () => TurnSampler; budget?: number },
): WorkflowContext {
  return {
    model,
    task: {
      raw: { seed: 1 },
      taskDesc: undefined,
      truth: undefined,
      systemPrompt: null,
      replyPrefix: null,
      rolloutArgs: { temperature: 1, ...(opts.budget ? { max_response_tokens: opts.budget } : {}) },
      workflowArgs: { desc: MAP, agent_max_steps: 4 },
      rewardFnArgs: {},
      rewardFn: null,
      isEval: false,
    },
    repeatTimes: 1,
    runIdBase: run,
    createReward: () => {
      throw new Error('no reward function');
    },
    auxiliaryModels: [],
    ...(opts.sampler ? { turnSampler: opts.sampler } : {}),
  };
}

/** A step-wise FrozenLake run: each step one chat call on the whole history, rewarded by the game's step. */
async function stepWiseRun(model: RolloutModel, batch: number): Promise<Experience[]> {
  const history = new HistoryModel(model);
  const game = new FrozenLakeGame(MAP, false, 1);
  const messages: ChatMessage[] = [
    { role: 'system', content: FROZEN_LAKE_SYSTEM_PROMPT },
    { role: 'user', content: `Current Observation (0): \n${game.reset()}` },
  ];
  let stepReward = 0;
  const exps = await runStepWiseReward(history, {
    maxStepNum: 3,
    async step() {
      const [e] = await history.chat(messages, { n: 1, max_tokens: 6, temperature: 1 });
      const r = game.step(parseFrozenLakeAction(e.responseText ?? ''));
      stepReward = r.reward;
      messages.push({ role: 'assistant', content: e.responseText ?? '' });
      messages.push({ role: 'user', content: `Current Observation: \n${r.observation}` });
      return !r.done;
    },
    reward: () => stepReward,
  });
  for (const e of exps) Object.assign(e.eid, { batch, task: 2, run: 0 });
  return exps;
}

/**
 * One explorer step's records: task 0 (goal, hole, invalid moves), task 1 (token budget, the model's own turns),
 * task 2 (a step-wise run). Experiences and records are returned together so tests compare the DOM with both.
 */
type Records = { exps: Experience[]; samples: RolloutSample[] };
const made = new Map<number, Promise<Records>>();

/** The records of one batch, made once per process (the test files of test/dashboard share one). */
export function frozenLakeRecords(batch = 7): Promise<Records> {
  let r = made.get(batch);
  if (!r) made.set(batch, (r = makeRecords(batch)));
  return r;
}

async function makeRecords(batch: number): Promise<Records> {
  await initBackend({ prefer: 'wasm' });
  const dir = join(mkdtempSync(join(tmpdir(), 'twb-transcripts-')), 'model');
  const tokenizer = tokenizerFromJson(buildByteTokenizer());
  const cfg = parseModelConfig(
    newModelConfigJson({
      family: 'qwen2',
      layers: 1,
      hidden: 16,
      heads: 4,
      kvHeads: 2,
      vocabSize: tokenizer.vocabSize,
      maxPositions: 4096,
      eosTokenIds: [...tokenizer.eosTokenIds],
    }),
  );
  saveInitialModel(cfg, 8, dir, { tokenizer });
  const p = loadPretrained(dir);
  const exps: Experience[] = [];
  for (const r of Object.values(RUNS)) {
    const model = rolloutModel(p, 8);
    const forced = 'forced' in r ? r.forced : undefined;
    const ctx = context(model, r.run, {
      sampler: forced ? forcedSampler(p, model, forced) : ownTurns(model, 12),
      ...('budget' in r ? { budget: r.budget } : {}),
    });
    const [e] = await frozenLakeWorkflow(ctx).run();
    Object.assign(e.eid, { batch, task: r.task });
    exps.push(e);
  }
  exps.push(...(await stepWiseRun(rolloutModel(p, 8), batch)));
  // GRPO on the concatenated episodes (the step-wise run would take step_wise_grpo, which is not what is shown here).
  const grouped = exps.filter((e) => e.eid.task !== 2);
  const { exps: scored } = grpoAdvantage(
    grouped.map((e) => ({ ...e, reward: e.reward ?? 0, actionMask: e.actionMask! })),
    { epsilon: 1e-6 },
  );
  const advantages = advantagesByUid(scored);
  const decode = (ids: readonly number[]) => p.tokenizer.decode(ids, { skipSpecialTokens: false });
  return { exps, samples: exps.map((e) => rolloutSample(e, { decode, advantages })) };
}
