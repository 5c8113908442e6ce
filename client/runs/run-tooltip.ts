/**
 * The Runs view's tooltip of a run, as Markdown: status, stage, each role's step (steps done, for a run that ended
 * short of its total), the latest numbers, the holder of its job lock and its error. It says only what is known: a
 * run read from disk names no stages (its one stage is the job folder), so it gets no "Stage 1/1" line, and a stage
 * whose mode is unknown gets no empty "()".
 */
import { join } from 'node:path';
import { jobLockPath } from '../../runtime/protocol';
import { describeHolder, endedShortOf, formatNumber, holderIsHere, runMode, type RunState } from './run-state';

/** `label` is the run's name in the view; `duration` its running time as the row shows it ('' when unknown). */
export function runTooltip(run: RunState, label: string, duration: string): string {
  const lines = [`**${label}** — ${run.status}${run.runWith !== 'local' ? ` (${run.runWith})` : ''}`];
  const stage = describeStage(run);
  if (stage) lines.push(stage);
  for (const [role, p] of Object.entries(run.progress)) {
    const of = `${p.step}${p.total ? ` of ${p.total}` : ''}`;
    const steps = endedShortOf(run, p) ? `${of} steps done` : `step ${of}`;
    lines.push(`${role}: ${steps}${p.detail ? ` — ${p.detail}` : ''}`);
  }
  if (run.reward !== undefined) lines.push(`Latest reward: ${formatNumber(run.reward)}`);
  if (run.loss !== undefined) lines.push(`Latest loss: ${formatNumber(run.loss)}`);
  if (run.evalScore)
    lines.push(`Eval ${run.evalScore.metric} (${run.evalScore.taskset}): ${formatNumber(run.evalScore.value)}`);
  if (duration) lines.push(`Duration: ${duration}`);
  if (run.holder) {
    lines.push(`Writing the job folder: ${describeHolder(run.holder)}`);
    if (!holderIsHere(run.holder))
      lines.push(
        `This machine cannot tell whether it still runs: if it does not, delete \`${join(run.jobDir, jobLockPath(runMode(run)))}\`.`,
      );
  }
  const error = run.error ? `\n\`\`\`text\n${run.error.slice(0, 1500)}\n\`\`\`\n` : '';
  return `${lines.map((l) => `${l}\n\n`).join('')}${error}\`${run.jobDir}\``;
}

/** `Stage 2/3: sft (train)` for a config with stages; `Mode: both` for one stage whose mode is known; else nothing. */
function describeStage(run: RunState): string | undefined {
  const s = run.stage;
  if (!s) return undefined;
  if (s.count > 1) return `Stage ${s.index + 1}/${s.count}: ${s.name}${s.mode ? ` (${s.mode})` : ''}`;
  return s.mode ? `Mode: ${s.mode}` : undefined;
}
