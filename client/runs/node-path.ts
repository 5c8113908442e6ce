/**
 * The Node.js the local runtime runs on: the `trinityWorkbench.nodePath` setting, else `node` on PATH. The runtime's
 * native modules (better-sqlite3, the OpenBLAS addon) are built for Node 20's ABI, so the version is checked too.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { execFileSync } from 'node:child_process';

export const REQUIRED_NODE_MAJOR = 20;

export type NodeLookup = { path: string; version: string } | { error: string };

export function findNode(setting: string | undefined, env: NodeJS.ProcessEnv): NodeLookup {
  const wanted = setting?.trim() || 'node';
  const candidates =
    isAbsolute(wanted) || wanted.includes('/')
      ? [wanted]
      : (env.PATH ?? '')
          .split(delimiter)
          .filter(Boolean)
          .map((d) => join(d, wanted));
  const found = candidates.find(isExecutableFile);
  const fix = `Install Node.js ${REQUIRED_NODE_MAJOR} (https://nodejs.org) and put it on PATH, or set trinityWorkbench.nodePath to its executable.`;
  if (!found)
    return {
      error: setting?.trim()
        ? `trinityWorkbench.nodePath is ${wanted}, which is not an executable file. ${fix}`
        : `No \`node\` was found on PATH. ${fix}`,
    };
  let version: string;
  try {
    version = execFileSync(found, ['--version'], {
      encoding: 'utf8',
      timeout: 10_000,
      env: env as Record<string, string>,
    }).trim();
  } catch (e) {
    return { error: `${found} --version failed (${(e as Error).message.split('\n')[0]}). ${fix}` };
  }
  const major = Number(/^v(\d+)/.exec(version)?.[1]);
  if (major !== REQUIRED_NODE_MAJOR)
    return {
      error: `${found} is Node.js ${version}; the runtime's native modules are built for Node.js ${REQUIRED_NODE_MAJOR}. ${fix}`,
    };
  return { path: found, version };
}

function isExecutableFile(p: string): boolean {
  try {
    accessSync(p, constants.X_OK);
    return statSync(p).isFile();
  } catch {
    return false;
  }
}
