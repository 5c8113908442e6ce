/**
 * What vLLM finds when a rollout engine starts (gpu-memory/vllm-memory.ts): that its weights leave no room for a
 * KV cache, or not enough for one `max_model_len` sequence (it refuses to start: an error), or that the cache holds
 * fewer full-length sequences than the explorer sends it at once (a warning: requests queue and get preempted).
 */
import { rolesOf } from '../model/choices';
import type { ConfigPath } from '../config-path';
import type { KeyFix } from '../diagnostics';
import { gib, type EngineMemory, type Skipped } from '../gpu-memory/report';
import { engineEstimate } from '../gpu-memory/vllm-memory';
import type { GpuSpec } from '../gpu-memory/gpu-cards';
import type { CheckContext } from './check-context';
import { modelShapeFor } from './model-shape-source';
import { memoryReport } from './memory-report';

export function checkEngineMemory(ctx: CheckContext): void {
  const mode = String(ctx.get('mode') ?? 'both');
  const report = memoryReport(ctx);
  if (!rolesOf(mode).explorer) return;
  const aux = (ctx.get('explorer.auxiliary_models') as unknown[] | undefined) ?? [];
  const bases = ['explorer.rollout_model', ...aux.map((_, i) => `explorer.auxiliary_models.${i}`)] as ConfigPath[];
  for (const base of bases) {
    const engine = base.replace(/^explorer\./, '').replace(/\.(\d+)$/, '[$1]');
    const memory = estimateEngine(ctx, base, engine, report.gpu, mode);
    report.engines.push(memory.status === 'skipped' ? { ...memory, engine } : memory);
    if (memory.status === 'estimated') reportEngine(ctx, base, memory, report.gpu);
  }
}

function estimateEngine(
  ctx: CheckContext,
  base: ConfigPath,
  engine: string,
  gpu: GpuSpec,
  mode: string,
): EngineMemory | Skipped {
  const get = (key: string) => ctx.get(`${base}.${key}` as ConfigPath) as unknown;
  const type = String(get('engine_type') ?? 'vllm');
  if (!type.startsWith('vllm')) return { status: 'skipped', reason: `engine_type \`${type}\` is not vLLM` };
  const rollout = engine === 'rollout_model';
  const modelPath = get('model_path') || (rollout ? ctx.get('model.model_path') : undefined);
  const shape = modelShapeFor(ctx, modelPath);
  if ('problem' in shape) return { status: 'skipped', reason: shape.problem };
  const maxModelLen = Number(get('max_model_len') ?? (rollout ? ctx.get('model.max_model_len') : undefined));
  if (!(maxModelLen > 0)) return { status: 'skipped', reason: '`max_model_len` is unknown' };
  const engineNum = Number(get('engine_num') ?? 1) || 1;
  const tp = Number(get('tensor_parallel_size') ?? 1) || 1;
  const util = Number(get('gpu_memory_utilization') ?? 0.9);
  const estimate = engineEstimate({
    shape: shape.shape,
    dtype: String(get('dtype') ?? 'bfloat16'),
    tensorParallelSize: tp,
    gpuMemoryUtilization: util,
    maxModelLen,
    capacity: gpu.bytes,
    concurrentTasks: rollout && (mode === 'both' || mode === 'explore') ? tasksInFlight(ctx, engineNum) : 0,
    rolloutsPerTask: Number(ctx.get('algorithm.repeat_times') ?? 1) || 1,
  });
  return {
    status: 'estimated',
    engine,
    engineNum,
    tensorParallelSize: tp,
    gpuMemoryUtilization: util,
    maxModelLen,
    estimate,
    shape: shape.shape,
  };
}

/** Tasks one engine runs at once: its workflow runners, at most its share of a batch. */
function tasksInFlight(ctx: CheckContext, engineNum: number): number {
  const runners = Number(ctx.get('explorer.runner_per_model') ?? 8) || 1;
  const batch = Number(ctx.get('buffer.batch_size') ?? 1) || 1;
  return Math.min(runners, Math.ceil(batch / engineNum));
}

function reportEngine(ctx: CheckContext, base: ConfigPath, e: EngineMemory, gpu: GpuSpec): void {
  const x = e.estimate;
  const written = (key: string) => ctx.written(`${base}.${key}` as ConfigPath);
  const at: ConfigPath = written('gpu_memory_utilization')
    ? (`${base}.gpu_memory_utilization` as ConfigPath)
    : ctx.written(base)
      ? base
      : ctx.written('explorer')
        ? 'explorer'
        : 'model.model_path';
  const where = `explorer.${e.engine}`;
  const budget = `gpu_memory_utilization ${e.gpuMemoryUtilization} × ${gib(gpu.bytes)} GiB (${gpu.name}) = ${gib(x.budget)} GiB`;
  if (x.refusal) {
    const fixes: KeyFix[] = [];
    const util = Math.ceil(((x.weights + x.perSequence) / gpu.bytes) * 100) / 100 + 0.02;
    if (util <= 0.95 && util > e.gpuMemoryUtilization)
      fixes.push({
        title: `Raise gpu_memory_utilization to ${util.toFixed(2)}`,
        set: [{ path: [...base.split('.'), 'gpu_memory_utilization'].map(key), value: Number(util.toFixed(2)) }],
      });
    if (e.shape.numHeads % (2 * e.tensorParallelSize) === 0)
      fixes.push({
        title: `Split the model over ${2 * e.tensorParallelSize} GPUs (tensor_parallel_size)`,
        set: [{ path: [...base.split('.'), 'tensor_parallel_size'].map(key), value: 2 * e.tensorParallelSize }],
      });
    const message =
      x.refusal === 'no-cache-memory'
        ? `vLLM would refuse to start ${where}: its weights take ${gib(x.weights)} GiB per GPU, more than ${budget}, so nothing is left for the KV cache ("No available memory for the cache blocks"). Raise gpu_memory_utilization or tensor_parallel_size, or use a larger GPU.`
        : `vLLM would refuse to start ${where}: one sequence of max_model_len (${e.maxModelLen} tokens) needs ${gib(x.perSequence)} GiB of KV cache, more than the at most ${gib(x.kvCacheAtMost)} GiB its weights (${gib(x.weights)} GiB per GPU) leave of ${budget} ("To serve at least one request with the model's max seq len ..."). Lower max_model_len to at most ${Math.floor(x.kvCacheAtMost / x.kvBytesPerToken / 16) * 16} tokens, or raise gpu_memory_utilization or tensor_parallel_size.`;
    ctx.report('TRN314', message, at, { fixes });
    return;
  }
  // Collapse: fewer full-length sequences than tasks in flight, each of which asks for repeat_times of them.
  if (x.sequencesAtMost < x.concurrentTasks) {
    ctx.report(
      'TRN315',
      `${where}'s KV cache holds at most ${x.sequencesAtMost} sequences of max_model_len (${e.maxModelLen} tokens) at once (at most ${gib(x.kvCacheAtMost)} GiB per GPU after ${gib(x.weights)} GiB of weights), fewer than the ${x.concurrentTasks} tasks the explorer runs on it at once, each asking for ${x.concurrentSequences / x.concurrentTasks} rollouts: once responses grow long, vLLM queues and preempts requests and a step takes many rounds of generation. Lower max_model_len or runner_per_model, or raise tensor_parallel_size or gpu_memory_utilization.`,
      at,
    );
  }
}

const key = (k: string): string | number => (/^\d+$/.test(k) ? Number(k) : k);
