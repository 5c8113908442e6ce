// A multi-turn agent as a runtime plugin: FrozenLake played step by step, one experience per model call
// (Trinity's RewardPropagationWorkflow: the episode's reward is copied to every step), for `multi_step_grpo` or
// `gigpo` (which groups steps by `info.env_state_hash` and reads `info.step_reward`).
//
// Load it with `trinity-workbench run --plugin-dir <this folder>` (or $TRINITY_PLUGIN_DIRS): every file in
// the directory may export `workflows` (and `rewards`) maps. Plugins load wherever the explorer runs, both mode's
// explorer worker included. What `ctx.agents` holds is listed in docs/runtime.md ("Agents").
import { createHash } from 'node:crypto';

// What each workflow reads, for `check` and the editor (they read this literal from the text, never running the
// file): the row keys it takes itself, whether it reads the prompt/response columns (ctx.task.taskDesc / truth), and
// its workflow_args. A taskset is then asked only for these columns, and a misspelt workflow_args key is flagged.
export const workflowReads = {
  step_wise_lake: {
    columns: ['size', 'p', 'seed'],
    taskDesc: false,
    truth: false,
    workflowArgs: {
      max_steps: { type: 'int', default: 2, min: 1, doc: 'Model calls (moves) per episode.' },
    },
  },
};

export const workflows = {
  step_wise_lake: (ctx) => ({
    // Each run plays its own episode: the explorer calls run() once per repeat instead of asking for n samples.
    repeatable: false,
    run: async () => {
      const lake = ctx.agents.frozenLake;
      const { size, p, seed } = ctx.task.raw;
      // Trinity's map for this row (same NumPy draws), and Gymnasium's rules on it (not slippery).
      const { rows } = lake.generateRandomMap(size, p, seed, 8);
      const game = new lake.Game(rows, false, seed);
      let observation = game.reset();
      // The history model records every call; each becomes one experience with eid.step set.
      const history = ctx.agents.historyModel();
      let total = 0;
      return ctx.agents.runRewardPropagation(history, {
        maxStepNum: ctx.task.workflowArgs.max_steps ?? 2,
        async step() {
          const messages = [
            { role: 'system', content: lake.systemPrompt },
            { role: 'user', content: 'Current Observation: \n' + observation },
          ];
          const [e] = await history.chat(messages, { ...ctx.task.rolloutArgs, n: 1 });
          const r = game.step(lake.parseAction(e.responseText));
          e.info = { env_state_hash: createHash('sha256').update(observation).digest('hex'), step_reward: r.reward };
          observation = r.observation;
          total += r.reward;
          return !r.done; // false ends the episode
        },
        reward: () => total,
      });
    },
  }),
};
