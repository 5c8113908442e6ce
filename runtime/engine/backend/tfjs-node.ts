/**
 * The native backends: @tensorflow/tfjs-node-gpu and @tensorflow/tfjs-node (libtensorflow 2.9.1 through an N-API
 * addon). Both are optional dependencies whose install script downloads the addon and libtensorflow from
 * storage.googleapis.com; where that fails npm drops the package, so each is probed before it is loaded.
 *
 * The two register the same `tensorflow` backend and must never both be loaded in one process: once one has been
 * loaded (or has failed part-way, leaving something registered), the other is refused.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { firstLine, trySetBackend } from './set-backend';

export type NativeVariant = 'tensorflow-gpu' | 'tensorflow';

export const NATIVE_PACKAGE: Record<NativeVariant, string> = {
  'tensorflow-gpu': '@tensorflow/tfjs-node-gpu',
  tensorflow: '@tensorflow/tfjs-node',
};

const SHORT: Record<NativeVariant, string> = { 'tensorflow-gpu': 'tfjs-node-gpu', tensorflow: 'tfjs-node' };

const DOWNLOAD = 'its install needs storage.googleapis.com';

/** What is on disk for one variant, found without loading it. */
export interface NativeProbe {
  variant: NativeVariant;
  package: string;
  installed: boolean;
  version?: string;
  /** The addon path Node would load (`lib/napi-v8/tfjs_binding.node` on Node ≥ 18). */
  addon?: string;
  addonFound: boolean;
  /** libtensorflow files found in `deps/lib`. */
  libtensorflow: string[];
  /** Why it cannot load; absent when everything it needs is on disk. */
  reason?: string;
}

/** Finds the package, its addon and libtensorflow on disk. Loads nothing. */
export function probeTfjsNode(variant: NativeVariant): NativeProbe {
  const pkg = NATIVE_PACKAGE[variant];
  const short = SHORT[variant];
  const out: NativeProbe = { variant, package: pkg, installed: false, addonFound: false, libtensorflow: [] };
  let dir: string;
  let manifest: { version?: string; binary?: { module_path?: string; napi_versions?: number[] } };
  try {
    const manifestPath = require.resolve(`${pkg}/package.json`);
    dir = dirname(manifestPath);
    manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
  } catch {
    out.reason = `${short}: ${pkg} is not installed (npm drops this optional dependency when its install script fails; ${DOWNLOAD})`;
    return out;
  }
  out.installed = true;
  out.version = manifest.version;
  out.addon = join(dir, addonRelativePath(manifest.binary), 'tfjs_binding.node');
  out.addonFound = existsSync(out.addon);
  const libDir = join(dir, 'deps', 'lib');
  try {
    out.libtensorflow = readdirSync(libDir)
      .filter((f) => /tensorflow.*\.(so|dylib|dll)/.test(f))
      .sort();
  } catch {
    // No deps/lib at all: reported below.
  }
  if (!out.addonFound) out.reason = `${short}: the native addon tfjs_binding.node is missing (${DOWNLOAD})`;
  else if (out.libtensorflow.length === 0)
    out.reason = `${short}: libtensorflow is missing from deps/lib (${DOWNLOAD})`;
  return out;
}

/** node-pre-gyp's `module_path` for the highest N-API version both the package and this Node support. */
function addonRelativePath(binary: { module_path?: string; napi_versions?: number[] } | undefined): string {
  const nodeNapi = Number(process.versions.napi ?? 8);
  const versions = (binary?.napi_versions ?? [8]).filter((v) => v <= nodeNapi);
  const napi = versions.length > 0 ? Math.max(...versions) : 8;
  return (binary?.module_path ?? './lib/napi-v{napi_build_version}/').replace('{napi_build_version}', String(napi));
}

const REMOVED_UTIL_PREDICATES: Record<string, (v: unknown) => boolean> = {
  isArray: (v) => Array.isArray(v),
  isBoolean: (v) => typeof v === 'boolean',
  isBuffer: (v) => Buffer.isBuffer(v),
  isDate: (v) => v instanceof Date,
  isError: (v) => v instanceof Error,
  isFunction: (v) => typeof v === 'function',
  isNull: (v) => v === null,
  isNullOrUndefined: (v) => v == null,
  isNumber: (v) => typeof v === 'number',
  isObject: (v) => v !== null && typeof v === 'object',
  isPrimitive: (v) => v === null || (typeof v !== 'object' && typeof v !== 'function'),
  isRegExp: (v) => v instanceof RegExp,
  isString: (v) => typeof v === 'string',
  isSymbol: (v) => typeof v === 'symbol',
  isUndefined: (v) => v === undefined,
};

/**
 * tfjs-node 4.22 calls `util.isNullOrUndefined` (and kin), which Node 23 removed (tfjs#8425, unreleased): define
 * the missing ones on the `util` module before tfjs-node is loaded. Existing functions are left alone.
 */
export function polyfillNodeUtil(): void {
  const util = require('node:util') as Record<string, unknown>;
  for (const [name, fn] of Object.entries(REMOVED_UTIL_PREDICATES))
    if (typeof util[name] !== 'function') util[name] = fn;
}

let loaded: NativeVariant | undefined;

export type NativeInit = { ok: true } | { ok: false; reason: string };

/** Loads one variant (after probing it) and makes tfjs' `tensorflow` backend active. */
export async function initTfjsNode(variant: NativeVariant): Promise<NativeInit> {
  const short = SHORT[variant];
  if (loaded !== undefined && loaded !== variant) {
    return {
      ok: false,
      reason: `${short}: ${NATIVE_PACKAGE[loaded]} is already loaded in this process, and the two must never both be loaded`,
    };
  }
  const probe = probeTfjsNode(variant);
  if (probe.reason) return { ok: false, reason: probe.reason };
  polyfillNodeUtil();
  try {
    require(NATIVE_PACKAGE[variant]);
    loaded = variant;
  } catch (e) {
    // A failure before anything registered (typically the addon's dlopen) leaves the process clean for the other
    // variant; anything later does not.
    if (tf.findBackendFactory('tensorflow') != null) loaded = variant;
    return {
      ok: false,
      reason: `${short}: loading ${NATIVE_PACKAGE[variant]} failed: ${firstLine(e instanceof Error ? e.message : String(e))}`,
    };
  }
  if (tf.findBackendFactory('tensorflow') == null) {
    return {
      ok: false,
      reason: `${short}: loaded, but it registered no \`tensorflow\` backend with this process's @tensorflow/tfjs-core (a second copy of tfjs-core: a bundle must leave @tensorflow/* external)`,
    };
  }
  const r = await trySetBackend('tensorflow');
  return r.ok ? r : { ok: false, reason: `${short}: ${r.reason}` };
}
