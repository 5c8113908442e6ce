/**
 * Where a run's numbers go: `<job dir>/monitor/metrics.jsonl` (one line per role and step), TensorBoard event files
 * per role (`<job dir>/monitor/tensorboard/<role>`, as Trinity's tensorboard monitor lays them out), the rollout
 * records (`rollouts.jsonl` per explorer step, `eval-rollouts.jsonl` per evaluation and eval taskset), and the event
 * stream when one is attached. Each row's `time` is seconds since the run (not the stage) started, as the event
 * stream's `metrics` events say. A resumed run's first step of each role marks the restart in both files (a restart
 * line, a SessionLog.START), so readers drop what the abandoned timeline logged from there on (step-log.ts).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Role, RolloutSample, RuntimeEvent } from '../../protocol';
import { withIo } from '../io-failure';
import { StepLog } from './step-log';
import { TensorBoardWriter } from './tensorboard';
import { evalRolloutTimeline } from '../../metrics/rollouts-jsonl';

export type EventSink = (e: RuntimeEvent) => void;

export class Monitor {
  private readonly metrics: StepLog;
  private readonly rolloutLog: StepLog;
  private readonly evalRolloutLog: StepLog;
  private readonly boards = new Map<Role, TensorBoardWriter>();
  constructor(
    readonly jobDir: string,
    private readonly sink: EventSink = () => {},
    private readonly tensorboard = true,
    /** When the run started (ms): `time` counts from it, so a later stage's times go on from the earlier ones'. */
    private readonly started = Date.now(),
  ) {
    const dir = join(jobDir, 'monitor');
    withIo('monitor folder creation', dir, () => mkdirSync(dir, { recursive: true }));
    const role = (line: Record<string, unknown>) => (typeof line.role === 'string' ? line.role : undefined);
    this.metrics = new StepLog(join(dir, 'metrics.jsonl'), 'metrics append', role);
    this.rolloutLog = new StepLog(join(dir, 'rollouts.jsonl'), 'rollouts append', () => 'explorer');
    this.evalRolloutLog = new StepLog(join(dir, 'eval-rollouts.jsonl'), 'eval rollouts append', evalRolloutTimeline);
  }

  log(role: Role, step: number, values: Record<string, number>): void {
    const now = Date.now();
    const time = (now - this.started) / 1000;
    // wallTime: what TensorBoard's files record per value, so readers of either file get the same rows.
    const wallTime = now / 1000;
    this.metrics.append(role, step, { role, step, time, wallTime, values }, () => ({
      role,
      step,
      time,
      wallTime,
      values: {},
      restart: true,
    }));
    if (this.tensorboard) {
      let board = this.boards.get(role);
      if (!board) {
        board = new TensorBoardWriter(join(this.jobDir, 'monitor', 'tensorboard', role), step);
        this.boards.set(role, board);
      }
      board.scalars(step, values);
    }
    this.sink({ type: 'metrics', role, step, time, values });
  }

  rollouts(step: number, samples: RolloutSample[]): void {
    if (!samples.length) return;
    this.rolloutLog.append('explorer', step, { step, samples }, () => ({ step, samples: [], restart: true }));
    this.sink({ type: 'rollouts', step, samples });
  }

  /** An evaluation's records of one eval taskset at `step`, beside the explorer's (a timeline per role and taskset). */
  evalRollouts(step: number, role: 'explorer' | 'bench', taskset: string, samples: RolloutSample[]): void {
    if (!samples.length) return;
    const line = { step, role, eval: taskset };
    this.evalRolloutLog.append(evalRolloutTimeline(line)!, step, { ...line, samples }, () => ({
      ...line,
      samples: [],
      restart: true,
    }));
    this.sink({ type: 'rollouts', step, samples, eval: { taskset, role } });
  }

  emit(e: RuntimeEvent): void {
    this.sink(e);
  }
}
