/** The mode, the job directory and the names Trinity derives from project/group/name. */
import { MODES } from '../../model/choices';
import { choicesAt } from '../../model';
import { didYouMean } from '../../suggest';
import type { CheckContext } from '../check-context';
import { candidatePaths } from '../runtime';

export function checkNamespace(ctx: CheckContext): void {
  if (!ctx.get('ray_namespace'))
    ctx.fill(
      'ray_namespace',
      `${ctx.get('project')}/${ctx.get('name')}`,
      'Trinity names the Ray namespace `<project>/<name>`.',
    );
}

export function checkMode(ctx: CheckContext): boolean {
  const mode = ctx.get('mode');
  const valid = choicesAt(MODES, ctx.release).map((c) => c.value);
  if (mode !== undefined && valid.includes(mode ?? '')) return true;
  ctx.report(
    'TRN200',
    `Invalid mode \`${mode}\`: Trinity ${ctx.release} accepts ${valid.join(', ')}.${didYouMean(String(mode), valid)}`,
    ctx.written('mode') ? 'mode' : 'stages',
    {
      candidates: valid,
    },
  );
  return false;
}

export function checkJobDir(ctx: CheckContext): void {
  const root = String(ctx.get('checkpoint_root_dir') ?? '');
  const parts = [root || '.', ctx.get('project'), ctx.get('group'), ctx.get('name')].filter((p) => p !== '');
  const jobDir = parts.join('/');
  if (
    ctx.get('continue_from_checkpoint') === false &&
    ctx.host.exists &&
    candidatePaths(ctx, jobDir).some((p) => ctx.host.exists!(p))
  ) {
    const bench = ctx.get('mode') === 'bench';
    ctx.report(
      'TRN209',
      bench
        ? `The job directory \`${jobDir}\` already exists: in bench mode Trinity sets \`continue_from_checkpoint\` to true and evaluates its checkpoints.`
        : `The job directory \`${jobDir}\` already exists and \`continue_from_checkpoint\` is false: if it is not empty, Trinity renames this run to \`${ctx.get('name')}_<timestamp>\`. Set \`continue_from_checkpoint: true\` to resume it instead.`,
      'continue_from_checkpoint',
      { path: ['continue_from_checkpoint'], value: true },
    );
  }
  ctx.fill(
    'checkpoint_job_dir',
    jobDir,
    'Trinity writes checkpoints, buffers, logs and monitor files under `<checkpoint_root_dir>/<project>/<group>/<name>`.',
  );
  ctx.fill('log.save_dir', `${ctx.get('checkpoint_job_dir')}/log`, 'Logs go to `<checkpoint_job_dir>/log`.');
}
