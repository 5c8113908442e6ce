// `npm run check:examples`: checks every example config from its own folder, the directory a Run starts in (relative
// paths are taken from there, as Trinity takes them from the directory `trinity run` starts in).
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const cli = join(here, '..', 'dist', 'cli.js');
let status = 0;
for (const dir of [
  here,
  ...readdirSync(here, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? [join(here, d.name)] : [])),
]) {
  const configs = readdirSync(dir).filter((n) => /\.trinity\.ya?ml$/.test(n));
  if (!configs.length) continue;
  const r = spawnSync(process.execPath, [cli, 'check', ...configs], { cwd: dir, stdio: 'inherit' });
  status = Math.max(status, r.status ?? 1);
}
process.exit(status);
