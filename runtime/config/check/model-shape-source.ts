/**
 * Where the memory checks get a model's shape: its `config.json` through the host (a local directory, or the
 * Hugging Face cache), else the published shape of a known family and size, else a sentence saying what is missing.
 */
import { shapeFromHfConfig, type ShapeResult } from '../gpu-memory/model-shape';
import { publishedFamilies, publishedShape } from '../gpu-memory/published-shapes';
import { parseGpu, type GpuSpec } from '../gpu-memory/gpu-cards';
import type { CheckContext } from './check-context';

export function modelShapeFor(ctx: CheckContext, modelPath: unknown): ShapeResult {
  if (typeof modelPath !== 'string' || modelPath === '') return { problem: 'no `model_path`' };
  const read = ctx.host.modelConfig?.(modelPath, ctx.host.baseDirs ?? []);
  if (read && 'json' in read) return shapeFromHfConfig(read.json, read.file);
  const published = publishedShape(modelPath);
  if (published) return { shape: published };
  if (read) return { problem: `${read.file}: ${read.problem}` };
  return {
    problem: `the estimate needs the model's config.json: \`${modelPath}\` is not a model directory or a cached Hugging Face model here, and not one of the published shapes it knows (${publishedFamilies()})`,
  };
}

/** The GPU the host asks about, else the default card. */
export function gpuFor(ctx: CheckContext): GpuSpec {
  return ctx.host.gpu ?? (parseGpu(undefined) as GpuSpec);
}
