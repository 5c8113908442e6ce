/**
 * The webgpu backend through Dawn (`webgpu` package, prebuilt dawn.node) — the GPU path that installs from npm
 * alone. It needs a WebGPU adapter: on Linux, Vulkan (libvulkan.so.1 plus the driver's ICD). Node 20 has no
 * `navigator`, so one is defined; Dawn's globals (GPUBufferUsage, …) are copied onto globalThis before
 * @tensorflow/tfjs-backend-webgpu is loaded (it registers itself only when `navigator.gpu` exists). Both happen
 * only once an adapter has been found, so a machine without a GPU keeps a clean global scope.
 */
import * as tf from '@tensorflow/tfjs-core';
import { selfTest } from './measure';
import { firstLine, trySetBackend } from './set-backend';
import { findSharedLib } from './shared-libs';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/** The parts of Dawn's WebGPU objects used here (the full types live in @webgpu/types, not in our build). */
interface GpuAdapterLike {
  info?: { vendor?: string; architecture?: string; device?: string; description?: string; isFallbackAdapter?: boolean };
}
interface GpuLike {
  requestAdapter(options?: { powerPreference?: string }): Promise<GpuAdapterLike | null>;
}
interface WebgpuModule {
  create(options: string[]): GpuLike;
  globals: object;
}

export interface WebgpuProbe {
  /** Whether the `webgpu` package (dawn.node) loads. */
  loads: boolean;
  /** libvulkan.so.1 where Linux would load it from (null: not found; absent: not Linux). */
  libvulkan?: string | null;
  adapter: boolean;
  /** Vendor / architecture / description of the adapter found. */
  adapterInfo?: string;
  /** Why there is no usable adapter. */
  reason?: string;
  /** Why `auto` passes this adapter over (a software rasteriser on the CPU); absent for a hardware adapter. */
  software?: string;
}

/** Adapters that compute on the CPU: SwiftShader, Mesa's llvmpipe/lavapipe, Microsoft's WARP/Basic Render. */
const SOFTWARE_ADAPTER = /swiftshader|llvmpipe|lavapipe|softpipe|warp|basic render/i;

/** Why an adapter is a software (fallback) one, or undefined for hardware. */
export function softwareAdapterReason(info: GpuAdapterLike['info']): string | undefined {
  if (info?.isFallbackAdapter) return 'the adapter is a fallback (software) adapter';
  const text = [info?.vendor, info?.architecture, info?.device, info?.description].filter((s) => s).join(' ');
  const m = SOFTWARE_ADAPTER.exec(text);
  return m ? `the adapter is ${m[0]}, a software renderer on the CPU` : undefined;
}

/** Vulkan ICD manifest directories the loader searches (besides $VK_ICD_FILENAMES / $VK_DRIVER_FILES). */
function icdDirs(): string[] {
  const data = (process.env.XDG_DATA_DIRS || '/usr/local/share:/usr/share').split(':').filter((d) => d);
  const home = process.env.HOME ? [join(process.env.HOME, '.local/share')] : [];
  return ['/etc', ...(process.env.XDG_CONFIG_DIRS || '/etc/xdg').split(':'), ...home, ...data].map((d) =>
    join(d, 'vulkan', 'icd.d'),
  );
}

/** Whether the Vulkan loader has any driver to load (asking Dawn without one only prints loader warnings). */
export function vulkanDriverListed(): boolean {
  for (const v of ['VK_ICD_FILENAMES', 'VK_DRIVER_FILES', 'VK_ADD_DRIVER_FILES'])
    if (process.env[v]?.trim()) return true;
  return icdDirs().some((d) => {
    try {
      return readdirSync(d).some((f) => f.endsWith('.json'));
    } catch {
      return false;
    }
  });
}

const VULKAN_HINT = "Debian/Ubuntu: apt-get install libvulkan1, plus the GPU driver's Vulkan ICD";

/** Where libvulkan.so.1 is (a path, or `ld.so.cache`), or null; undefined off Linux, where Dawn uses Metal / D3D12. */
export function findLibVulkan(): string | null | undefined {
  return process.platform === 'linux' ? findSharedLib('libvulkan.so.1') : undefined;
}

async function loadWebgpuModule(): Promise<WebgpuModule> {
  // An ES module: import(), not require(). The name is a variable so that bundlers leave it to Node.
  const id = 'webgpu';
  const mod = (await import(id)) as Partial<WebgpuModule> & { default?: Partial<WebgpuModule> };
  const create = mod.create ?? mod.default?.create;
  const globals = mod.globals ?? mod.default?.globals;
  if (typeof create !== 'function' || globals == null)
    throw new Error('the webgpu package exports no create()/globals');
  return { create, globals };
}

interface Found {
  probe: WebgpuProbe;
  gpu?: GpuLike;
  globals?: object;
}

async function find(requestWithoutVulkan: boolean): Promise<Found> {
  let mod: WebgpuModule;
  try {
    mod = await loadWebgpuModule();
  } catch (e) {
    return {
      probe: {
        loads: false,
        adapter: false,
        reason: `the webgpu package does not load: ${firstLine((e as Error).message ?? String(e))}`,
      },
    };
  }
  const probe: WebgpuProbe = { loads: true, adapter: false };
  const libvulkan = findLibVulkan();
  if (libvulkan !== undefined) probe.libvulkan = libvulkan;
  if (libvulkan === null && !requestWithoutVulkan) {
    // Asking Dawn anyway would only print "Couldn't load Vulkan" on stderr.
    probe.reason = `no adapter: libvulkan.so.1 is missing (${VULKAN_HINT})`;
    return { probe };
  }
  if (libvulkan && !requestWithoutVulkan && !vulkanDriverListed()) {
    probe.reason =
      "no adapter: libvulkan.so.1 is installed but lists no Vulkan driver (no ICD in /usr/share/vulkan/icd.d or /etc/vulkan/icd.d, no $VK_ICD_FILENAMES): install the GPU driver's Vulkan ICD";
    return { probe };
  }
  let gpu: GpuLike;
  let adapter: GpuAdapterLike | null;
  try {
    gpu = mod.create([]);
    adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
  } catch (e) {
    probe.reason = `requesting an adapter failed: ${firstLine((e as Error).message ?? String(e))}`;
    return { probe };
  }
  if (adapter == null) {
    probe.reason =
      libvulkan === null
        ? `no adapter: libvulkan.so.1 is missing (${VULKAN_HINT})`
        : `no adapter found${libvulkan ? " (Vulkan is installed: is the driver's ICD visible? in containers NVIDIA_DRIVER_CAPABILITIES must include graphics)" : ''}`;
    return { probe };
  }
  probe.adapter = true;
  const info = adapter.info;
  const text = [info?.vendor, info?.architecture, info?.description || info?.device].filter((s) => s).join(' / ');
  if (text) probe.adapterInfo = text;
  const software = softwareAdapterReason(info);
  if (software) probe.software = software;
  return { probe, gpu, globals: mod.globals };
}

/** Whether `webgpu` loads and an adapter is found. Installs no globals and loads no tfjs backend. */
export async function probeWebgpu(): Promise<WebgpuProbe> {
  return (await find(false)).probe;
}

function installGlobals(gpu: GpuLike, globals: object): void {
  Object.assign(globalThis, globals);
  const g = globalThis as { navigator?: object };
  if (g.navigator != null)
    Object.defineProperty(g.navigator, 'gpu', { value: gpu, configurable: true, writable: true });
  else Object.defineProperty(globalThis, 'navigator', { value: { gpu }, configurable: true, writable: true });
}

/** tfjs-backend-webgpu's MatMulPackedProgram (its MatMulProgramType enum; -1, the default, lets it choose). */
const MATMUL_PACKED_PROGRAM = 3;

/**
 * On a software adapter, every matmul runs tfjs' tiled MatMulPackedProgram. tfjs picks its reduce and small-tile
 * programs for small outputs to spread them over more GPU workgroups; on SwiftShader, which runs workgroups on the
 * CPU, those take 100-150 ms per dispatch where the tiled one takes about 1 ms (a one-token decode step is all small
 * matmuls). Only the summation order changes (float32 rounding). A value set by the caller is kept.
 */
function preferTiledMatmul(): void {
  if (tf.env().getNumber('WEBGPU_MATMUL_PROGRAM_TYPE') < 0)
    tf.env().set('WEBGPU_MATMUL_PROGRAM_TYPE', MATMUL_PACKED_PROGRAM);
}

export type WebgpuInit =
  | { ok: true; adapterInfo?: string; /** Why the adapter is a software one; absent for hardware. */ software?: string }
  | { ok: false; reason: string };

/**
 * Finds an adapter, loads tfjs-backend-webgpu, activates it and checks it computes correctly. A software adapter
 * starts only with `acceptSoftware` (a forced `--backend webgpu`, or doctor measuring it); `auto` never runs on one.
 * `forced` asks Dawn even without a Vulkan driver listed, so that its own error is the reason.
 */
export async function initWebgpu(forced: boolean, acceptSoftware = forced): Promise<WebgpuInit> {
  const found = await find(forced);
  if (!found.gpu || !found.globals) return { ok: false, reason: `webgpu: ${found.probe.reason ?? 'no adapter'}` };
  // auto never picks a software adapter (it is slower than wasm); `--backend webgpu` still runs on one (CI does).
  if (!acceptSoftware && found.probe.software)
    return {
      ok: false,
      reason: `webgpu: auto skips it: ${found.probe.software} (${found.probe.adapterInfo ?? 'no adapter info'}); --backend webgpu still uses it`,
    };
  installGlobals(found.gpu, found.globals);
  try {
    const id = '@tensorflow/tfjs-backend-webgpu';
    require(id);
  } catch (e) {
    return {
      ok: false,
      reason: `webgpu: @tensorflow/tfjs-backend-webgpu does not load: ${firstLine((e as Error).message)}`,
    };
  }
  if (tf.findBackendFactory('webgpu') == null) {
    return {
      ok: false,
      reason:
        "webgpu: @tensorflow/tfjs-backend-webgpu registered no backend with this process's @tensorflow/tfjs-core (a second copy of tfjs-core: a bundle must leave @tensorflow/* external)",
    };
  }
  const r = await trySetBackend('webgpu');
  if (!r.ok) return { ok: false, reason: `webgpu: ${r.reason}` };
  if (found.probe.software) preferTiledMatmul();
  const bad = await selfTest();
  if (bad) {
    tf.removeBackend('webgpu');
    return { ok: false, reason: `webgpu: ${bad}` };
  }
  const ok: WebgpuInit = { ok: true };
  if (found.probe.adapterInfo) ok.adapterInfo = found.probe.adapterInfo;
  if (found.probe.software) ok.software = found.probe.software;
  return ok;
}
