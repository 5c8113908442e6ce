/**
 * A vLLM rollout engine's memory budget on one of its GPUs (pure arithmetic), from the facts of vLLM's KV cache
 * sizing (vllm/v1/core/kv_cache_utils.py `_check_enough_kv_cache_memory`, `get_num_blocks`, vllm-project/vllm
 * 001cabc; vllm/v1/kv_cache_interface.py `FullAttentionSpec.page_size_bytes`):
 *
 * - vLLM may use `gpu_memory_utilization` × the GPU's total memory; what its weights, the peak activation of its
 *   profiling run and non-torch allocations leave is the KV cache ("available KV cache memory").
 * - One token of KV cache takes 2 (K and V) × layers × KV heads on this GPU × head dim × dtype bytes; the cache is
 *   allocated in blocks of 16 tokens. The KV heads are split over the tensor-parallel ranks (at least one each).
 * - It refuses to start when nothing is left ("No available memory for the cache blocks") or when one request of
 *   `max_model_len` tokens does not fit ("To serve at least one request with the models's max seq len ...").
 *
 * Only the weights are subtracted here, so the KV budget is an upper bound: a refusal computed from it is certain,
 * and the number of sequences that fit is at most this.
 */
import { causalLmParams, type ModelShape } from './model-shape';

/** vLLM's default KV cache block size (tokens). */
export const VLLM_BLOCK_SIZE = 16;

export interface EngineInput {
  shape: ModelShape;
  /** `dtype` of the engine (`bfloat16`, `float16`, `float32`, `auto`). */
  dtype: string;
  tensorParallelSize: number;
  gpuMemoryUtilization: number;
  maxModelLen: number;
  capacity: number;
  /** Tasks the explorer runs on this engine at once (its runners, at most its share of a batch); 0 when unknown. */
  concurrentTasks: number;
  /** Rollouts each task asks for (`repeat_times`). */
  rolloutsPerTask: number;
}

export interface EngineEstimate {
  dtypeBytes: number;
  /** gpu_memory_utilization × capacity. */
  budget: number;
  /** Weights on one GPU. */
  weights: number;
  /** At most this much is left for the KV cache. */
  kvCacheAtMost: number;
  kvBytesPerToken: number;
  /** KV cache one `max_model_len` sequence needs (whole blocks). */
  perSequence: number;
  /** At most this many `max_model_len` sequences fit at once. */
  sequencesAtMost: number;
  /** Why vLLM would refuse to start, when it certainly would. */
  refusal?: 'no-cache-memory' | 'sequence-too-long';
  concurrentTasks: number;
  /** Full-length sequences the explorer may ask for at once (tasks × rollouts per task). */
  concurrentSequences: number;
}

function dtypeBytes(dtype: string, shape: ModelShape): number {
  const d = dtype === 'auto' ? (shape.torchDtype ?? 'bfloat16') : dtype;
  return /32/.test(d) ? 4 : 2;
}

export function engineEstimate(e: EngineInput): EngineEstimate {
  const bytes = dtypeBytes(e.dtype, e.shape);
  const tp = Math.max(1, e.tensorParallelSize);
  const budget = e.gpuMemoryUtilization * e.capacity;
  const weights = (causalLmParams(e.shape) * bytes) / tp;
  const kvHeads = Math.max(1, Math.floor(e.shape.numKvHeads / tp));
  const kvBytesPerToken = 2 * e.shape.numLayers * kvHeads * e.shape.headDim * bytes;
  const perSequence = Math.ceil(e.maxModelLen / VLLM_BLOCK_SIZE) * VLLM_BLOCK_SIZE * kvBytesPerToken;
  const kvCacheAtMost = budget - weights;
  const sequencesAtMost = kvCacheAtMost > 0 ? Math.floor(kvCacheAtMost / perSequence) : 0;
  const refusal =
    kvCacheAtMost <= 0 ? 'no-cache-memory' : perSequence > kvCacheAtMost ? 'sequence-too-long' : undefined;
  return {
    dtypeBytes: bytes,
    budget,
    weights,
    kvCacheAtMost,
    kvBytesPerToken,
    perSequence,
    sequencesAtMost,
    refusal,
    concurrentTasks: e.concurrentTasks,
    concurrentSequences: e.concurrentTasks * e.rolloutsPerTask,
  };
}
