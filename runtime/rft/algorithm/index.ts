/**
 * Trinity-RFT's algorithm building blocks (trinity/algorithm at main) as pure functions: loss aggregation, KL and
 * entropy terms and policy losses on tfjs tensors (float32, differentiable w.r.t. the log-probs), advantage
 * functions on plain float64 data, and registries keyed by Trinity's names.
 */
export * from './loss-agg';
export * from './kl';
export * from './entropy';
export * from './args';
export * from './registry';
export { detach } from './tensor';
export * from './advantage/types';
export { gatherMetrics, maskedWhiten } from './advantage/stats';
export * from './advantage/grpo';
export * from './advantage/grpo-verl';
export * from './advantage/opmd';
export * from './advantage/asymre';
export * from './advantage/reinforce';
export * from './advantage/rec';
export * from './advantage/step-wise-grpo';
export * from './advantage/ppo';
export * from './advantage/reinforce-plus-plus';
export * from './advantage/remax';
export * from './advantage/rloo';
export * from './advantage/distill';
export * from './advantage/clip';
export * from './policy-loss/types';
export * from './policy-loss/ppo';
export * from './policy-loss/gspo';
export * from './policy-loss/opmd';
export * from './policy-loss/dpo';
export * from './policy-loss/sft';
export * from './policy-loss/topr';
export * from './policy-loss/cispo';
export * from './policy-loss/sppo';
export * from './policy-loss/rec';
export * from './policy-loss/sapo';
export * from './policy-loss/importance-sampling';
export * from './policy-loss/mix';
export * from './value-loss';
