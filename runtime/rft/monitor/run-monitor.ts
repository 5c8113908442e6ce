/**
 * Where a run's numbers go: `<job dir>/monitor/metrics.jsonl` (one line per role and step), TensorBoard event files
 * per role (`<job dir>/monitor/tensorboard/<role>`, as Trinity's tensorboard monitor lays them out), and the event
 * stream when one is attached. Each row's `time` is seconds since the run (not the stage) started, as the event
 * stream's `metrics` events say.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Role, RolloutSample, RuntimeEvent } from '../../protocol';
import { TensorBoardWriter } from './tensorboard';

export type EventSink = (e: RuntimeEvent) => void;

export class Monitor {
  private readonly metricsPath: string;
  private readonly boards = new Map<Role, TensorBoardWriter>();
  constructor(
    readonly jobDir: string,
    private readonly sink: EventSink = () => {},
    private readonly tensorboard = true,
    /** When the run started (ms): `time` counts from it, so a later stage's times go on from the earlier ones'. */
    private readonly started = Date.now(),
  ) {
    const dir = join(jobDir, 'monitor');
    mkdirSync(dir, { recursive: true });
    this.metricsPath = join(dir, 'metrics.jsonl');
  }

  log(role: Role, step: number, values: Record<string, number>): void {
    const now = Date.now();
    const time = (now - this.started) / 1000;
    // wallTime: what TensorBoard's files record per value, so readers of either file get the same rows.
    appendFileSync(this.metricsPath, `${JSON.stringify({ role, step, time, wallTime: now / 1000, values })}\n`);
    if (this.tensorboard) {
      let board = this.boards.get(role);
      if (!board) {
        board = new TensorBoardWriter(join(this.jobDir, 'monitor', 'tensorboard', role));
        this.boards.set(role, board);
      }
      board.scalars(step, values);
    }
    this.sink({ type: 'metrics', role, step, time, values });
  }

  rollouts(step: number, samples: RolloutSample[]): void {
    if (!samples.length) return;
    appendFileSync(join(this.jobDir, 'monitor', 'rollouts.jsonl'), `${JSON.stringify({ step, samples })}\n`);
    this.sink({ type: 'rollouts', step, samples });
  }

  emit(e: RuntimeEvent): void {
    this.sink(e);
  }
}
