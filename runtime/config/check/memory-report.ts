/** The GPU memory report of one checked run, shared by the trainer's (rules/gpu-memory.ts) and the engines' checks. */
import type { GpuMemoryReport } from '../gpu-memory/report';
import type { CheckContext } from './check-context';
import { gpuFor } from './model-shape-source';

/** The report of this run, created on first use by either memory check. */
export function memoryReport(ctx: CheckContext): GpuMemoryReport {
  return (ctx.gpuMemory ??= {
    gpu: gpuFor(ctx),
    trainer: { status: 'skipped', reason: 'the launch checks stopped before the memory check' },
    engines: [],
  });
}
