/**
 * TRN325 / TRN326: a local run whose explorer cannot fit (or barely fits) a batched generation in the wasm backend's
 * heap, found before any work: its own copy of the weights and one engine call's KV cache and logits
 * (local-memory/generation-bytes.ts), in the worker thread's heap when the explorer has one, else in the heap the
 * trainer's weights and optimizer state also hold. Only where the host says runs go to the local runtime.
 */
import { configPath, type ConfigPath } from '../config-path';
import type { KeyFix } from '../diagnostics';
import { lineColumn } from '../load/load-config';
import { generationBytes, GENERATION_ESTIMATE_ERROR, weightBytes } from '../local-memory/generation-bytes';
import {
  HEAP_PER_COUNTED_BYTE,
  INITIAL_HEAP_BYTES,
  trainerIdleBytes,
  WASM_HEAP_BYTES,
} from '../local-memory/trainer-pass-bytes';
import type { CheckContext } from './check-context';
import {
  explorerSharesThread,
  heldModels,
  localModelShape,
  longestRow,
  nearLimit,
  usesLora,
  WARN_ABOVE,
} from './local-run-inputs';
import type { ModelShape } from '../gpu-memory/model-shape';

/** Trinity's default `explorer.runner_per_model`. */
const DEFAULT_RUNNERS = 8;

export function checkExplorerHeap(ctx: CheckContext): void {
  const mode = String(ctx.get('mode') ?? 'both');
  // bench and serve generate for eval tasksets and requests, whose batches this does not model.
  if (!ctx.host.localRuns || !['both', 'explore', 'colocate'].includes(mode)) return;
  const shape = localModelShape(ctx);
  const row = longestRow(ctx);
  if (!shape || !row) return;
  const runners = Number(ctx.get('explorer.runner_per_model') ?? DEFAULT_RUNNERS) || 1;
  const tasks = Number(ctx.get('buffer.batch_size') ?? 1) || 1;
  const repeat = Number(ctx.get('algorithm.repeat_times') ?? 1) || 1;
  const evals = evalRepeats(ctx);
  // An agent's episodes are a row each, one per runner; a single-turn task's runs are one call of `repeat` rows. An
  // evaluation runs every eval taskset's tasks together (runner_per_model of them at once), each task with its
  // taskset's own repeat_times: with fewer training tasks than runners it may decode more rows than a training step.
  const rowsAt = (n: number) => ({
    train: { low: Math.min(n, tasks * repeat), high: Math.min(n, tasks) * repeat },
    eval: evals ? { low: Math.min(n, evals.most.repeat), high: n * evals.most.repeat } : { low: 0, high: 0 },
  });
  const { train, eval: ev } = rowsAt(runners);
  const rows = { low: Math.max(train.low, ev.low), high: Math.max(train.high, ev.high) };
  const evalDecides = ev.high > train.high;
  const shared = explorerSharesThread(ctx);
  const trainer = shared ? trainerHeld(ctx, shape) : { low: 0, high: 0 };
  if (!trainer) return;
  const heap = (bound: 'low' | 'high', n: number): number => {
    const gen =
      generationBytes(shape, { rows: n, tokens: row.tokens }) /
      (bound === 'low' ? 1 + GENERATION_ESTIMATE_ERROR.above : 1 - GENERATION_ESTIMATE_ERROR.below);
    // The weights, the KV cache and the logits are large float32 tensors: the heap holds about what tfjs counts.
    return INITIAL_HEAP_BYTES + (weightBytes(shape) + trainer[bound] + gen) * HEAP_PER_COUNTED_BYTE.parameters[bound];
  };
  const low = heap('low', rows.low);
  const high = heap('high', rows.high);
  const budget = WASM_HEAP_BYTES * WARN_ABOVE;
  if (high <= budget) return;

  const line = (p: ConfigPath): string => `line ${lineColumn(ctx.loaded.source, ctx.range(p)[0]).line}`;
  const named = (p: ConfigPath): string => (ctx.written(p) ? `\`${p}\` (${line(p)})` : `\`${p}\``);
  const gib = (b: number): string => (b / 2 ** 30).toFixed(2);
  let fitsRunners = 0;
  const highAt = (n: number): number => Math.max(rowsAt(n).train.high, rowsAt(n).eval.high);
  while (fitsRunners < runners && heap('high', highAt(fitsRunners + 1)) <= budget) fitsRunners++;
  const fixes: KeyFix[] = [];
  const lower: string[] = [];
  if (fitsRunners >= 1 && fitsRunners < runners) {
    lower.push(`set \`explorer.runner_per_model\` to ${fitsRunners}`);
    fixes.push({
      title: `Set runner_per_model to ${fitsRunners}`,
      set: [{ path: ['explorer', 'runner_per_model'], value: fitsRunners }],
    });
  }
  lower.push(`lower ${row.keys.map((k) => `\`${k}\``).join(' / ')}`);
  const where = shared
    ? "the heap the trainer's weights and optimizer state also hold (the explorer shares its thread)"
    : "its worker thread's heap";
  const what =
    `The local explorer decodes up to ${rows.high} row${rows.high === 1 ? '' : 's'} in one engine call ` +
    (evalDecides && evals
      ? `(${named('explorer.runner_per_model')} runners of its evaluation, each an eval task × ${named(evals.most.path)} ${evals.most.repeat} runs) `
      : `(${named('explorer.runner_per_model')} runners, ${named('buffer.batch_size')} tasks × ${named('algorithm.repeat_times')} runs) `) +
    `of up to ${row.tokens} tokens (${row.keys.map(named).join(', ')}) on the shape of \`${shape.source}\`: its KV cache ` +
    `of ${gib(generationBytes(shape, { rows: rows.high, tokens: row.tokens }))} GiB and its ${gib(weightBytes(shape))} GiB ` +
    `copy of the weights go in ${where}, which must grow to ${gib(low)}–${gib(high)} GiB; the wasm backend's holds ` +
    `${gib(WASM_HEAP_BYTES)} GiB at most, which no setting raises.`;
  const todo = ` To run it locally, ${lower.join(', or ')}; or run it on Trinity-RFT (\`trinityWorkbench.runWith: trinity\`).`;
  const at: ConfigPath = ctx.written('explorer.runner_per_model')
    ? 'explorer.runner_per_model'
    : ctx.written('model.max_model_len')
      ? 'model.max_model_len'
      : 'model.model_path';
  if (low > WASM_HEAP_BYTES)
    ctx.report('TRN325', `${what} The explorer would run out of the heap in its first generation.${todo}`, at, {
      fixes,
    });
  else ctx.report('TRN326', `${what} ${nearLimit('the explorer', high, WASM_HEAP_BYTES)}${todo}`, at, { fixes });
}

/** The eval tasksets' `repeat_times` (Trinity's default 1: only the training taskset takes algorithm.repeat_times). */
function evalRepeats(ctx: CheckContext): { most: { path: ConfigPath; repeat: number } } | undefined {
  const list = ctx.get('buffer.explorer_input.eval_tasksets');
  if (!Array.isArray(list) || list.length === 0) return undefined;
  let most: { path: ConfigPath; repeat: number } | undefined;
  list.forEach((_, i) => {
    const path = configPath(`buffer.explorer_input.eval_tasksets.${i}.repeat_times`);
    const repeat = Number(ctx.get(path) ?? 1) || 1;
    if (!most || repeat > most.repeat) most = { path, repeat };
  });
  return most && { most };
}

/** What the trainer keeps in the heap it shares with the explorer: the reference model counts in the most only. */
function trainerHeld(ctx: CheckContext, shape: ModelShape): { low: number; high: number } | undefined {
  const held = heldModels(ctx, shape);
  if (!held) return undefined;
  const frozenBase = usesLora(ctx);
  return {
    low: trainerIdleBytes(shape, { ...held, frozenBase, reference: false }),
    high: trainerIdleBytes(shape, { ...held, frozenBase }),
  };
}
