/**
 * The PyTorch peers of bench:engine and bench:rft: a python that imports torch, and which torch builds to run.
 *
 * PyTorch as installed (Debian's python3-torch links libblas.so.3: OpenBLAS where libopenblas0-pthread is installed,
 * the peer issue 14's targets are set against; else the netlib reference BLAS, which is no fair peer), plus PyTorch
 * with every other OpenBLAS found in Debian's standard places (or the directories in BENCH_TORCH_BLAS_DIRS,
 * colon-separated, each holding a libblas.so.3) put first on its LD_LIBRARY_PATH. All with OMP_WAIT_POLICY=PASSIVE
 * unless set: libgomp's spin-waiting makes a 2-thread torch many times slower whenever another process holds a core.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { join, resolve } from 'node:path';

export interface PeerSpec {
  id: string;
  label: string;
  env: NodeJS.ProcessEnv;
}

/** PyTorch as installed, plus one peer per OpenBLAS directory (explicit, or found where Debian installs them). */
export function peerSpecs(): PeerSpec[] {
  const base: NodeJS.ProcessEnv = { ...process.env, OMP_WAIT_POLICY: process.env.OMP_WAIT_POLICY ?? 'PASSIVE' };
  const peers: PeerSpec[] = [{ id: 'torch', label: 'PyTorch as installed', env: base }];
  const explicit = process.env.BENCH_TORCH_BLAS_DIRS;
  let dirs: string[];
  if (explicit !== undefined) {
    dirs = explicit.split(':').filter((d) => d !== '');
  } else {
    const sys = '/usr/lib/x86_64-linux-gnu';
    const installed = existsSync(`${sys}/libblas.so.3`) ? realpathSync(`${sys}/libblas.so.3`) : '';
    dirs = [`${sys}/openblas-pthread`, `${sys}/openblas-openmp`, `${sys}/openblas-serial`].filter(
      (d) => existsSync(`${d}/libblas.so.3`) && realpathSync(`${d}/libblas.so.3`) !== installed,
    );
  }
  for (const d of dirs) {
    const dir = resolve(d);
    if (!existsSync(join(dir, 'libblas.so.3'))) throw new Error(`BENCH_TORCH_BLAS_DIRS: ${dir} has no libblas.so.3`);
    const ld = [dir, base.LD_LIBRARY_PATH].filter((x) => x).join(':');
    peers.push({
      id: `torch+${dir.split('/').pop()}`,
      label: `PyTorch with the libblas.so.3 of ${dir}`,
      env: { ...base, LD_LIBRARY_PATH: ld },
    });
  }
  return peers;
}

/** A python that imports torch (BENCH_PYTHON, else python3, /usr/bin/python3); undefined when there is none. */
export function findPython(): string | undefined {
  const candidates = process.env.BENCH_PYTHON ? [process.env.BENCH_PYTHON] : ['python3', '/usr/bin/python3'];
  return candidates.find((py) => spawnSync(py, ['-c', 'import torch'], { stdio: 'ignore' }).status === 0);
}
