/** Synchronizer method per mode, the sync interval, and eval_interval rounding (`_check_interval`). */
import { explorerGpus } from './cluster';
import type { CheckContext } from '../check-context';

export function checkSynchronizer(ctx: CheckContext): void {
  checkSyncMethod(ctx);
  // main (f3c8dec): each side's interval defaults to sync_interval, filled after the positive check.
  const sync = ctx.get('synchronizer.sync_interval');
  if (ctx.since('main') && Number(sync) > 0) {
    for (const side of ['synchronizer.explorer_sync_interval', 'synchronizer.trainer_sync_interval'] as const)
      if (ctx.get(side) === null || ctx.get(side) === undefined) ctx.fill(side, sync, 'from `sync_interval`');
  }
}

function checkSyncMethod(ctx: CheckContext): void {
  ctx.fill('synchronizer.ray_namespace', ctx.get('ray_namespace'), "the run's Ray namespace");
  const worldSize = ctx.since('v0.5.0') ? (ctx.get('cluster.rollout_gpu_num') ?? 0) : explorerGpus(ctx).rollout;
  ctx.fill('synchronizer.explorer_world_size', worldSize, 'GPUs of the rollout engines');
  if (ctx.get('synchronizer.sync_method') !== 'nccl') return;
  const mode = ctx.get('mode');
  const noNccl = ctx.since('v0.3.1') ? ['train', 'explore', 'bench', 'serve'] : ['train', 'explore', 'bench'];
  if (noNccl.includes(mode ?? '')) {
    // Trinity logs this on every such launch; it only deserves a warning when the user asked for nccl.
    ctx.force(
      'synchronizer.sync_method',
      'checkpoint',
      'TRN230',
      `\`${mode}\` mode does not support NCCL synchronization; \`synchronizer.sync_method\` becomes \`checkpoint\`.`,
      'mode',
    );
  }
  if (ctx.since('v0.4.0') && ctx.get('model.lora_configs') !== null && ctx.get('model.lora_configs') !== undefined) {
    ctx.force(
      'synchronizer.sync_method',
      'checkpoint',
      'TRN230',
      'LoRA is not supported with NCCL synchronization; `synchronizer.sync_method` becomes `checkpoint`.',
      'model.lora_configs',
    );
  }
  if (ctx.since('v0.5.0') && mode === 'colocate') {
    ctx.force(
      'synchronizer.sync_method',
      'memory',
      'TRN230',
      "Colocate mode can't use NCCL synchronization; `synchronizer.sync_method` becomes `memory`.",
      'mode',
    );
  }
}

export function checkIntervals(ctx: CheckContext): void {
  const sync = ctx.get('synchronizer.sync_interval');
  if (!(Number(sync) > 0)) {
    const fromSave = ctx.since('v0.5.0') && ['dpo', 'sft'].includes(ctx.get('algorithm.algorithm_type') ?? '');
    ctx.report(
      'TRN231',
      fromSave
        ? `\`sync_interval\` must be positive: for ${ctx.get('algorithm.algorithm_type')} Trinity ${ctx.release} copies it from \`trainer.save_interval\` (${sync}). Set \`trainer.save_interval\` to a positive number of steps.`
        : `\`synchronizer.sync_interval\` must be positive (got ${sync}).`,
      fromSave
        ? ctx.written('trainer.save_interval')
          ? 'trainer.save_interval'
          : ctx.written('trainer')
            ? 'trainer'
            : 'algorithm.algorithm_type'
        : 'synchronizer.sync_interval',
      { path: fromSave ? ['trainer', 'save_interval'] : ['synchronizer', 'sync_interval'], value: fromSave ? 100 : 1 },
    );
    return;
  }
  const exempt = ctx.since('v0.5.2') ? ['dpo', 'sft'] : ['dpo'];
  if (ctx.get('mode') === 'bench' || exempt.includes(ctx.get('algorithm.algorithm_type') ?? '')) return;
  const evalInterval = Number(ctx.get('explorer.eval_interval'));
  // From main the explorer's own interval (default sync_interval) is what eval_interval is rounded to.
  const own = ctx.since('main') && ctx.written('synchronizer.explorer_sync_interval');
  const interval = Number(own ? ctx.get('synchronizer.explorer_sync_interval') : sync);
  const name = own ? 'synchronizer.explorer_sync_interval' : 'synchronizer.sync_interval';
  if (!(interval > 0)) return; // a non-positive explorer_sync_interval is TRN024 at its value
  if (evalInterval % interval !== 0) {
    const v = Math.max(Math.floor(evalInterval / interval), 1) * interval;
    ctx.set('explorer.eval_interval', v, {
      code: 'TRN232',
      message: `\`eval_interval\` (${evalInterval}) is not a multiple of \`${name.split('.')[1]}\` (${interval}); Trinity rounds it to ${v}.`,
      at: ctx.written('explorer.eval_interval') ? 'explorer.eval_interval' : name,
    });
  }
}
