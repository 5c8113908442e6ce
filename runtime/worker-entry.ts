/**
 * A worker thread's entry file: `<name>.js` beside the bundle that starts it (dist/, where esbuild.mjs writes each
 * worker), or `<name>.ts` beside the TypeScript source that starts it, run under tsx (tests, benches).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export interface WorkerEntry {
  file: string;
  execArgv: string[];
}

/** `dir`: the caller's `__dirname`. */
export function workerEntry(dir: string, name: string): WorkerEntry {
  const bundled = join(dir, `${name}.js`);
  if (existsSync(bundled)) return { file: bundled, execArgv: [] };
  // From source, the worker needs tsx's require hook (`--import tsx` does not reach worker threads).
  const source = join(dir, `${name}.ts`);
  if (existsSync(source)) return { file: source, execArgv: ['--require', require.resolve('tsx/cjs')] };
  throw new Error(`the ${name} script is missing (looked for ${bundled} and ${source})`);
}
