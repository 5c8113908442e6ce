/** Mapping a path in the file to the checked config it belongs to (the root, or a stage that replaced a section). */
import type { Path } from '../../runtime/config/diagnostics';
import type { CheckResult } from '../../runtime/config/check-config';

export function runFor(result: CheckResult, path: Path): { run: number; inner: Path } {
  if (path[0] === 'stages' && typeof path[1] === 'number') {
    const i = result.runs.findIndex((r) => r.stage?.index === path[1]);
    if (i >= 0 && typeof path[2] === 'string' && result.runs[i].stage!.replaced.has(path[2]))
      return { run: i, inner: path.slice(2) };
  }
  return { run: 0, inner: path };
}
