/**
 * `mode: train`: from an SFT/DPO file, or from the experience buffer that a `mode: explore` process of the same job
 * fills (Trinity's fully asynchronous setup: trainer-side/buffer-input.ts), until the input runs out or
 * `trainer.total_steps`, with a checkpoint at the end. Reading from a buffer, the job's explorer process learns the
 * trainer's status from `state/trainer.json`.
 */
import type { BufferPosition } from '../../buffer';
import { closeEach } from '../../closing';
import { writeTrainerStatus } from '../exchange/async-state';
import type { StageContext, StageResult } from '../stage/stage-context';
import { RunSetupError } from '../stage/stage-context';
import { withAbsoluteBufferPath } from '../stage/config-paths';
import { BufferInput } from '../trainer-side/buffer-input';
import { fileInput, isTrainFile } from '../trainer-side/file-input';
import { stalenessBound } from '../trainer-side/sample-strategy';
import { TrainerSide } from '../trainer-side/trainer-side';

export async function runTrain(ctx: StageContext): Promise<StageResult> {
  const side = new TrainerSide(ctx);
  const { resumed } = side;
  let buffer: BufferInput | undefined;
  let statusWritten = false;
  let failed = false;
  try {
    const source = ctx.cfg.buffer.trainer_input.experience_buffer;
    if (!source) throw new RunSetupError('mode train needs buffer.trainer_input.experience_buffer');
    const input = isTrainFile(source)
      ? await fileInput(ctx, source, side.policy.tokenizer, Number(resumed?.extra.readerOffset ?? 0))
      : (buffer = new BufferInput(
          ctx,
          withAbsoluteBufferPath(source, ctx.configDir),
          resumed?.extra.buffer as BufferPosition | undefined,
          stalenessBound(side.algorithm, ctx.release, source, ctx.log),
        ));
    const trainer = side.start(input.totalSteps);
    if (resumed) ctx.log('info', `resumed from ${resumed.dir} (trainer step ${trainer.step})`);
    if (buffer) {
      // What the explorer process of the job reads to decide whether to wait for a newer checkpoint.
      writeTrainerStatus(ctx.jobDir, 'running', trainer.step);
      statusWritten = true;
    }
    const loop = side.loop(input, buffer ? buffer.knownTotal : input.totalSteps);
    const from = trainer.step;
    await loop.trainUntil();
    if (trainer.step === from && trainer.step < input.stepLimit && !ctx.signal.aborted) {
      // Trinity's trainer ends here too (its read timed out); a run that "finished" having trained nothing must say so.
      const wait = buffer
        ? ` within max_read_timeout (${buffer.maxWaitMs / 1000} s): is the job's mode: explore process running?`
        : '';
      ctx.log(
        'warning',
        `this run trained nothing: ${source.name} gave no batch of ${ctx.cfg.buffer.train_batch_size} experiences${wait}`,
      );
    }
    await loop.finish();
    return { lastCheckpoint: side.checkpoints.last, evals: {}, stopped: ctx.signal.aborted };
  } catch (e) {
    failed = true;
    throw e;
  } finally {
    await closeEach(ctx.log, failed, [
      () => buffer?.close(),
      () => statusWritten && writeTrainerStatus(ctx.jobDir, 'stopped', side.trainer.step),
      () => side.dispose(),
    ]);
  }
}
