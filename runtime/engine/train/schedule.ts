/**
 * Learning-rate schedules as veRL builds them from `optim`: linear warmup, then constant or cosine decay to
 * `min_lr_ratio · lr` over the remaining steps.
 */
export interface LrSchedule {
  lr: number;
  style: 'constant' | 'cosine';
  warmupSteps: number;
  totalSteps: number;
  /** Cosine only: the floor as a fraction of lr. */
  minLrRatio?: number;
  /** Cosine only: 0.5 is a half cosine (lr to the floor once). */
  numCycles?: number;
}

/** The learning rate for optimizer step `step` (0-based). */
export function learningRate(s: LrSchedule, step: number): number {
  if (step < s.warmupSteps) return (s.lr * step) / Math.max(1, s.warmupSteps);
  if (s.style === 'constant') return s.lr;
  const progress = (step - s.warmupSteps) / Math.max(1, s.totalSteps - s.warmupSteps);
  const floor = s.minLrRatio ?? 0;
  const cycles = s.numCycles ?? 0.5;
  const cosine = 0.5 * (1 + Math.cos(Math.PI * cycles * 2 * progress));
  return s.lr * Math.max(0, (1 - floor) * cosine + floor);
}

/** veRL's warmup length: `lr_warmup_steps` when positive, else `lr_warmup_steps_ratio · total`. */
export function warmupSteps(totalSteps: number, steps: number | undefined, ratio: number | undefined): number {
  if (steps !== undefined && steps > 0) return steps;
  return Math.floor((ratio ?? 0) * totalSteps);
}
