/**
 * The trainer's checkpoints as the `both` and `train` modes keep them: where a run resumes from, putting the trainer
 * back there, and saving `global_step_<step>` (weights, tokenizer, optimizer, PPO's critic, what to resume from).
 */
import { join } from 'node:path';
import type { Pretrained } from '../../../engine/pretrained';
import { writeDirFiles } from '../../../engine/lm/checkpoint';
import { valueModelFiles } from '../../../engine/lm/value-head';
import { loraFiles, type LoraSpec } from '../../../engine/lm/lora';
import { LORA_DIR } from '../stage/lora-adapter';
import { newestIntactCheckpoint } from '../../checkpoint/checkpoint-choice';
import {
  encodeOptimizer,
  pruneCheckpoints,
  readOptimizerState,
  readTrainerState,
  saveCheckpoint,
} from '../../checkpoint/checkpoints';
import type { CriticSetup, RftTrainer } from '../../trainer/train-step';
import type { StageContext } from '../stage/stage-context';

/** The checkpoint a run continues from (`continue_from_checkpoint` and one exists), with its trainer state. */
export interface ResumePoint {
  dir: string;
  step: number;
  extra: Record<string, unknown>;
}

/**
 * The checkpoint a run continues from, when `continue_from_checkpoint` is set and one exists: the newest that
 * verifies, damaged newer ones set aside with a warning (checkpoint-choice.ts).
 */
export function resumePoint(ctx: StageContext): ResumePoint | undefined {
  const latest = ctx.cfg.continue_from_checkpoint ? newestIntactCheckpoint(ctx.jobDir, ctx.log) : undefined;
  if (!latest) return undefined;
  const state = readTrainerState(latest.dir);
  return { dir: latest.dir, step: Number(state.step), extra: state.extra };
}

/** The trainer's side of a resume (its weights come with the policy, loaded from the checkpoint directory). */
export function restoreTrainer(trainer: RftTrainer, critic: CriticSetup | undefined, at: ResumePoint): void {
  const opt = readOptimizerState(at.dir);
  if (opt) trainer.optimizer.loadState(opt);
  const criticOpt = critic ? readOptimizerState(join(at.dir, 'critic')) : undefined;
  if (criticOpt) trainer.loadCriticState(criticOpt);
  trainer.restoreStep(at.step);
}

/** One trainer's checkpoints in the job directory, and the newest it saved (or resumed from). */
export class TrainerCheckpoints {
  /** The newest checkpoint directory: saved by this trainer, else the one it resumed from. */
  last: string | undefined;

  constructor(
    private readonly ctx: StageContext,
    private readonly policy: Pretrained,
    private readonly trainer: RftTrainer,
    private readonly critic: CriticSetup | undefined,
    resumedFrom: string | undefined,
    /** The LoRA adapter the trainer trains: each checkpoint keeps it as PEFT files in `lora_adapter/`. */
    private readonly lora?: LoraSpec,
  ) {
    this.last = resumedFrom;
  }

  /** Whether the trainer's current step is the newest checkpoint already. */
  holdsCurrentStep(): boolean {
    return this.last?.endsWith(`global_step_${this.trainer.step}`) ?? false;
  }

  /**
   * Saves `global_step_<step>` (weights, LoRA merged, and the adapter itself; tokenizer, optimizer, `extra` to resume
   * from, PPO's critic, whatever `more` writes), then prunes to `max_checkpoints_to_keep` and emits the `checkpoint` event.
   */
  async save(extra: Record<string, unknown>, more?: (dir: string) => void): Promise<void> {
    const { ctx, trainer, critic, policy } = this;
    // Everything read off the device first (asynchronously); the directory is then written in one synchronous swap.
    const optimizer = await trainer.optimizer.exportState();
    const criticFiles = critic ? await criticFilesOf(critic, trainer) : undefined;
    const adapter = this.lora ? await loraFiles(policy.model, this.lora, ctx.cfg.model.model_path) : undefined;
    const dir = await saveCheckpoint(
      ctx.jobDir,
      trainer.step,
      policy.model,
      policy.tokenizer,
      optimizer,
      { step: trainer.step, extra },
      (tmp) => {
        more?.(tmp);
        if (criticFiles) writeDirFiles(join(tmp, 'critic'), criticFiles);
        if (adapter) writeDirFiles(join(tmp, LORA_DIR), adapter);
      },
    );
    pruneCheckpoints(ctx.jobDir, ctx.cfg.trainer.max_checkpoints_to_keep);
    ctx.monitor.emit({ type: 'checkpoint', step: trainer.step, path: dir });
    this.last = dir;
  }
}

/** PPO's critic inside a checkpoint: its weights and value head, and its optimizer state, as files. */
async function criticFilesOf(critic: CriticSetup, trainer: RftTrainer): Promise<Record<string, string | Uint8Array>> {
  const state = await trainer.criticState();
  return valueModelFiles(critic.model, { files: state ? { 'optimizer.safetensors': encodeOptimizer(state) } : {} });
}
