/**
 * Which GPU the estimates are for (`trinityWorkbench.gpu`, `check --gpu`): a named card or a number of GiB.
 *
 * Trinity compares against `torch.cuda.get_device_properties(0).total_memory`, which is a little below the card's
 * nominal size (the driver keeps some). A named card's GiB are what PyTorch reports for it in its own
 * out-of-memory message ("GPU 0 has a total capacity of N GiB"), as quoted in public issues; they vary by about
 * 0.2 GiB with the driver and ECC setting.
 */

export interface GpuSpec {
  /** The card's name, or `<N> GiB` for a number. */
  name: string;
  /** Total memory as CUDA reports it, in bytes. */
  bytes: number;
}

export const GIB = 1024 ** 3;

interface Card {
  gib: number;
  /** Where the reported capacity was seen. */
  source: string;
}

export const GPU_CARDS: Record<string, Card> = {
  'H100-80G': { gib: 79.11, source: 'H100 80GB HBM3: "total capacity of 79.11 GiB" (PyTorch OOM messages)' },
  'H200-141G': { gib: 139.8, source: 'H200: "total capacity of 139.80 GiB" (PyTorch OOM messages)' },
  'H20-96G': { gib: 94.97, source: 'H20 96GB: "total capacity of 94.97 GiB" (PyTorch OOM messages on 96 GB cards)' },
  'A100-80G': { gib: 79.15, source: 'A100 80GB: "total capacity of 79.15 GiB" (PyTorch OOM messages)' },
  'A100-40G': { gib: 39.39, source: 'A100 40GB: "total capacity of 39.39 GiB" (PyTorch OOM messages)' },
  'L40S-48G': { gib: 44.39, source: 'L40S: "total capacity of 44.39 GiB" (PyTorch OOM messages)' },
  '4090-24G': {
    gib: 23.68,
    source: 'RTX 4090: "23.68 GiB total capacity" (PyTorch OOM message, zai-org/CogVideo#36)',
  },
};

export const DEFAULT_GPU = 'H100-80G';

/**
 * A setting's value -> the GPU, or why it is not one. Names match case-insensitively and without the memory
 * suffix when that is unambiguous (`h200`, `a100-80g`); a positive number (or `"80"`, `"80GiB"`) is that many GiB.
 */
export function parseGpu(value: unknown): GpuSpec | { problem: string } {
  if (value === undefined || value === null || value === '') return cardSpec(DEFAULT_GPU);
  const text = String(value).trim();
  const gib = /^(\d+(?:\.\d+)?)\s*(?:gib|gb|g)?$/i.exec(text);
  if (gib) {
    const n = Number(gib[1]);
    if (n > 0 && n < 10_000) return { name: `${n} GiB`, bytes: n * GIB };
  }
  const want = text.toUpperCase().replace(/^(NVIDIA\s+|RTX\s*)/, '');
  const exact = Object.keys(GPU_CARDS).find((k) => k.toUpperCase() === want);
  const byPrefix = Object.keys(GPU_CARDS).filter((k) => k.toUpperCase().split('-')[0] === want);
  const name = exact ?? (byPrefix.length === 1 ? byPrefix[0] : undefined);
  if (name) return cardSpec(name);
  return {
    problem: `unknown GPU \`${text}\`: use one of ${Object.keys(GPU_CARDS).join(', ')}, or its memory in GiB (e.g. 80)`,
  };
}

function cardSpec(name: string): GpuSpec {
  return { name, bytes: GPU_CARDS[name].gib * GIB };
}
