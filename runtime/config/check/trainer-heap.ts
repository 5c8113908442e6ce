/**
 * TRN323 / TRN324: a local run whose trainer pass cannot fit (or barely fits) the wasm backend's heap, found before
 * any work from the model's config.json, the rows the trainer differentiates at once and the longest row the
 * explorer can produce (local-memory/trainer-pass-bytes.ts). Only where the host says runs go to the local runtime
 * (`CheckHost.localRuns`): on Trinity the trainer runs on GPUs, whose memory TRN274 estimates.
 */
import { rolesOf } from '../model/choices';
import type { ConfigPath } from '../config-path';
import type { KeyFix } from '../diagnostics';
import { lineColumn } from '../load/load-config';
import {
  heapBytes,
  rowsWithin,
  tokensWithin,
  trainerPassBytes,
  WASM_HEAP_BYTES,
  type TrainerPass,
} from '../local-memory/trainer-pass-bytes';
import type { CheckContext } from './check-context';
import { causalLmParams } from '../gpu-memory/model-shape';
import { algorithmTypeAt } from '../model/algorithms';
import {
  explorerSharesThread,
  heldModels,
  localModelShape,
  longestRow,
  nearLimit,
  usesLora,
  WARN_ABOVE,
} from './local-run-inputs';

/** veRL's actor micro-batch key, which the local trainer reads for its rows per pass (trainer-settings.ts). */
export const MICRO_BATCH_KEY = 'trainer.trainer_config.actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu';

export function checkTrainerHeap(ctx: CheckContext): void {
  if (!ctx.host.localRuns || !rolesOf(String(ctx.get('mode') ?? 'both')).trainer) return;
  const shape = localModelShape(ctx);
  if (!shape) return;
  const row = longestRow(ctx);
  const batch = trainBatchRows(ctx);
  if (!row || !batch) return;
  const micro = ctx.get(MICRO_BATCH_KEY as ConfigPath) as unknown;
  const dpo = ctx.get('algorithm.algorithm_type') === 'dpo';
  let rows = typeof micro === 'number' && micro > 0 ? Math.min(micro, batch) : batch;
  if (dpo && rows % 2 === 1) rows++; // DPO pairs stay together in one micro-batch (train-step.ts).
  const lora = usesLora(ctx);
  const held = heldModels(ctx, shape);
  if (!held) return;
  const pass: TrainerPass = {
    rows,
    tokens: row.tokens,
    responseTokens: row.response,
    frozenBase: lora,
    accumulates: rows < batch,
    explorerWeights: explorerSharesThread(ctx),
    ...held,
  };
  const est = trainerPassBytes(shape, pass);
  const heap = heapBytes(est);
  if (heap.high <= WASM_HEAP_BYTES * WARN_ABOVE) return;

  const line = (p: ConfigPath): string => `line ${lineColumn(ctx.loaded.source, ctx.range(p)[0]).line}`;
  const named = (p: ConfigPath): string => (ctx.written(p) ? `\`${p}\` (${line(p)})` : `\`${p}\``);
  const microWritten = ctx.written(MICRO_BATCH_KEY as ConfigPath);
  const rowsFrom = microWritten
    ? named(MICRO_BATCH_KEY as ConfigPath)
    : ctx.written('buffer.train_batch_size')
      ? `${named('buffer.train_batch_size')}, no micro-batch size`
      : `${named('buffer.batch_size')} × ${named('algorithm.repeat_times')}, no micro-batch size`;
  const budget = WASM_HEAP_BYTES * WARN_ABOVE;
  const fits = rowsWithin(shape, { ...pass, accumulates: true }, budget, rows);
  const lower: string[] = [];
  const fixes: KeyFix[] = [];
  if (fits >= 1 && fits < rows) {
    lower.push(`set \`${MICRO_BATCH_KEY}\` to ${fits}`);
    fixes.push({
      title: `Set ppo_micro_batch_size_per_gpu to ${fits}`,
      set: [{ path: MICRO_BATCH_KEY.split('.'), value: fits }],
    });
  }
  const lengthKeys = row.keys.map((k) => `\`${k}\``).join(' / ');
  const tokensNow = tokensWithin(shape, pass, budget);
  if (tokensNow > 0) lower.push(`lower ${lengthKeys} so a row stays within ${tokensNow} tokens`);
  const tokensAlone = tokensWithin(shape, { ...pass, rows: 1, accumulates: batch > 1 }, budget);
  if (fits < 1 && tokensAlone > tokensNow)
    lower.push(`set \`${MICRO_BATCH_KEY}\` to 1 and keep a row within ${tokensAlone} tokens`);
  const gib = (b: number): string => (b / 2 ** 30).toFixed(2);
  const s = shape;
  const millions = (causalLmParams(s) / 1e6).toFixed(1);
  const heldBy = [
    lora
      ? `the frozen weights of ${millions}M parameters`
      : `the weights, AdamW's moments and gradients of ${millions}M parameters`,
    ...(pass.reference ? ["the reference model's weights"] : []),
    ...(pass.criticParams ? [`the critic's (${(pass.criticParams / 1e6).toFixed(1)}M parameters)`] : []),
    ...(pass.explorerWeights ? ["the explorer's copy of the weights (it shares the trainer's thread)"] : []),
  ];
  const parts =
    `${gib(est.attentionPerRow * rows)} GiB of them full attention score matrices, ` +
    `${gib(Math.max(est.state, est.update))} GiB ${heldBy.join(', ')}`;
  const what =
    `The local trainer differentiates ${rows} row${rows === 1 ? '' : 's'} at once (${rowsFrom}) of up to ${row.tokens} tokens ` +
    `(${row.keys.map(named).join(', ')}) on the shape of \`${s.source}\` (${s.numLayers} layers, ${s.numHeads} heads, ` +
    `hidden ${s.hiddenSize}, vocabulary ${s.vocabSize}): about ${gib(est.total)} GiB of tensors at its peak by tfjs' count ` +
    `(${parts}), for which the wasm backend's heap ` +
    `must grow to ${gib(heap.low)}–${gib(heap.high)} GiB; it holds ${gib(WASM_HEAP_BYTES)} GiB at most, which no setting raises.`;
  // Where no row fits, the model itself is what does not: LoRA holds only its frozen weights (and tiny adapters).
  const modelTooLarge = tokensAlone === 0;
  const loraFits =
    modelTooLarge &&
    !lora &&
    tokensWithin(shape, { ...pass, rows: 1, accumulates: batch > 1, frozenBase: true }, budget) > 0;
  const todo = lower.length
    ? ` To run it locally, ${lower.join('; or ')}. Or run it on Trinity-RFT (\`trinityWorkbench.runWith: trinity\`).`
    : loraFits
      ? " Even one short row does not fit beside the model's training state: train LoRA adapters instead (`model.lora_configs`), whose frozen base holds a quarter of it, or run it on Trinity-RFT (`trinityWorkbench.runWith: trinity`)."
      : ' Even one short row does not fit: run it on Trinity-RFT (`trinityWorkbench.runWith: trinity`).';
  const at: ConfigPath =
    modelTooLarge && ctx.written('model.model_path')
      ? 'model.model_path'
      : microWritten
        ? (MICRO_BATCH_KEY as ConfigPath)
        : ctx.written('model.max_model_len')
          ? 'model.max_model_len'
          : ctx.written('buffer.batch_size')
            ? 'buffer.batch_size'
            : 'model.model_path';
  // SFT and DPO rows are the dataset's, padded to the longest in the batch: max_model_len only caps them, so a pass
  // of that length is what may happen, not what will (the agent demo's SFT rows are a third of it).
  const fromData = ['sft', 'dpo'].includes(
    algorithmTypeAt(String(ctx.get('algorithm.algorithm_type')), ctx.release)?.schema ?? '',
  );
  if (fromData && heap.low > WASM_HEAP_BYTES)
    ctx.report(
      'TRN324',
      `${what} Its rows are the dataset's, each up to that length: should a batch's longest reach it, the trainer would run out of the heap.${todo}`,
      at,
      { fixes },
    );
  else if (heap.low > WASM_HEAP_BYTES)
    ctx.report(
      'TRN323',
      `${what} The trainer would run out of the heap on its first step, after the work before it (the explorer's step) is done.${todo}`,
      at,
      {
        fixes,
      },
    );
  else ctx.report('TRN324', `${what} ${nearLimit('the trainer', heap.high, WASM_HEAP_BYTES)}${todo}`, at, { fixes });
}

/** Experiences per trainer step (DPO: two rows per pair). */
function trainBatchRows(ctx: CheckContext): number | undefined {
  const n = Number(ctx.get('buffer.train_batch_size'));
  if (!(n > 0)) return undefined;
  return ctx.get('algorithm.algorithm_type') === 'dpo' ? 2 * n : n;
}
