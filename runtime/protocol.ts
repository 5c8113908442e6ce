/**
 * The runtime's event stream (`trinity-workbench run --events jsonl`): one JSON object per stdout line. Type-only,
 * shared by the runtime, the extension and the tests.
 */

export type Role = 'explorer' | 'trainer' | 'bench';

export interface RunEvent {
  type: 'run';
  runId: string;
  config: string;
  jobDir: string;
  backend: string;
  startedAt: string;
}

export interface MetricsEvent {
  type: 'metrics';
  role: Role;
  step: number;
  /** Seconds since the run started. */
  time: number;
  values: Record<string, number>;
}

export interface RolloutSample {
  prompt: string;
  response: string;
  reward: number;
}

export interface RolloutsEvent {
  type: 'rollouts';
  step: number;
  samples: RolloutSample[];
}

export interface LogEvent {
  type: 'log';
  level: 'debug' | 'info' | 'warning' | 'error';
  message: string;
}

export interface CheckpointEvent {
  type: 'checkpoint';
  step: number;
  path: string;
}

export interface DoneEvent {
  type: 'done';
  status: 'finished' | 'stopped' | 'failed';
  error?: string;
}

export type RuntimeEvent = RunEvent | MetricsEvent | RolloutsEvent | LogEvent | CheckpointEvent | DoneEvent;
