/**
 * The explorer's tasks: the training and eval tasksets read into what the explorer runs, the training taskset's
 * reader (batch by batch, with its selector), how many explorer steps it allows, and when the selector hears back.
 */
import type { Config } from '../../../config/types.generated';
import { BatchReader, type SelectorFeedback } from '../../data/reader';
import { readTasks, type Task } from '../../data/tasks';
import type { ExplorerTask } from '../../explorer/explore-step';
import { knownRewardNames } from '../../rewards';
import { isExplorerSyncPoint, type SyncTiming } from '../../synchronizer/sync-points';
import { knownWorkflows } from '../../workflows/registry';

export interface TaskSet {
  name: string;
  tasks: ExplorerTask[];
}

export type TaskReader = BatchReader<ExplorerTask> & {
  /** After explorer step `step`: the step's pass rates (if any) for the selector, delivered as Trinity times them. */
  afterStep(step: number, feedback: readonly SelectorFeedback[] | undefined): void;
};

/** The training tasksets (`taskset`, `tasksets`) or the eval tasksets, read in config order. */
export async function tasksOf(
  cfg: Config,
  configDir: string,
  which: 'train' | 'eval',
): Promise<(TaskSet & { warnings: string[] })[]> {
  const input = cfg.buffer.explorer_input;
  const list =
    which === 'train'
      ? // `tasksets` is new in v0.3.2.
        [...(input.taskset ? [input.taskset] : []), ...(input.tasksets ?? [])]
      : input.eval_tasksets;
  const out: (TaskSet & { warnings: string[] })[] = [];
  for (const [i, ts] of list.entries()) {
    const r = await readTasks(ts, {
      baseDir: configDir,
      position: i,
      explorerInput: input,
      algorithmRepeatTimes: which === 'train' ? cfg.algorithm.repeat_times : undefined,
      buffer: cfg.buffer,
      workflows: knownWorkflows(),
      rewardFns: knownRewardNames(),
    });
    out.push({ name: r.taskset.name, tasks: r.tasks.map(explorerTask), warnings: r.warnings });
  }
  return out;
}

/** Trinity's Task -> what the explorer runs. */
function explorerTask(t: Task): ExplorerTask {
  const text = (v: unknown): string | undefined =>
    v === null || v === undefined ? undefined : typeof v === 'string' ? v : JSON.stringify(v);
  return {
    raw: t.raw,
    taskDesc: text(t.taskDesc),
    truth: text(t.truth),
    systemPrompt: t.format.system_prompt,
    replyPrefix: t.format.reply_prefix,
    rolloutArgs: {
      temperature: t.rolloutArgs.temperature,
      top_p: t.rolloutArgs.top_p,
      top_k: t.rolloutArgs.top_k,
      max_tokens: t.rolloutArgs.max_tokens,
    },
    workflowArgs: t.workflowArgs,
    rewardFnArgs: t.rewardFnArgs,
    rewardFn: t.rewardFn,
    isEval: t.isEval,
    workflow: t.workflow,
    repeatTimes: t.repeatTimes,
  };
}

/** Reads the training taskset batch by batch (`buffer.batch_size`, epochs/total_steps, the taskset's selector). */
export function taskReader(cfg: Config, tasks: ExplorerTask[], offset: number): TaskReader {
  const input = cfg.buffer.explorer_input;
  const ts = input.taskset ?? input.tasksets?.[0];
  // `task_selector` up to v0.5.0; from v0.5.2 a deprecated alias that Trinity copies over `data_selector`.
  const written = ts?.task_selector ?? ts?.data_selector;
  const selector = written?.selector_type && written.selector_type !== 'sequential' ? written : null;
  // Trinity's TasksetScheduler (a selector, or several tasksets) adds the taskset to each task's index.
  const scheduled = selector !== null || (input.taskset ? 1 : 0) + (input.tasksets?.length ?? 0) > 1;
  const reader = new BatchReader(
    tasks.map((t, i) => ({ ...t, taskIndex: scheduled ? { index: i, taskset_id: 0 } : { index: i } })),
    {
      batchSize: cfg.buffer.batch_size,
      totalEpochs: cfg.buffer.total_epochs,
      totalSteps: cfg.buffer.total_steps,
      offset,
      selector,
      column: (key) => tasks.map((t) => t.raw[key]),
      name: ts?.name ?? 'taskset',
    },
  );
  return Object.assign(reader, { afterStep: feedbackAtSyncPoints(reader, cfg.synchronizer) });
}

/** Explorer steps a taskset of `tasks` rows allows: `buffer.total_steps`, else epochs × rows / batch_size. */
export function explorerTotalSteps(cfg: Config, tasks: number): number {
  return cfg.buffer.total_steps ?? Math.floor((tasks * cfg.buffer.total_epochs) / cfg.buffer.batch_size);
}

/**
 * When a taskset's selector hears back: Trinity's explorer reads and schedules each step's tasks without waiting, and
 * runs the experience pipeline (whose `pass_rate_calculator` yields the pass rates) and `taskset.feedback` only when
 * it finishes its pending steps, in `need_sync`: after explorer step k when k > sync_offset and
 * (k − sync_offset) % sync_interval == 0 (trinity/explorer/explorer.py). Steps here run whole, so their pass rates
 * are kept until that point and then handed over step by step, before the next batch is read. `afterStep(k,
 * feedback)`, called after each explorer step, delivers the kept feedback at sync points.
 */
export function feedbackAtSyncPoints(
  reader: Pick<BatchReader<unknown>, 'feedback'>,
  timing: SyncTiming,
): (step: number, feedback: readonly SelectorFeedback[] | undefined) => void {
  const pending: SelectorFeedback[][] = [];
  return (step, feedback) => {
    // One reader stands for taskset 0 (the runtime reads the training tasksets as one).
    if (feedback) pending.push(feedback.filter((f) => f.tasksetId === 0));
    if (!isExplorerSyncPoint(step, timing)) return;
    for (const fs of pending.splice(0)) for (const f of fs) reader.feedback(f.indices, f.values);
  };
}
