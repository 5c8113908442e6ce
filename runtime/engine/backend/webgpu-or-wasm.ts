/**
 * `auto`'s choice between a WebGPU adapter and wasm, from their measured matmul throughput: webgpu only when its
 * adapter is hardware and its matmul beats wasm's. A pure function of the measurements, so it is tested with given
 * rates; init.ts measures them.
 */

export interface WebgpuVsWasm {
  /** webgpu's measured float32 matmul GFLOP/s. */
  webgpu: number;
  /** wasm's, or undefined when wasm did not start. */
  wasm?: number;
  /** Why the adapter is a software one (see softwareAdapterReason); absent for hardware. */
  software?: string;
}

export interface WebgpuOrWasm {
  pick: 'webgpu' | 'wasm';
  /** One sentence with both rates: why this pick. */
  reason: string;
}

function rate(g: number): string {
  return `${g >= 10 ? g.toFixed(1) : g.toPrecision(2)} GFLOP/s`;
}

export function pickWebgpuOrWasm(m: WebgpuVsWasm): WebgpuOrWasm {
  const both = `webgpu ${rate(m.webgpu)}, wasm ${m.wasm === undefined ? 'did not start' : rate(m.wasm)}`;
  if (m.software) return { pick: 'wasm', reason: `auto skips it: ${m.software} (${both})` };
  if (!(m.webgpu > 0) || !Number.isFinite(m.webgpu))
    return { pick: 'wasm', reason: `webgpu's matmul measured no throughput (${both})` };
  if (m.wasm === undefined) return { pick: 'webgpu', reason: `wasm did not start (${both})` };
  return m.webgpu > m.wasm
    ? { pick: 'webgpu', reason: `webgpu's matmul beats wasm's: ${both} (${(m.webgpu / m.wasm).toFixed(1)}×)` }
    : { pick: 'wasm', reason: `webgpu's matmul does not beat wasm's: ${both}` };
}
