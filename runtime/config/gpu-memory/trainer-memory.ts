/**
 * Trinity's estimate of one FSDP trainer module's peak GPU memory (pure arithmetic).
 *
 * Every formula is Trinity's `GPUMemoryValidator` (trinity/common/config_validator.py, added in e04c865 and the same
 * at v0.5.0 fdfdc7b, v0.5.2 eedef4b and main 10796ed/1c35a79): `_calc_params_memory_and_dtype_coeff`,
 * `_calc_fsdp_activation_memory` and `_check_max_memory_in_fsdp_training`. Trinity says its coefficients were
 * "roughly estimated using torch.profile"; these are Trinity's numbers, not a measurement.
 */
import type { ModelShape } from './model-shape';

/** How the actor's logits are computed: veRL's fused kernels, or plain logits with or without the entropy term. */
export type LogitsKind = 'fusion' | 'normal-with-entropy' | 'normal-without-entropy' | 'none';

/** A module's FSDP settings as the trainer sees them after Trinity's synchronize_config. */
export interface FsdpModule {
  /** `trainer.trainer_strategy`: `fsdp` or `fsdp2`. */
  strategy: string;
  /** Resolved: a value <= 0 or >= the trainer's GPUs is the trainer's GPU count. */
  fsdpSize: number;
  reshardAfterForward: boolean;
  optimizerOffload: boolean;
  offloadPolicy: boolean;
  /** `mixed_precision.dtype`, else `fsdp_config.dtype`. */
  dtype: string;
}

/** One additive term of an estimate, in bytes, with what it is. */
export interface Term {
  label: string;
  bytes: number;
}

export interface ParamsMemory {
  /** While the module runs its forward/backward. */
  running: number;
  /** What it keeps while the other module runs. */
  idle: number;
  /** Extra during `optimizer.step()`. */
  optimStep: number;
  /** 1 for a 16-bit dtype, 2 otherwise. */
  dtypeCoeff: number;
  /** `running`, term by term. */
  terms: Term[];
}

/** `_calc_params_memory_and_dtype_coeff`. */
export function paramsMemory(params: number, m: FsdpModule): ParamsMemory {
  const c = m.dtype.includes('16') ? 1 : 2;
  const f = m.fsdpSize;
  if (m.strategy === 'fsdp2' && m.offloadPolicy)
    return {
      running: 0,
      idle: 0,
      optimStep: 0,
      dtypeCoeff: c,
      terms: [{ label: 'FSDP2 offload policy: parameters, gradients and optimizer on the CPU', bytes: 0 }],
    };
  const terms: Term[] = [];
  const weights = (2 * c * params) / (m.reshardAfterForward ? f : 1);
  terms.push({
    label: `weights: 2 × ${c} B × ${(params / 1e9).toFixed(3)}B params${m.reshardAfterForward ? ` / fsdp_size ${f}` : ' (not resharded after forward)'}`,
    bytes: weights,
  });
  terms.push({ label: `optimizer states: 12 B/param / fsdp_size ${f}`, bytes: (12 * params) / f });
  terms.push({ label: `gradients: 2 × ${c} B/param / fsdp_size ${f}`, bytes: (2 * c * params) / f });
  if (m.strategy === 'fsdp' && f === 1)
    terms.push({ label: 'FSDP1 with fsdp_size 1: an unsharded copy (observed by Trinity)', bytes: 2 * c * params });
  let idle = 0;
  if (m.strategy === 'fsdp') {
    if (!m.optimizerOffload) idle = (12 * params) / f;
    else if (f === 1)
      terms.push({ label: 'FSDP1 optimizer offload with fsdp_size 1: another copy', bytes: 2 * c * params });
  } else if (!m.offloadPolicy) {
    idle = (12 * params) / f;
  }
  return {
    running: terms.reduce((s, t) => s + t.bytes, 0),
    idle,
    optimStep: (4 * c * params) / f,
    dtypeCoeff: c,
    terms,
  };
}

export interface ActivationMemory {
  hiddenStates: number;
  logits: number;
  backward: number;
  /** (hidden states + max(logits, backward)) × dtype coefficient. */
  total: number;
}

/** `_calc_fsdp_activation_memory` (with gradient checkpointing, the only case Trinity estimates). */
export function activationMemory(
  s: ModelShape,
  numTokens: number,
  logits: LogitsKind,
  dtypeCoeff: number,
): ActivationMemory {
  const hiddenStates = 2 * numTokens * s.hiddenSize * (s.numLayers + 4);
  const logitsBytes =
    logits === 'fusion'
      ? s.vocabSize * 20480
      : logits === 'none'
        ? 0
        : (logits === 'normal-with-entropy' ? 8 : 10) * numTokens * s.vocabSize;
  const backward = 4 * s.vocabSize * s.hiddenSize + 80 * numTokens * s.hiddenSize;
  return {
    hiddenStates: hiddenStates * dtypeCoeff,
    logits: logitsBytes * dtypeCoeff,
    backward: backward * dtypeCoeff,
    total: (hiddenStates + Math.max(logitsBytes, backward)) * dtypeCoeff,
  };
}

export interface ModuleEstimate {
  module: 'actor' | 'critic';
  /** Its own running memory plus what the other module keeps idle. */
  paramsMemory: number;
  /** The other module's idle memory included in `paramsMemory`. */
  otherIdle: number;
  activation: ActivationMemory;
  optimStep: number;
  /** params + max(activation, optimizer step): what Trinity compares with the limit. */
  peak: number;
  numTokens: number;
  gradientCheckpointing: boolean;
  fsdp: FsdpModule;
  params: number;
  terms: Term[];
}

export function moduleEstimate(input: {
  module: 'actor' | 'critic';
  shape: ModelShape;
  params: number;
  fsdp: FsdpModule;
  numTokens: number;
  logits: LogitsKind;
  gradientCheckpointing: boolean;
  otherIdle: number;
}): ModuleEstimate {
  const p = paramsMemory(input.params, input.fsdp);
  const activation = activationMemory(input.shape, input.numTokens, input.logits, p.dtypeCoeff);
  const paramsTotal = p.running + input.otherIdle;
  return {
    module: input.module,
    paramsMemory: paramsTotal,
    otherIdle: input.otherIdle,
    activation,
    optimStep: p.optimStep,
    peak: paramsTotal + Math.max(activation.total, p.optimStep),
    numTokens: input.numTokens,
    gradientCheckpointing: input.gradientCheckpointing,
    fsdp: input.fsdp,
    params: input.params,
    terms: p.terms,
  };
}

/** The limit Trinity compares with: 80 % of the GPU, 90 % with `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`. */
export function memoryLimit(
  capacity: number,
  env: Record<string, string | undefined> | undefined,
): {
  fraction: number;
  bytes: number;
  expandableSegments: boolean;
} {
  const expandableSegments = env?.PYTORCH_CUDA_ALLOC_CONF === 'expandable_segments:True';
  const fraction = expandableSegments ? 0.9 : 0.8;
  return { fraction, bytes: fraction * capacity, expandableSegments };
}

/** What Trinity suggests for a module over the limit (or without gradient checkpointing), in Trinity's words. */
export interface TrinitySuggestions {
  lines: string[];
  /** Which of Trinity's fixes apply, for quick fixes. */
  fixes: (
    | 'expandable-segments'
    | 'fsdp2-offload'
    | 'offload-policy'
    | 'fsdp-size'
    | 'token-budget'
    | 'sequence-parallel'
    | 'gradient-checkpointing'
  )[];
}

/** The lines `_check_max_memory_in_fsdp_training` appends for one module (empty when it is within the limit). */
export function trinitySuggestions(
  e: ModuleEstimate,
  modelName: string,
  limit: { bytes: number; fraction: number; expandableSegments: boolean },
  worldSize: number,
): TrinitySuggestions {
  const mod = e.module;
  if (!e.gradientCheckpointing)
    return {
      lines: [
        `Gradient checkpointing in ${mod} is DISABLED.`,
        'Memory usage will be MUCH higher than enabling gradient checkpointing.',
        'Consider enabling it or verifying GPU capacity manually.',
      ],
      fixes: ['gradient-checkpointing'],
    };
  if (e.peak <= limit.bytes) return { lines: [], fixes: [] };
  const mb = (b: number) => (b / 1024 ** 2).toFixed(1);
  const lines = [
    `${mod[0].toUpperCase()}${mod.slice(1)} model '${modelName}' may exceed GPU memory!`,
    `Estimated: ${mb(e.peak)} MB > Limit: ${mb(limit.bytes)} MB`,
    '',
    'Suggested fixes:',
  ];
  const fixes: TrinitySuggestions['fixes'] = [];
  if (!limit.expandableSegments) {
    lines.push(
      '• Set environment variable `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`',
      '  before launching your training job to reduce memory fragmentation.',
    );
    fixes.push('expandable-segments');
  }
  if (e.fsdp.strategy === 'fsdp') {
    lines.push(
      `• Set \`fsdp_config.offload_policy=true\` in ${mod} config and`,
      '  set `trainer.trainer_strategy=fsdp2` to reduce memory usage.',
    );
    fixes.push('fsdp2-offload');
  }
  if (e.fsdp.strategy === 'fsdp2' && !e.fsdp.offloadPolicy) {
    lines.push(`• Set \`fsdp_config.offload_policy=true\` in ${mod} config`, '  to reduce parameters memory usage.');
    fixes.push('offload-policy');
  }
  if (e.fsdp.fsdpSize !== worldSize) {
    lines.push(
      `• Set \`fsdp_config.fsdp_size\` in ${mod} config to match the number of trainer GPUs`,
      `  (currently set to ${e.fsdp.fsdpSize}).`,
    );
    fixes.push('fsdp-size');
  }
  lines.push(
    '• Consider reducing `trainer.max_token_len_per_gpu` to lower activation memory.',
    '• Increase `ulysses_sequence_parallel_size` to split sequence across more GPUs.',
  );
  fixes.push('token-budget', 'sequence-parallel');
  return { lines, fixes };
}

/**
 * The largest per-GPU token budget at which the module's peak stays within `limit` (activation memory grows
 * linearly with the tokens past the point where logits or the backward buffers dominate), or 0 when none does.
 */
export function largestFittingTokens(e: ModuleEstimate, shape: ModelShape, logits: LogitsKind, limit: number): number {
  const fits = (t: number) =>
    e.paramsMemory +
      Math.max(activationMemory(shape, t, logits, e.fsdp.dtype.includes('16') ? 1 : 2).total, e.optimStep) <=
    limit;
  if (!fits(1)) return 0;
  let lo = 1;
  let hi = Math.max(2, e.numTokens);
  while (fits(hi)) hi *= 2;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid;
  }
  return lo;
}
