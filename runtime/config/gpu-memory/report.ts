/**
 * A checked config's GPU memory picture (what the check step computes, per run) and its wording: the one-line
 * summaries the editor shows at `trainer` and `explorer.rollout_model`, the term-by-term breakdown of the hover, and
 * the lines `check` and Show Resolved Config print. Pure.
 */
import { GIB, type GpuSpec } from './gpu-cards';
import type { ModelShape } from './model-shape';
import type { ModuleEstimate } from './trainer-memory';
import type { EngineEstimate } from './vllm-memory';

export type Skipped = { status: 'skipped'; reason: string };

export interface TrainerMemory {
  status: 'estimated';
  modules: ModuleEstimate[];
  /** Trinity's limit: 80 % (90 % with expandable segments) of the GPU. */
  limit: { fraction: number; bytes: number; expandableSegments: boolean };
  worldSize: number;
  /** Where the model's shape came from. */
  shapeSource: string;
  /** False when `ignore_validator_suggestions` turns Trinity's check off: the estimate is shown, nothing reported. */
  checked: boolean;
  /** Trinity's MEMORY OVERUSE WARNING lines, empty when it prints none. */
  suggestions: string[];
}

export interface EngineMemory {
  status: 'estimated';
  /** `rollout_model` or `auxiliary_models[i]`. */
  engine: string;
  engineNum: number;
  tensorParallelSize: number;
  gpuMemoryUtilization: number;
  maxModelLen: number;
  estimate: EngineEstimate;
  shape: ModelShape;
}

export interface GpuMemoryReport {
  gpu: GpuSpec;
  trainer: TrainerMemory | Skipped;
  engines: (EngineMemory | (Skipped & { engine: string }))[];
}

export function gib(bytes: number): string {
  return (bytes / GIB).toFixed(1);
}

function percent(part: number, whole: number): string {
  return `${Math.round((100 * part) / whole)} %`;
}

/** `actor ≈ 61.3 GiB of 79.1 peak, 77 %`. */
export function moduleSummary(m: ModuleEstimate, gpu: GpuSpec): string {
  return `${m.module} ≈ ${gib(m.peak)} GiB of ${gib(gpu.bytes)} peak, ${percent(m.peak, gpu.bytes)}`;
}

/** The hint at `trainer`: every module's summary, or why there is none. */
export function trainerSummary(t: TrainerMemory, gpu: GpuSpec): string {
  return t.modules.map((m) => moduleSummary(m, gpu)).join(' · ');
}

/** The hint at `explorer.rollout_model`: weights, the KV cache left and how many full-length sequences fit. */
export function engineSummary(e: EngineMemory): string {
  const x = e.estimate;
  if (x.refusal === 'no-cache-memory') return `vLLM: weights ${gib(x.weights)} GiB/GPU > budget ${gib(x.budget)} GiB`;
  return `vLLM: weights ${gib(x.weights)} GiB/GPU · KV ≤ ${gib(x.kvCacheAtMost)} GiB · ≤ ${x.sequencesAtMost} × ${e.maxModelLen}-token seqs`;
}

/** The hover's breakdown of one trainer module (markdown lines). */
export function moduleBreakdown(m: ModuleEstimate, t: TrainerMemory, gpu: GpuSpec): string[] {
  const lines = [`**${m.module}** (${m.fsdp.strategy}, fsdp_size ${m.fsdp.fsdpSize}, ${m.numTokens} tokens/GPU):`];
  for (const term of m.terms) lines.push(`- ${term.label}: ${gib(term.bytes)} GiB`);
  if (m.otherIdle > 0)
    lines.push(`- the other module's optimizer states kept while this one runs: ${gib(m.otherIdle)} GiB`);
  const a = m.activation;
  lines.push(
    `- activations (gradient checkpointing): hidden states ${gib(a.hiddenStates)} GiB + max(logits ${gib(a.logits)}, backward buffers ${gib(a.backward)}) = ${gib(a.total)} GiB`,
    `- optimizer step: ${gib(m.optimStep)} GiB`,
    `- **peak** = ${gib(m.paramsMemory)} + max(${gib(a.total)}, ${gib(m.optimStep)}) = **${gib(m.peak)} GiB**, ${percent(m.peak, gpu.bytes)} of ${gpu.name} (${gib(gpu.bytes)} GiB); Trinity's limit ${Math.round(t.limit.fraction * 100)} % = ${gib(t.limit.bytes)} GiB`,
  );
  if (!m.gradientCheckpointing)
    lines.push(
      '- gradient checkpointing is off: Trinity does not estimate this case, and the real peak is much higher',
    );
  return lines;
}

/** The hover's breakdown of one vLLM engine (markdown lines). */
export function engineBreakdown(e: EngineMemory, gpu: GpuSpec): string[] {
  const x = e.estimate;
  return [
    `**${e.engine}** (vLLM, ${e.engineNum} engine${e.engineNum === 1 ? '' : 's'} × tensor parallel ${e.tensorParallelSize}):`,
    `- budget: gpu_memory_utilization ${e.gpuMemoryUtilization} × ${gib(gpu.bytes)} GiB = ${gib(x.budget)} GiB per GPU`,
    `- weights: ${gib(x.weights)} GiB per GPU (${x.dtypeBytes} B/param / tensor parallel ${e.tensorParallelSize})`,
    `- KV cache: at most ${gib(x.kvCacheAtMost)} GiB (the budget less the weights; vLLM also keeps its profiled activation peak)`,
    `- ${x.kvBytesPerToken} B of KV per token; one ${e.maxModelLen}-token sequence needs ${gib(x.perSequence)} GiB`,
    `- **at most ${x.sequencesAtMost} full-length sequences at once**; the explorer sends up to ${x.concurrentSequences}`,
  ];
}

/** Plain-text lines for `check` and Show Resolved Config. */
export function reportLines(r: GpuMemoryReport): string[] {
  const out = [`GPU: ${r.gpu.name} (${gib(r.gpu.bytes)} GiB as CUDA reports it)`];
  const t = r.trainer;
  if (t.status === 'skipped') out.push(`trainer: no estimate (${t.reason})`);
  else {
    for (const m of t.modules)
      out.push(
        `trainer ${moduleSummary(m, r.gpu)} (Trinity's estimate: params ${gib(m.paramsMemory)} + max(activations ${gib(m.activation.total)}, optimizer step ${gib(m.optimStep)}) GiB; limit ${Math.round(t.limit.fraction * 100)} % = ${gib(t.limit.bytes)} GiB${t.checked ? '' : '; Trinity skips its check: ignore_validator_suggestions'})`,
      );
    out.push(`  model shape: ${t.shapeSource}`);
  }
  for (const e of r.engines) {
    if (e.status === 'skipped') out.push(`explorer.${e.engine}: no estimate (${e.reason})`);
    else out.push(`explorer.${e.engine} ${engineSummary(e)}`);
  }
  return out;
}
