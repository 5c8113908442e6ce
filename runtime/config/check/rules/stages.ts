/** What `trinity run` does around each stage of a multi-stage config (cli/launcher.py, Config.__iter__). */
import { rolesOf } from '../../model/choices';
import type { CheckContext } from '../check-context';

export function checkStage(ctx: CheckContext): void {
  if (!ctx.stage) return;
  if (ctx.since('v0.4.0')) {
    const save = ctx.get('trainer.save_hf_checkpoint');
    if (save !== 'last') {
      ctx.force(
        'trainer.save_hf_checkpoint',
        'last',
        'TRN280',
        `In a stage Trinity forces \`trainer.save_hf_checkpoint\` to \`last\` (was \`${save}\`), so the next stage can start from its Hugging Face checkpoint.`,
        'stages',
      );
    }
  }
  // After every stage, the last one included, Trinity looks up the stage's latest veRL Hugging Face checkpoint.
  const mode = ctx.get('mode');
  const trains = rolesOf(mode ?? 'both').trainer;
  const verl = ctx.get('trainer.trainer_type') === 'verl';
  if (!trains || !verl) {
    const why = !trains
      ? `a \`${mode}\` stage trains nothing, so it writes no checkpoint`
      : `a \`${ctx.get('trainer.trainer_type')}\` trainer writes no veRL checkpoint`;
    ctx.report(
      'TRN280',
      `After each stage Trinity loads the stage's latest Hugging Face checkpoint (to start the next stage from it), but ${why}: the run fails with "No huggingface checkpoint found" once this stage ends.`,
      ctx.written('mode') ? 'mode' : 'stages',
    );
  }
}
