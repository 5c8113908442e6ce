/**
 * A real process holding a job's lock as a run from a terminal does (the runtime's own takeJobLock, which loads no
 * TensorFlow.js, so it starts in well under a second); SIGTERM ends it as the runtime ends, releasing the lock, and
 * SIGKILL leaves its lock file behind as a killed run does. Resolves once the lock is held.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';

const JOB_LOCK = resolve(__dirname, '..', '..', 'runtime', 'rft', 'run', 'job', 'job-lock.ts');

export async function spawnLockHolder(jobDir: string, runId: string, config: string): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '-e',
      `const lock = require(${JSON.stringify(JOB_LOCK)}).takeJobLock(${JSON.stringify(jobDir)}, undefined, { runId: ${JSON.stringify(runId)}, config: ${JSON.stringify(config)} }, () => {});
       process.on('SIGTERM', () => { lock.release(); process.exit(0); });
       console.log('held'); setInterval(() => {}, 1000);`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await new Promise<void>((ok, fail) => {
    child.stdout!.on('data', (d: Buffer) => d.toString().includes('held') && ok());
    child.on('exit', (code) => fail(new Error(`the lock holder exited (${code}) before holding the lock`)));
  });
  return child;
}
