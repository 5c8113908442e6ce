/** The mode, the job directory and the names Trinity derives from project/group/name. */
import { MODES } from '../../model/choices';
import { choicesAt } from '../../model';
import { didYouMean } from '../../suggest';
import type { CheckContext } from '../context';

export function checkNamespace(ctx: CheckContext): void {
  if (!ctx.get('ray_namespace')) ctx.fill('ray_namespace', `${ctx.get('project')}/${ctx.get('name')}`, 'Trinity names the Ray namespace `<project>/<name>`.');
}

export function checkMode(ctx: CheckContext): boolean {
  const mode = ctx.get('mode');
  const valid = choicesAt(MODES, ctx.release).map((c) => c.value);
  if (valid.includes(mode)) return true;
  ctx.report('TRN200', `Invalid mode \`${mode}\`: Trinity ${ctx.release} accepts ${valid.join(', ')}.${didYouMean(String(mode), valid)}`, ctx.written('mode') ? 'mode' : 'stages', {
    candidates: valid,
  });
  return false;
}

export function checkJobDir(ctx: CheckContext): void {
  const root = String(ctx.get('checkpoint_root_dir') ?? '');
  const parts = [root || '.', ctx.get('project'), ctx.get('group'), ctx.get('name')].filter((p) => p !== '');
  ctx.fill('checkpoint_job_dir', parts.join('/'), 'Trinity writes checkpoints, buffers, logs and monitor files under `<checkpoint_root_dir>/<project>/<group>/<name>`.');
  ctx.fill('log.save_dir', `${ctx.get('checkpoint_job_dir')}/log`, 'Logs go to `<checkpoint_job_dir>/log`.');
}
