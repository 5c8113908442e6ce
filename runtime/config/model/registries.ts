/**
 * Trinity's registries: the names a config may use for pluggable pieces, per release.
 * Registries are open (plugins may add names), so an unknown name is reported, not fatal, except where Trinity
 * itself raises at launch for it (see rules/).
 */
import { inRange, type Release } from '../releases';

export type RegistryId =
  | 'algorithm_type'
  | 'advantage_fn'
  | 'policy_loss_fn'
  | 'kl_fn'
  | 'entropy_loss_fn'
  | 'sample_strategy'
  | 'workflow'
  | 'reward_fn'
  | 'monitor'
  | 'experience_operator'
  | 'selector'
  | 'priority_fn';

export interface RegistryEntry {
  name: string;
  /** One or two sentences a user reads in a completion item or hover. */
  doc: string;
  since?: Release;
  until?: Release;
  /** Still registered but deprecated: what to use instead. */
  deprecated?: string;
  /**
   * Where the entry was read, for entries newer than the release commits (`main` past 10796ed): the Trinity-RFT
   * commit and file of the registration.
   */
  source?: string;
}

export interface Registry {
  id: RegistryId;
  /** What the registry holds, e.g. "policy loss function". */
  title: string;
  entries: readonly RegistryEntry[];
}

/**
 * Every name registered in each registry, per release (read from the registrations at each release commit:
 * `@X.register_module(...)` decorators up to v0.3.2, the lazy `default_mapping` dicts from v0.4.0).
 * From v0.4.0 Trinity also accepts a dotted `package.module.ClassName` path in place of a registered name.
 * Entries `since: 'main'` were read past 10796ed and name their commit in `source` (see RELEASE_COMMITS).
 */
export const REGISTRIES: Record<RegistryId, Registry> = {
  algorithm_type: {
    id: 'algorithm_type',
    title: 'algorithm type',
    entries: [
      {
        name: 'grpo',
        doc: 'Group Relative Policy Optimization: several rollouts per task, advantages normalised within each group on the explorer side; reference model, no critic. Set `repeat_times` > 1.',
      },
      {
        name: 'ppo',
        doc: 'Proximal Policy Optimization with a critic (GAE advantages computed in the trainer) and a reference model.',
      },
      {
        name: 'sft',
        doc: 'Supervised fine-tuning on an SFT-schema dataset; no rollouts, reference model or critic. Meant for `train` mode (enforced from v0.5.0).',
      },
      {
        name: 'dpo',
        doc: 'Direct Preference Optimization on a preference (chosen/rejected) dataset with a reference model. Runs in `train` mode only and always uses a KL loss.',
      },
      { name: 'gspo', doc: 'GRPO-style group advantages with the sequence-level GSPO clipped loss.', since: 'v0.4.0' },
      {
        name: 'rloo',
        doc: 'REINFORCE leave-one-out: the baseline of each rollout is the mean reward of the other rollouts of its task; computed in the trainer, no critic.',
        since: 'v0.4.0',
      },
      {
        name: 'reinforceplusplus',
        doc: 'REINFORCE++: discounted returns whitened across the batch, computed in the trainer, no critic.',
        since: 'v0.4.0',
      },
      {
        name: 'opmd',
        doc: 'Online Policy Mirror Descent: group-baseline advantages with the OPMD loss; suited to off-policy / asynchronous training.',
      },
      {
        name: 'asymre',
        doc: 'AsymRE: REINFORCE with a shifted group-mean baseline; no reference model, no KL or entropy term by default.',
      },
      {
        name: 'topr',
        doc: 'TOPR (tapered off-policy REINFORCE): plain REINFORCE advantages with a loss that truncates importance ratios only for negative samples.',
      },
      {
        name: 'cispo',
        doc: 'CISPO: GRPO advantages with a loss that clips and stops gradients through the importance weight instead of dropping tokens.',
      },
      {
        name: 'sapo',
        doc: 'SAPO: GRPO advantages with a smooth, temperature-controlled soft gate in place of hard ratio clipping.',
        since: 'v0.4.0',
      },
      {
        name: 'rec',
        doc: 'REC: group advantages with the REC family of clipped / weighted policy losses, suited to off-policy data.',
        since: 'v0.3.1',
      },
      {
        name: 'sppo',
        doc: 'sPPO: OPMD advantages with a loss that masks tokens whose importance ratio leaves a symmetric trust region; no reference model.',
      },
      {
        name: 'multi_step_grpo',
        doc: 'GRPO for multi-step (agentic) rollouts: the final-step reward is normalised across runs and broadcast to every step of the run.',
        since: 'v0.3.1',
      },
      {
        name: 'mix',
        doc: 'Mixes RL on fresh rollouts with an SFT loss on expert data read from an auxiliary buffer (`sample_strategy: mix`).',
      },
      {
        name: 'mix_chord',
        doc: 'CHORD: like `mix`, but the weight of the expert SFT term follows a warm-up/decay schedule and can use the token-probability (phi) weighting.',
      },
      {
        name: 'raft',
        doc: 'RAFT: supervised fine-tuning on rollouts (typically only the successful ones); no reference model or critic.',
      },
      {
        name: 'on_policy_distill',
        doc: "On-policy distillation: the advantage is the gap between teacher and student log-probabilities of the student's own rollouts; the workflow must record teacher log-probs.",
        since: 'v0.4.0',
      },
      {
        name: 'jsd',
        doc: 'On-policy distillation whose advantage is a Jensen-Shannon divergence between teacher and student.',
        since: 'v0.5.2',
      },
      {
        name: 'grpo_verl',
        doc: 'GRPO with the advantage computed in the trainer instead of the explorer pipeline.',
        since: 'v0.5.2',
      },
      {
        name: 'dapo',
        doc: 'DAPO: GRPO group advantages and the PPO loss without a reference model or KL loss (16 rollouts per task by default); its clipping, dynamic sampling and overlong shaping are set in the config (`clip_range_high`, the `dapo_dynamic_sampling` and `mask_response_truncated` operators).',
        since: 'main',
        source: '1d52c85 trinity/algorithm/__init__.py (class: 0fcd37e trinity/algorithm/algorithm.py)',
      },
      {
        name: 'gigpo',
        doc: 'GiGPO for multi-turn agents: an episode-level group advantage plus a step-level one over steps that reach the same environment state (`env_state_hash` in the experience info); computed on the explorer side.',
        since: 'main',
        source: '1d52c85 trinity/algorithm/__init__.py (class: 0fcd37e trinity/algorithm/algorithm.py)',
      },
      {
        name: 'm2po',
        doc: 'M2PO, for stale (off-policy) rollouts. Its algorithm class was not among the sources read, so its default functions are not filled in here; the `m2po` policy loss is modelled.',
        since: 'main',
        source: '1d52c85 trinity/algorithm/__init__.py',
      },
      {
        name: 'cpt',
        doc: '`CPTAlgorithm`. Its class was not among the sources read, so its default functions are not filled in here.',
        since: 'main',
        source: '1d52c85 trinity/algorithm/__init__.py',
      },
    ],
  },
  advantage_fn: {
    id: 'advantage_fn',
    title: 'advantage function',
    entries: [
      {
        name: 'grpo',
        doc: 'Group-normalised advantage: (reward - group mean) / (group std + epsilon), computed on the explorer side. Optional filtering of low-variance groups and rank penalty.',
      },
      {
        name: 'ppo',
        doc: 'Generalised Advantage Estimation from critic values (gamma, lam), computed in the trainer; for `algorithm_type: ppo`.',
      },
      { name: 'reinforce', doc: 'Uses the raw reward as the advantage, without a baseline (explorer side).' },
      { name: 'rloo', doc: 'Leave-one-out baseline within each group, computed in the trainer.' },
      { name: 'reinforceplusplus', doc: 'Discounted return whitened over the batch, computed in the trainer.' },
      {
        name: 'remax',
        doc: 'Return minus a greedy-rollout reward baseline; needs `reward_baselines` in the batch, which built-in workflows do not provide.',
      },
      {
        name: 'opmd',
        doc: 'OPMD group baseline (mean, or a temperature-smoothed log-mean-exp), computed on the explorer side.',
      },
      { name: 'asymre', doc: 'Group-mean baseline shifted by `baseline_shift`, computed on the explorer side.' },
      {
        name: 'step_wise_grpo',
        doc: 'For multi-step rollouts: GRPO-normalises the last-step reward across runs of a task and copies it to every step of the run.',
      },
      {
        name: 'rec',
        doc: 'Group advantage for the REC algorithm, with optional std normalisation and balanced dropping of samples.',
        since: 'v0.3.1',
      },
      {
        name: 'on_policy_distill',
        doc: 'Advantage = kl_coef x (teacher log-prob - student log-prob) per token, computed in the trainer.',
        since: 'v0.4.0',
      },
      {
        name: 'jsd',
        doc: 'Per-token Jensen-Shannon divergence between teacher and student as the (negative) advantage, computed in the trainer.',
        since: 'v0.5.2',
      },
      {
        name: 'clipb',
        doc: 'Group-normalised advantage, computed in the trainer, that keeps positive-advantage tokens and clips negative ones using an entropy signal.',
        since: 'v0.5.2',
      },
      {
        name: 'clipv',
        doc: 'Group-normalised advantage, computed in the trainer, that clips only negative-advantage tokens and caps the fraction of clipped tokens.',
        since: 'v0.5.2',
      },
      {
        name: 'gigpo',
        doc: 'GiGPO: episode-level group advantage plus `omega` x a step-level advantage over steps sharing an environment state (`env_state_hash` in the info); explorer side.',
        since: 'main',
        source: '139d1c4 trinity/algorithm/advantage_fn/__init__.py (class: 0fcd37e gigpo_advantage.py)',
      },
      { name: 'grpo_verl', doc: 'GRPO normalisation computed in the trainer on veRL batches.', deprecated: 'use grpo' },
      { name: 'opmd_verl', doc: 'OPMD baseline computed in the trainer on veRL batches.', deprecated: 'use opmd' },
      {
        name: 'asymre_verl',
        doc: 'AsymRE baseline computed in the trainer on veRL batches.',
        deprecated: 'use asymre',
      },
    ],
  },
  policy_loss_fn: {
    id: 'policy_loss_fn',
    title: 'policy loss function',
    entries: [
      {
        name: 'ppo',
        doc: 'Clipped-ratio PPO surrogate loss (`clip_range`, or `clip_range_low`/`clip_range_high` for asymmetric clipping).',
      },
      {
        name: 'gspo',
        doc: 'GSPO: PPO-style clipping applied to a sequence-level importance ratio; use small clip ranges.',
      },
      { name: 'sft', doc: 'Negative log-likelihood of the response tokens.' },
      { name: 'dpo', doc: 'DPO loss on interleaved chosen/rejected pairs against the reference model.' },
      { name: 'opmd', doc: 'OPMD loss: advantage-weighted log-likelihood scaled by 1/(1+tau).' },
      {
        name: 'topr',
        doc: 'TOPR loss: REINFORCE with ratios truncated to at most 1 for samples below `advantage_threshold`.',
      },
      {
        name: 'cispo',
        doc: 'CISPO loss: clipped, gradient-stopped importance weight times advantage times log-prob, with optional token masking.',
      },
      {
        name: 'sapo',
        doc: 'SAPO loss: a sigmoid soft gate on the importance ratio with separate temperatures for positive and negative advantages.',
        since: 'v0.4.0',
      },
      {
        name: 'sppo',
        doc: 'sPPO loss: advantage-weighted log-ratio, masking tokens whose ratio leaves [1/(1+epsilon), 1+epsilon].',
      },
      {
        name: 'rec',
        doc: 'REC loss family: configurable clipping mode, sample weighting and KL-style regulariser.',
        since: 'v0.3.1',
      },
      {
        name: 'importance_sampling',
        doc: 'Unclipped importance-sampling policy gradient (ratio x advantage); used for on-policy distillation.',
        since: 'v0.4.0',
      },
      { name: 'mix', doc: 'For `mix`: PPO loss on rollouts plus an SFT loss on expert rows, weighted by `mu`.' },
      {
        name: 'mix_chord',
        doc: 'For `mix_chord`: like `mix`, with a scheduled expert weight and optional phi-weighted SFT.',
      },
      {
        name: 'sft_is',
        doc: 'SFT loss where each token is weighted by its (detached) probability under the current policy.',
      },
      {
        name: 'sft_phi',
        doc: 'SFT loss weighted by p(1-p) of each token (CHORD phi function), with an optional probability cutoff.',
      },
      {
        name: 'm2po',
        doc: 'M2PO loss: -advantage × ratio (no PPO clip; the log-ratio clamped to ±`log_ratio_clip`), with a second-moment trust region: among the tokens where PPO would clip (advantage > 0 with ratio > 1, or advantage < 0 with ratio < 1), those with the largest squared log-ratio are masked until the mean of the rest is at most `m2_threshold`, over the whole mini-batch. Masked tokens still count in the token-mean denominator; `loss_agg_mode` must be `token-mean`.',
        since: 'main',
        source: '1d52c85 trinity/algorithm/policy_loss_fn/__init__.py (class: 3a41dc2 m2po_policy_loss.py)',
      },
    ],
  },
  kl_fn: {
    id: 'kl_fn',
    title: 'KL function',
    entries: [
      { name: 'k2', doc: 'Squared log-ratio estimator, 0.5 x (log pi - log pi_ref)^2.' },
      { name: 'k3', doc: 'Low-variance estimator exp(r) - 1 - r with r = log pi_ref - log pi.' },
      {
        name: 'low_var_kl',
        doc: "k3 with the log-ratio and the result clamped for numerical stability (veRL's `low_var_kl`).",
        since: 'v0.4.0',
      },
      { name: 'k1', doc: 'Plain log-ratio estimator, log pi - log pi_ref.' },
      { name: 'abs', doc: 'Absolute log-ratio, |log pi - log pi_ref|.' },
      {
        name: 'corrected_k3',
        doc: 'k3 multiplied by a clipped importance ratio between the current and the rollout policy.',
        since: 'v0.4.0',
      },
      { name: 'none', doc: 'No KL term: disables the KL penalty or KL loss.' },
    ],
  },
  entropy_loss_fn: {
    id: 'entropy_loss_fn',
    title: 'entropy loss function',
    entries: [
      { name: 'default', doc: 'Subtracts `entropy_coef` x mean token entropy from the loss (entropy bonus).' },
      { name: 'none', doc: 'No entropy term.' },
      { name: 'mix', doc: 'Entropy bonus computed on non-expert rows only; for the `mix` algorithms.' },
    ],
  },
  sample_strategy: {
    id: 'sample_strategy',
    title: 'sample strategy',
    entries: [
      { name: 'default', doc: "Reads `train_batch_size` experiences per step from the trainer's experience buffer." },
      {
        name: 'staleness_control',
        doc: 'Like `default`, but only reads experiences produced by a model at most `max_staleness` versions behind the current step.',
        since: 'v0.4.0',
      },
      {
        name: 'mix',
        doc: 'Builds each batch from rollouts plus a share (`expert_data_ratio`) of expert SFT data from the auxiliary buffer `sft_dataset_name` (the SFT warmup dataset in v0.3.0); for the `mix` algorithms.',
      },
      {
        name: 'warmup',
        doc: 'Reads the experience buffer; during the first `sft_warmup_steps` steps it reads the SFT warmup dataset instead.',
        until: 'v0.3.0',
      },
      {
        name: 'warmup',
        doc: 'Old name kept for compatibility; behaves like `default`.',
        since: 'v0.3.1',
        deprecated: 'use default',
      },
    ],
  },
  workflow: {
    id: 'workflow',
    title: 'workflow',
    entries: [
      {
        name: 'simple_workflow',
        doc: 'Single-turn chat: formats the task prompt, samples responses and scores them with the configured reward function.',
      },
      { name: 'async_simple_workflow', doc: 'Asynchronous version of `simple_workflow`.', since: 'v0.3.1' },
      {
        name: 'math_workflow',
        doc: 'Single-turn math with a DeepSeek-R1 style <think>/<answer> prompt and `math_reward` by default.',
      },
      { name: 'async_math_workflow', doc: 'Asynchronous version of `math_workflow`.', since: 'v0.3.1' },
      {
        name: 'math_boxed_workflow',
        doc: 'Single-turn math whose answer is read from \\boxed{...}, with `math_boxed_reward`.',
      },
      { name: 'async_math_boxed_workflow', doc: 'Asynchronous version of `math_boxed_workflow`.', since: 'v0.3.1' },
      {
        name: 'math_eval_workflow',
        doc: 'Math evaluation with Qwen2.5-Math style prompting and answer checking; meant for eval tasksets.',
      },
      { name: 'async_math_eval_workflow', doc: 'Asynchronous version of `math_eval_workflow`.', since: 'v0.3.1' },
      {
        name: 'math_rm_workflow',
        doc: 'Single-turn math scored by a reward function that sees the whole conversation (e.g. a reward model).',
      },
      { name: 'async_math_rm_workflow', doc: 'Asynchronous version of `math_rm_workflow`.', since: 'v0.3.1' },
      {
        name: 'math_ruler_workflow',
        doc: 'Math with RULER rewards: an auxiliary judge model ranks the group of responses.',
      },
      { name: 'async_math_ruler_workflow', doc: 'Asynchronous version of `math_ruler_workflow`.', since: 'v0.3.1' },
      {
        name: 'math_trainable_ruler_workflow',
        doc: 'Math with RULER rewards where the policy model itself acts as the judge and is trained for it.',
        since: 'v0.3.1',
      },
      {
        name: 'rubric_judge_workflow',
        doc: 'Rewards responses with an auxiliary LLM judge following per-task rubrics.',
        since: 'v0.3.1',
      },
      {
        name: 'rubric_judge_openai_workflow',
        doc: 'Rubric-judge workflow whose judge is an external OpenAI-compatible API (set via `workflow_args`).',
        since: 'v0.5.2',
      },
      { name: 'simple_mm_workflow', doc: 'Single-turn multimodal (image/video) chat scored by the reward function.' },
      { name: 'async_simple_mm_workflow', doc: 'Asynchronous version of `simple_mm_workflow`.', since: 'v0.3.1' },
      {
        name: 'tool_call_workflow',
        doc: 'Single-turn tool-calling tasks (ToolACE / Tool-N1 prompt and reward); Qwen models only.',
        since: 'v0.4.0',
      },
      {
        name: 'toolcall_workflow',
        doc: 'Single-turn tool-calling tasks (ToolACE / Tool-N1 prompt and reward); renamed `tool_call_workflow` in v0.4.0.',
        until: 'v0.3.2',
      },
      {
        name: 'on_policy_distill_workflow',
        doc: 'Records teacher log-probs from an auxiliary model for on-policy distillation; no reward function.',
        since: 'v0.4.0',
      },
      {
        name: 'on_policy_distill_math_workflow',
        doc: 'On-policy distillation on math tasks with Qwen2.5-Math prompting and accuracy as a logged reward.',
        since: 'v0.4.0',
      },
      {
        name: 'agentscope_workflow_adapter_v1',
        doc: 'Wraps an AgentScope (>= 1.0.12) trainable workflow and judge function as a Trinity workflow.',
        since: 'v0.4.0',
      },
      {
        name: 'agentscope_workflow_adapter',
        doc: 'Wraps an AgentScope trainable workflow function as a Trinity workflow.',
        since: 'v0.3.1',
        until: 'v0.4.0',
      },
      {
        name: 'agentscope_workflow_adapter',
        doc: 'Wraps an AgentScope (1.0.7-1.0.11) trainable workflow function as a Trinity workflow.',
        since: 'v0.5.0',
        deprecated: 'use agentscope_workflow_adapter_v1',
      },
      {
        name: 'agentscope_react_workflow',
        doc: 'AgentScope ReAct agent solving template-defined tasks (e.g. GSM8K); same class as `as_react_workflow`.',
        since: 'v0.4.0',
      },
      {
        name: 'as_react_workflow',
        doc: 'AgentScope ReAct agent solving template-defined tasks (e.g. GSM8K).',
        since: 'v0.3.1',
      },
      {
        name: 'agentscope_react_math_workflow',
        doc: 'Example math workflow built on an AgentScope v1 ReAct agent.',
        since: 'v0.3.1',
      },
      {
        name: 'agentscope_v1_react_search_workflow',
        doc: 'Example search/QA workflow built on an AgentScope v1 ReAct agent with tools.',
        since: 'v0.3.1',
      },
      {
        name: 'agentscopev0_react_math_workflow',
        doc: 'Example math workflow built on the legacy AgentScope v0 ReAct agent.',
        since: 'v0.3.1',
        deprecated: 'use agentscope_react_math_workflow',
      },
      {
        name: 'agentscope_reactv2_math_workflow',
        doc: 'Example math workflow built on an AgentScope ReAct agent (renamed in v0.3.1).',
        until: 'v0.3.0',
      },
      {
        name: 'alfworld_workflow',
        doc: 'Multi-turn ALFWorld household tasks; the whole episode is trained as one concatenated conversation.',
      },
      {
        name: 'step_wise_alfworld_workflow',
        doc: 'ALFWorld with one experience per step and the final reward propagated to every step (pair with `multi_step_grpo`).',
      },
      { name: 'RAFT_alfworld_workflow', doc: 'ALFWorld for RAFT: turns successful trajectories into SFT data.' },
      {
        name: 'RAFT_reflect_alfworld_workflow',
        doc: 'ALFWorld for RAFT with a reflective retry using the failed trajectory as context.',
      },
      { name: 'sciworld_workflow', doc: 'Multi-turn ScienceWorld tasks.' },
      { name: 'webshop_workflow', doc: 'Multi-turn WebShop shopping tasks.' },
      { name: 'frozen_lake_workflow', doc: 'Multi-turn FrozenLake grid-world game.', since: 'v0.4.0' },
      {
        name: 'email_search_workflow',
        doc: 'Multi-turn ReAct-style email search with tool calls (ART email-search task).',
      },
      {
        name: 'sudoku_workflow',
        doc: 'Multi-step Sudoku solving where the model proposes moves that are checked each step.',
        since: 'v0.5.0',
      },
      {
        name: 'intercode_sql_workflow',
        doc: 'Multi-turn InterCode-SQL tasks: the model issues SQL statements (or `submit`) against a Docker database environment; needs `intercode-bench`, Docker and `workflow_args.data_path` (or a task `data_path`).',
        since: 'main',
        source: '521a556 trinity/common/workflows/__init__.py',
      },
      {
        name: 'thinking_budget_workflow',
        doc: "Sends the task's raw `messages` through the OpenAI API with a per-request reasoning budget (`workflow_args.thinking_token_budget`, a non-negative integer) and masks the end-of-reasoning tokens vLLM forces; needs `explorer.rollout_model.enable_history: true`.",
        since: 'main',
        source: '521a556 trinity/common/workflows/__init__.py (class: 0be2bcc thinking_budget_workflow.py)',
      },
    ],
  },
  reward_fn: {
    id: 'reward_fn',
    title: 'reward function',
    entries: [
      {
        name: 'math_reward',
        doc: 'Math accuracy plus a format bonus for <think>...</think><answer>...</answer> responses.',
      },
      { name: 'math_boxed_reward', doc: 'Math accuracy of the \\boxed{...} answer, with an optional format reward.' },
      { name: 'accuracy_reward', doc: '1 if the parsed answer matches the ground truth (math-verify), else 0.' },
      { name: 'format_reward', doc: 'Checks the <think>...</think> <answer>...</answer> response format.' },
      { name: 'countdown_reward', doc: 'Scores Countdown arithmetic puzzles (uses all numbers, reaches the target).' },
      {
        name: 'math_dapo_reward',
        doc: 'DAPO-style math correctness score, with an optional penalty for overlong responses.',
      },
      {
        name: 'rm_gallery_reward',
        doc: 'Scores responses with a named reward from RM-Gallery (`reward_name`); needs the rm_gallery package.',
        until: 'v0.5.2',
      },
      {
        name: 'rm_gallery_reward',
        doc: 'Old name of `openjudge_multi_grader_reward` (the same OpenJudge class).',
        since: 'main',
        source: '8b7fce3 trinity/common/rewards/__init__.py',
      },
      {
        name: 'openjudge_multi_grader_reward',
        doc: 'Scores the conversation with a pipeline of OpenJudge graders (`grader_configs`; by default correctness + relevance judged by an OpenAI-compatible model from `OPENAI_BASE_URL`), combined by `score_aggregation` (`mean` or `sum`); needs OpenJudge.',
        since: 'main',
        source: '8b7fce3 trinity/common/rewards/__init__.py',
      },
      {
        name: 'openjudge_reward',
        doc: "OpenJudge's trajectory-accuracy grader as the only grader, its 1-3 score mapped to [0, 1] by default; the judge model is reached at `OPENAI_BASE_URL`. Needs OpenJudge.",
        since: 'main',
        source: '8b7fce3 trinity/common/rewards/__init__.py',
      },
      {
        name: 'trajectory_accuracy_grader_reward',
        doc: 'Same class as `openjudge_reward`: the OpenJudge trajectory-accuracy grader.',
        since: 'main',
        source: '8b7fce3 trinity/common/rewards/__init__.py',
      },
      {
        name: 'openjudge_trajectory_accuracy_reward',
        doc: 'OpenJudge trajectory accuracy as a reward function (a separate class from `openjudge_reward`); needs OpenJudge.',
        since: 'main',
        source: '8b7fce3 trinity/common/rewards/__init__.py',
      },
      {
        name: 'rlcr_reward',
        doc: 'RLCR for math: weighted format, accuracy and calibration (Brier) terms for responses ending in <think>, <answer>, <analysis>, <confidence> blocks.',
        since: 'main',
        source: 'cc24051 trinity/common/rewards/__init__.py',
      },
    ],
  },
  monitor: {
    id: 'monitor',
    title: 'monitor',
    entries: [
      { name: 'tensorboard', doc: "Writes metrics as TensorBoard event files under the job's monitor directory." },
      { name: 'wandb', doc: 'Logs metrics to Weights & Biases (`WANDB_API_KEY`, optional `base_url`).' },
      { name: 'mlflow', doc: 'Logs metrics to an MLflow tracking server (`uri`, optional credentials).' },
      { name: 'swanlab', doc: 'Logs metrics to SwanLab (`SWANLAB_API_KEY`).', since: 'v0.4.0' },
    ],
  },
  experience_operator: {
    id: 'experience_operator',
    title: 'experience operator',
    entries: [
      { name: 'reward_filter', doc: 'Keeps only experiences whose reward is at least `threshold`.' },
      {
        name: 'reward_std_filter',
        doc: 'Drops task groups whose reward standard deviation is at most `threshold` (and groups with a single experience).',
      },
      { name: 'invalid_reward_filter', doc: 'Drops experiences whose reward is missing or NaN.', since: 'v0.5.0' },
      {
        name: 'reward_shaping_mapper',
        doc: 'Rewrites rewards with rules combining stats stored in `info` (add/sub/mul/div with weights).',
      },
      {
        name: 'pass_rate_calculator',
        doc: 'Records per-task mean reward (pass rate) for difficulty-based task selectors.',
        since: 'v0.3.2',
      },
      {
        name: 'data_juicer',
        doc: 'Sends experiences through a Data-Juicer service pipeline (filtering / scoring ops).',
      },
      {
        name: 'dapo_dynamic_sampling',
        doc: 'DAPO dynamic sampling: keeps a task group only when some but not all of its rollouts are correct (`metric_key`, default `accuracy`, above `correct_threshold`).',
        since: 'main',
        source: '139d1c4 trinity/buffer/operators/__init__.py (class: 04052a4 filters/reward_filter.py)',
      },
      {
        name: 'mask_response_truncated',
        doc: 'Zeroes the action mask of truncated responses so they add nothing to the loss (DAPO overlong filtering).',
        since: 'main',
        source: '139d1c4 trinity/buffer/operators/__init__.py (class: 04052a4 filters/reward_filter.py)',
      },
      {
        name: 'multi_step_padding',
        doc: 'Multi-step padding operator (`MultiStepPadding`). Its class was not among the sources read.',
        since: 'main',
        source: 'd574dd1 trinity/buffer/operators/__init__.py',
      },
    ],
  },
  selector: {
    id: 'selector',
    title: 'task selector',
    entries: [
      { name: 'sequential', doc: 'Reads the taskset in a fixed order, epoch after epoch.', since: 'v0.3.2' },
      {
        name: 'shuffle',
        doc: 'Reshuffles the taskset every epoch, like a DataLoader with shuffle=True.',
        since: 'v0.3.2',
      },
      {
        name: 'random',
        doc: 'Samples every batch uniformly at random with replacement; no notion of epoch.',
        since: 'v0.3.2',
      },
      {
        name: 'offline_easy2hard',
        doc: 'Curriculum from easy to hard, ordered once by pre-computed difficulty features.',
        since: 'v0.3.2',
      },
      {
        name: 'difficulty_based',
        doc: 'Adaptive selection of tasks whose estimated pass rate is close to a target, updated from feedback.',
        since: 'v0.3.2',
      },
    ],
  },
  priority_fn: {
    id: 'priority_fn',
    title: 'replay-buffer priority function',
    entries: [
      {
        name: 'linear_decay',
        doc: 'Priority = model version - decay x use count; items are always put back for reuse.',
      },
      {
        name: 'decay_limit_randomization',
        doc: 'Linear-decay priority with optional Gaussian noise (`sigma`); items are dropped after `use_count_limit` uses.',
        since: 'v0.3.2',
      },
      {
        name: 'linear_decay_use_count_control_randomization',
        doc: 'Linear-decay priority with optional Gaussian noise and a use-count limit (renamed `decay_limit_randomization` in v0.3.2).',
        since: 'v0.3.1',
        until: 'v0.3.1',
      },
    ],
  },
};

/**
 * The entries of a registry that exist at `release`. A name appears in several entries only when its
 * status changed between releases (e.g. it became deprecated); their ranges never overlap.
 */
export function registryEntriesAt(id: RegistryId, release: Release): RegistryEntry[] {
  return REGISTRIES[id].entries.filter((e) => inRange(release, e.since, e.until));
}

/** The entry for `name` at `release`, if that release registers it. */
export function registryEntryAt(id: RegistryId, name: string, release: Release): RegistryEntry | undefined {
  return REGISTRIES[id].entries.find((e) => e.name === name && inRange(release, e.since, e.until));
}

/** The names registered at `release`, in display order. */
export function registryNamesAt(id: RegistryId, release: Release): string[] {
  return registryEntriesAt(id, release).map((e) => e.name);
}
