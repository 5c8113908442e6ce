/** Which Trinity-RFT release is installed in the user's Python: asked once, cached; no Python is fine. */
import { execFile } from 'node:child_process';
import { parseRelease, type Release } from '../../runtime/config/releases';

const cache = new Map<string, Promise<Release | undefined>>();

export function detectTrinityRelease(python: string, timeoutMs = 8000): Promise<Release | undefined> {
  let p = cache.get(python);
  if (!p) {
    p = new Promise((resolve) => {
      execFile(
        python,
        ['-c', "import importlib.metadata as m; print(m.version('trinity-rft'))"],
        { timeout: timeoutMs, windowsHide: true },
        (err, stdout) => resolve(err ? undefined : parseRelease(String(stdout).trim())),
      );
    });
    cache.set(python, p);
  }
  return p;
}
