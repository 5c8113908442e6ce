/** Finds the shared Trinity-RFT corpus (real configs and datasets), which is Trinity's, not ours. */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

export function corpusDir(): string {
  const dir = resolve(process.env.TRINITY_CORPUS_DIR ?? '../shared/corpus');
  if (!existsSync(join(dir, 'trinity-configs'))) {
    throw new Error(
      `Trinity corpus not found at ${dir}: set TRINITY_CORPUS_DIR to the folder holding trinity-configs/ and data/ ` +
        '(CI and developer machines have it at ../shared/corpus).',
    );
  }
  return dir;
}

/** Every YAML config of a release, as paths relative to that release's folder, sorted. */
export function corpusConfigs(release: string): { rel: string; abs: string }[] {
  const root = join(corpusDir(), 'trinity-configs', release);
  const out: { rel: string; abs: string }[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.ya?ml$/.test(name)) out.push({ rel: relative(root, p), abs: p });
    }
  };
  walk(root);
  return out;
}

export function corpusData(...parts: string[]): string {
  return join(corpusDir(), 'data', ...parts);
}

/**
 * The environment Trinity's examples expect a user to have exported (trinity/common/constants.py documents
 * these variables); without them Trinity itself stops at the first `${oc.env:...}` that has no default.
 */
export const TRINITY_ENV: Record<string, string> = {
  TRINITY_CHECKPOINT_ROOT_DIR: '/tmp/trinity-checkpoints',
  TRINITY_MODEL_PATH: 'Qwen/Qwen2.5-1.5B-Instruct',
  TRINITY_TASKSET_PATH: 'openai/gsm8k',
  TRINITY_EVAL_TASKSET_PATH: 'openai/gsm8k',
  TRINITY_SFT_DATASET_PATH: 'open-r1/Mixture-of-Thoughts',
  TRINITY_AUX_MODEL_PATH: 'Qwen/Qwen2.5-7B-Instruct',
  TRINITY_BUFFER_PATH: 'sqlite:////tmp/trinity-buffer.db',
  TMPDIR: '/tmp',
};
