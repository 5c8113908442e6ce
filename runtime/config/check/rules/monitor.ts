/** The monitor type and its default arguments. */
import { registryNamesAt } from '../../model/registries';
import { didYouMean } from '../../suggest';
import type { CheckContext } from '../check-context';

const DEFAULT_ARGS: Record<string, Record<string, unknown>> = {
  tensorboard: {},
  wandb: { base_url: null, api_key: null },
  mlflow: { uri: 'http://localhost:5000', username: null, password: null },
  swanlab: {},
};

export function checkMonitor(ctx: CheckContext): void {
  const type = String(ctx.get('monitor.monitor_type'));
  if (!ctx.isRegistered('monitor', type)) {
    const names = registryNamesAt('monitor', ctx.release);
    ctx.report(
      'TRN240',
      `Invalid monitor type \`${type}\`; Trinity ${ctx.release} has ${names.join(', ')}.${didYouMean(type, names)}`,
      'monitor.monitor_type',
      { candidates: names },
    );
    return;
  }
  if (type !== 'tensorboard') {
    ctx.report(
      'TRN241',
      `\`monitor.monitor_type: ${type}\`: a run of the local runtime logs nothing to ${type}; its metrics go to \`monitor/metrics.jsonl\` in the job directory and to the run's dashboard (Trinity-RFT logs to ${type}).`,
      'monitor.monitor_type',
      undefined,
      'information',
    );
  }
  if (ctx.get('monitor.monitor_args') === null || ctx.get('monitor.monitor_args') === undefined) {
    ctx.fill(
      'monitor.monitor_args',
      structuredClone(DEFAULT_ARGS[type] ?? {}),
      `the default arguments of the ${type} monitor`,
    );
  }
  ctx.fill('monitor.cache_dir', `${ctx.get('checkpoint_job_dir')}/monitor`, 'monitor files go under the job directory');
}
