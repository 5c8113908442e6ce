/** `trinity-workbench doctor`: what this machine offers the local runtime (host, tfjs backends, the one picked). */
import { BACKEND_ENV, machineReport, type EngineMemory, type MachineReport } from '../engine/backend';
import { parseArgs } from './args';

const HELP = `Usage: trinity-workbench doctor [--json]

Reports what the local fine-tuning runtime can run on: Node, platform, CPU, memory, and for each TensorFlow.js
backend (tensorflow-gpu, tensorflow, webgpu, wasm, cpu) whether it is available here and why not; then starts the
backend the runtime would pick (auto, or $${BACKEND_ENV}) and measures its float32 matmul GFLOP/s. Where a WebGPU
adapter starts, auto measures it and wasm and picks webgpu only when it is a hardware adapter whose matmul beats
wasm's; both rates and the reason are printed.

  --json   print one JSON object instead of text

Exit status: 0 (also when no backend is usable: the report says why), 2 on bad usage.`;

export async function runDoctor(argv: string[]): Promise<number> {
  let args;
  try {
    args = parseArgs(argv, { values: [], switches: ['--json', '--help', '-h'] });
  } catch (e) {
    process.stderr.write(`trinity-workbench doctor: ${(e as Error).message}\n${HELP}\n`);
    return 2;
  }
  if (args.switches.has('--help') || args.switches.has('-h')) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  if (args.positionals.length > 0) {
    process.stderr.write(`trinity-workbench doctor: unexpected argument \`${args.positionals[0]}\`\n${HELP}\n`);
    return 2;
  }
  const report = await machineReport();
  process.stdout.write(args.switches.has('--json') ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report));
  return 0;
}

function gib(bytes: number): string {
  return `${(bytes / 2 ** 30).toFixed(1)} GiB`;
}

function mib(bytes: number): string {
  return bytes >= 2 ** 30 ? gib(bytes) : `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}

/** One line: what the picked backend holds (GPU buffers on webgpu, the heap on wasm) and the process's RSS. */
function formatMemory(m: EngineMemory): string {
  const parts = [`${mib(m.allocatedBytes)} in tensors (peak ${mib(m.peakAllocatedBytes)})`];
  if (m.gpu) parts.push(`GPU buffers ${mib(m.gpu.bytesInUse)} in use of ${mib(m.gpu.bytesAllocated)} created`);
  else if (m.reservedBytes !== undefined) parts.push(`${mib(m.reservedBytes)} ${m.backend} heap`);
  parts.push(`process RSS ${mib(m.rssBytes)} (peak ${mib(m.maxRssBytes)})`);
  return `Engine memory (${m.backend}): ${parts.join(', ')}`;
}

function formatGflops(g: number): string {
  return g >= 10 ? g.toFixed(1) : g.toPrecision(2);
}

export function formatReport(r: MachineReport): string {
  const lines: string[] = [];
  lines.push(`Node      ${r.node}${r.napi ? ` (N-API ${r.napi})` : ''}`);
  lines.push(`Platform  ${r.platform} ${r.arch}`);
  lines.push(
    `CPU       ${r.cpu.model}, ${r.cpu.cores} core${r.cpu.cores === 1 ? '' : 's'}${r.cpu.features.length ? ` (${r.cpu.features.join(', ')})` : ''}`,
  );
  lines.push(`Memory    ${gib(r.memory.totalBytes)} total, ${gib(r.memory.freeBytes)} free`);
  lines.push('');
  lines.push('Backends (in the order auto tries them)');
  const width = Math.max(...r.backends.map((b) => b.name.length));
  for (const b of r.backends) {
    lines.push(
      `  ${b.name.padEnd(width)}  ${b.available ? 'available' : `not available: ${b.reason ?? 'unknown reason'}`}`,
    );
    for (const d of b.details) lines.push(`  ${' '.repeat(width)}    ${d}`);
  }
  lines.push('');
  const s = r.selection;
  const label = s.preference === 'auto' ? 'auto picks' : `$${BACKEND_ENV}=${s.preference}`;
  if (s.ok) {
    const threads = s.threads !== undefined ? `, ${s.threads} thread${s.threads === 1 ? '' : 's'}` : '';
    const acc = s.accelerators?.length ? `, accelerated by ${s.accelerators.join(', ')}` : '';
    lines.push(
      `${label}: ${s.name} (tfjs backend \`${s.tfBackend}\`${threads}${acc}), ${formatGflops(s.gflops)} GFLOP/s on a 256³ float32 matmul`,
    );
    if (s.comparison) {
      const c = s.comparison;
      const wasm = c.wasmGflops === undefined ? 'did not start' : `${formatGflops(c.wasmGflops)} GFLOP/s`;
      lines.push(`  webgpu    ${formatGflops(c.webgpuGflops)} GFLOP/s${c.adapter ? ` (${c.adapter})` : ''}`);
      lines.push(`  wasm      ${wasm}`);
      lines.push(`  why       ${c.reason}`);
    } else if (s.preference === 'auto') {
      const skipped = s.tried.filter((t) => !t.ok).map((t) => t.name);
      lines.push(
        `  why       the first in auto's order that starts${skipped.length ? ` (${skipped.join(', ')} did not)` : ''}; no WebGPU adapter started to weigh against wasm`,
      );
    }
  } else {
    lines.push(`${label}: ${s.error}`);
  }
  if (r.engineMemory) lines.push(formatMemory(r.engineMemory));
  return `${lines.join('\n')}\n`;
}
