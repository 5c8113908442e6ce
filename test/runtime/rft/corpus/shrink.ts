/**
 * A Trinity example config shrunk as a new user would to try it on a laptop: the tiniest model, one step of a
 * small batch, one engine of each kind on a two-GPU cluster, and a few rows of data in the example's own format
 * (the keys its `format` names, filled from the corpus' GSM8K, countdown and human-like rows). Everything else it
 * writes — the algorithm, workflows, operators, buffers, sync settings, monitors, pipelines — stays as written, so
 * what the local runtime does with the example is what it would do with the full one.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isMap, isSeq, parseDocument, type Document, type YAMLMap } from 'yaml';
import { saveInitialModel } from '../../../../runtime/engine/lm/checkpoint';
import { newModelConfigJson, parseModelConfig } from '../../../../runtime/engine/lm/config';
import { buildByteTokenizer, tokenizerFromJson } from '../../../../runtime/engine/tokenizer';
import { corpusData } from '../../../helpers/corpus';

/**
 * Tokens: a truncated prompt and a short response; the model length leaves room for a multi-turn agent's opening
 * messages (Trinity's FrozenLake system prompt alone is over a thousand bytes, and the messages of a turn are never cut).
 */
export const SHRUNK_LIMITS = { maxPromptTokens: 48, maxResponseTokens: 6, maxModelLen: 2048 } as const;
const ROWS = 4;
const BATCH = 2;
/**
 * One turn an episode: the tiny random model never stops, so its first turn fills what `max_model_len` leaves and a
 * second turn's prompt would be refused, as vLLM refuses it (the task fails, on Trinity too).
 */
const AGENT_TURNS = 1;

/** The tiniest model the runtime trains: one layer, hidden 16, byte tokenizer with a ChatML template. */
export function saveTiniestModel(dir: string): void {
  const tokenizer = tokenizerFromJson(buildByteTokenizer(), 'byte tokenizer');
  const cfg = parseModelConfig(
    newModelConfigJson({
      family: 'qwen2',
      layers: 1,
      hidden: 16,
      heads: 2,
      kvHeads: 1,
      intermediate: 32,
      vocabSize: tokenizer.vocabSize,
      maxPositions: SHRUNK_LIMITS.maxModelLen,
      eosTokenIds: [...tokenizer.eosTokenIds],
      bosTokenId: tokenizer.bosTokenId,
    }),
  );
  saveInitialModel(cfg, 7, dir, { tokenizer });
}

interface SourceRow {
  question: string;
  answer: string;
  chosen: string;
  rejected: string;
}

function jsonl(path: string): Record<string, unknown>[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** Short text: a prompt the truncation keeps whole enough to mean something, a response that fits. */
const clip = (s: unknown, n = 40): string => String(s).slice(0, n);

function sourceRows(kind: 'gsm8k' | 'countdown'): SourceRow[] {
  const dpo = jsonl(corpusData('human_like', 'train.jsonl'));
  const rows = jsonl(corpusData(kind, 'train.jsonl'));
  return rows.slice(0, ROWS).map((r, i) => ({
    question: kind === 'countdown' ? clip(String(r.question).split('User: ')[1] ?? r.question) : clip(r.question),
    answer: String(r.answer),
    chosen: clip(dpo[i].chosen, 12),
    rejected: clip(dpo[i].rejected, 12),
  }));
}

type Plain = Record<string, unknown>;

/** Rows in the format a dataset entry names (Trinity's FormatConfig keys and defaults). */
function rowsFor(format: Plain, role: 'task' | 'sft' | 'dpo', source: SourceRow[], workflow?: string): Plain[] {
  const key = (k: string, fallback: string): string => (typeof format[k] === 'string' ? String(format[k]) : fallback);
  const messages = format.prompt_type === undefined ? role === 'sft' : format.prompt_type === 'messages';
  return source.map((s, i) => {
    if (workflow === 'frozen_lake_workflow') return { [key('prompt_key', 'prompt')]: '', size: 3, p: 0.8, seed: i };
    if (role === 'dpo') {
      if (messages)
        return {
          [key('messages_key', 'messages')]: [{ role: 'user', content: s.question }],
          [key('chosen_key', 'chosen')]: [{ role: 'assistant', content: s.chosen }],
          [key('rejected_key', 'rejected')]: [{ role: 'assistant', content: s.rejected }],
        };
      return {
        [key('prompt_key', 'prompt')]: s.question,
        [key('chosen_key', 'chosen')]: s.chosen,
        [key('rejected_key', 'rejected')]: s.rejected,
      };
    }
    if (role === 'sft' && messages)
      return {
        [key('messages_key', 'messages')]: [
          { role: 'user', content: s.question },
          { role: 'assistant', content: clip(s.answer, 8) },
        ],
      };
    const row: Plain = {
      [key('prompt_key', 'prompt')]: s.question,
      [key('response_key', 'response')]: role === 'sft' ? clip(s.answer, 8) : s.answer,
    };
    if (typeof format.system_prompt_key === 'string') row[format.system_prompt_key] = 'Be brief.';
    return row;
  });
}

export interface ShrunkConfig {
  /** The shrunk config's text. */
  yaml: string;
  /** What the shrinking replaced, for the test's listing. */
  notes: string[];
}

/**
 * Shrinks one corpus config into `dir` (its data files and model are written there; the config is returned).
 * `modelDir` is the tiniest model, shared by every config.
 */
export function shrinkConfig(text: string, dir: string, modelDir: string): ShrunkConfig {
  const doc = parseDocument(text);
  const notes: string[] = [];
  mkdirSync(join(dir, 'data'), { recursive: true });
  const get = (path: (string | number)[]): unknown => doc.getIn(path);
  const has = (path: (string | number)[]): boolean => doc.hasIn(path);
  const set = (path: (string | number)[], value: unknown): void => {
    doc.setIn(path, value);
  };
  const roots: (string | number)[][] = [[]];
  const stages = doc.get('stages');
  if (isSeq(stages)) stages.items.forEach((_, i) => roots.push(['stages', i]));

  set(['checkpoint_root_dir'], join(dir, 'checkpoints'));
  const whole = JSON.stringify(doc.toJS());
  const source = sourceRows(/countdown/i.test(whole) ? 'countdown' : 'gsm8k');
  let files = 0;
  const workflow = /frozen_lake_workflow/.test(whole) ? 'frozen_lake_workflow' : undefined;
  const dataFile = (format: Plain, role: 'task' | 'sft' | 'dpo'): string => {
    const p = join(dir, 'data', `d${files++}.jsonl`);
    writeFileSync(
      p,
      rowsFor(format, role, source, workflow)
        .map((r) => JSON.stringify(r))
        .join('\n') + '\n',
    );
    return p;
  };
  /** One jsonl file: no subset, its one split is `train`. */
  const plainFile = (path: (string | number)[]): void => {
    doc.deleteIn([...path, 'subset_name']);
    if (has([...path, 'split'])) set([...path, 'split'], 'train');
  };
  const plain = (path: (string | number)[]): Plain => {
    const node = get(path);
    return isMap(node) ? ((node as YAMLMap).toJSON() as Plain) : {};
  };

  for (const root of roots) {
    const at = (...p: (string | number)[]) => [...root, ...p];
    const isRoot = root.length === 0;
    const algorithm = String(get(at('algorithm', 'algorithm_type')) ?? (isRoot ? 'ppo' : ''));
    if (isRoot || has(at('model'))) {
      set(at('model', 'model_path'), modelDir);
      if (has(at('model', 'critic_model_path'))) set(at('model', 'critic_model_path'), modelDir);
      set(at('model', 'max_prompt_tokens'), SHRUNK_LIMITS.maxPromptTokens);
      set(at('model', 'max_response_tokens'), SHRUNK_LIMITS.maxResponseTokens);
      set(at('model', 'max_model_len'), SHRUNK_LIMITS.maxModelLen);
    }
    // One engine of each kind, on a cluster of explorer engines plus two trainer GPUs (veRL's sequence parallel
    // size of 2 in several examples must divide them).
    let engines = 1;
    if (has(at('explorer', 'rollout_model'))) {
      set(at('explorer', 'rollout_model', 'engine_num'), 1);
      set(at('explorer', 'rollout_model', 'tensor_parallel_size'), 1);
    }
    const aux = get(at('explorer', 'auxiliary_models'));
    if (isSeq(aux))
      aux.items.forEach((_, i) => {
        set(at('explorer', 'auxiliary_models', i, 'model_path'), modelDir);
        set(at('explorer', 'auxiliary_models', i, 'engine_num'), 1);
        set(at('explorer', 'auxiliary_models', i, 'tensor_parallel_size'), 1);
        if (has(at('explorer', 'auxiliary_models', i, 'max_model_len')))
          set(at('explorer', 'auxiliary_models', i, 'max_model_len'), SHRUNK_LIMITS.maxModelLen);
        if (has(at('explorer', 'auxiliary_models', i, 'max_prompt_tokens')))
          set(at('explorer', 'auxiliary_models', i, 'max_prompt_tokens'), SHRUNK_LIMITS.maxPromptTokens);
        if (has(at('explorer', 'auxiliary_models', i, 'max_response_tokens')))
          set(at('explorer', 'auxiliary_models', i, 'max_response_tokens'), SHRUNK_LIMITS.maxResponseTokens);
        engines++;
      });
    if (isRoot || has(at('cluster'))) {
      const mode = String(get(at('mode')) ?? get(['mode']) ?? 'both');
      set(at('cluster', 'node_num'), 1);
      set(at('cluster', 'gpu_per_node'), mode === 'train' ? 2 : engines + 2);
    }

    // One step of a small batch.
    const written = Number(get(at('algorithm', 'repeat_times')));
    const repeat = Number.isInteger(written) ? Math.min(written, 2) : 2;
    if (has(at('algorithm', 'repeat_times'))) set(at('algorithm', 'repeat_times'), repeat);
    if (isRoot || has(at('buffer'))) {
      set(at('buffer', 'total_steps'), 1);
      if (has(at('buffer', 'total_epochs'))) set(at('buffer', 'total_epochs'), 1);
      if (has(at('buffer', 'batch_size'))) set(at('buffer', 'batch_size'), BATCH);
      if (has(at('buffer', 'train_batch_size')) || algorithm === 'sft' || algorithm === 'dpo')
        set(at('buffer', 'train_batch_size'), has(at('buffer', 'batch_size')) ? BATCH * repeat : BATCH);
    }
    if (has(at('trainer', 'total_steps'))) set(at('trainer', 'total_steps'), 1);

    // Data in the example's own format.
    const input = at('buffer', 'explorer_input');
    // A task pipeline writes its output where the taskset (or the DPO/SFT buffer) reads: its inputs get the data.
    const pipeline = at('data_processor', 'task_pipeline');
    const pipelineInputs = get([...pipeline, 'inputs']);
    const piped = isSeq(pipelineInputs);
    if (piped) pipelineInputs.items.forEach((_, i) => set([...pipeline, 'inputs', i], dataFile({}, 'task')));
    const taskset = (path: (string | number)[], output = false): void => {
      if (!output) set([...path, 'path'], dataFile(plain([...path, 'format']), 'task'));
      plainFile(path);
      if (has([...path, 'repeat_times']))
        set([...path, 'repeat_times'], Math.min(Number(get([...path, 'repeat_times'])), 2));
      // An agent's episode of a few turns.
      for (const k of ['agent_max_steps', 'env_max_steps', 'max_steps'])
        if (has([...path, 'workflow_args', k]))
          set([...path, 'workflow_args', k], Math.min(Number(get([...path, 'workflow_args', k])), AGENT_TURNS));
    };
    if (has([...input, 'taskset'])) taskset([...input, 'taskset'], piped);
    for (const list of ['tasksets', 'eval_tasksets']) {
      const seq = get([...input, list]);
      if (isSeq(seq)) seq.items.forEach((_, i) => taskset([...input, list, i]));
    }
    const expPath = at('buffer', 'trainer_input', 'experience_buffer');
    const storage = String(get([...expPath, 'storage_type']) ?? '').toLowerCase();
    if (
      has(expPath) &&
      !piped &&
      (storage === 'file' || storage === '') &&
      (algorithm === 'sft' || algorithm === 'dpo')
    ) {
      set([...expPath, 'path'], dataFile(plain([...expPath, 'format']), algorithm === 'dpo' ? 'dpo' : 'sft'));
      plainFile(expPath);
    }
    const auxBuffers = get(at('buffer', 'trainer_input', 'auxiliary_buffers'));
    if (isMap(auxBuffers))
      for (const item of auxBuffers.items) {
        const p = at(
          'buffer',
          'trainer_input',
          'auxiliary_buffers',
          String((item.key as { value?: unknown }).value ?? item.key),
        );
        set([...p, 'path'], dataFile(plain([...p, 'format']), 'sft'));
        if (has([...p, 'total_epochs'])) set([...p, 'total_epochs'], 1);
        plainFile(p);
      }
  }
  notes.push(`${files} data file(s)`);
  return { yaml: doc.toString(), notes };
}

export type { Document };
