/**
 * A local run writes its metrics to metrics.jsonl (and TensorBoard files for `tensorboard`); the other monitors of
 * Trinity-RFT's registry (wandb, mlflow, swanlab: config/model/registries.ts) log to services it never reaches. The
 * line a run logs at its start for those, naming where its metrics go instead.
 */
import { join } from 'node:path';

export function remoteMonitorNotice(monitorType: string, jobDir: string): string | undefined {
  const type = monitorType.toLowerCase();
  if (type === 'tensorboard') return undefined;
  return (
    `\`monitor.monitor_type: ${type}\`: the local runtime logs nothing to ${type}; this run's metrics go to ` +
    `${join(jobDir, 'monitor', 'metrics.jsonl')} and the dashboard (TensorBoard files too with \`monitor_type: tensorboard\`).`
  );
}
