/**
 * Migrates a config written for one Trinity release to a newer one: renamed and moved keys, the v0.3.2 buffer
 * restructure (replay buffer, per-taskset prompts), SFT warmup into `stages`, renamed registry names, and
 * defaults that changed under the user's feet (the experience buffer's storage type). Comments are kept.
 */
import { isMap, isPair, isScalar, isSeq, Scalar, YAMLMap, type Document, type Pair } from 'yaml';
import { parseYamlDocument } from './load/yaml-document';
import { releaseComment } from './load/load-config';
import { atLeast, releaseIndex, type Release } from './releases';

export interface MigrationChange {
  /** Dotted path of what changed, in the source file. */
  path: string;
  description: string;
}

export interface MigrationResult {
  text: string;
  changes: MigrationChange[];
}

export interface MigrationHost {
  /** Reads a file named by `trainer_config_path` (relative paths as the config names them); undefined if unreadable. */
  readFile?: (path: string) => string | undefined;
}

type AnyMap = YAMLMap<unknown, unknown>;

export function migrate(text: string, from: Release, to: Release, host: MigrationHost = {}): MigrationResult {
  const doc = parseYamlDocument(text, { version: '1.1', keepSourceTokens: true });
  const changes: MigrationChange[] = [];
  const root = doc.contents;
  // Broken YAML is not migrated: the edit would have to guess, and the user is mid-edit anyway.
  if (doc.errors.length > 0 || !isMap(root) || releaseIndex(to) <= releaseIndex(from)) return { text, changes };
  const m = new Migrator(doc, from, to, changes, host);
  m.config(root as AnyMap, '');
  const stages = root.get('stages', true);
  if (isSeq(stages)) stages.items.forEach((s, i) => isMap(s) && m.config(s as AnyMap, `stages.${i}.`));
  return { text: withReleaseComment(changes.length ? doc.toString({ lineWidth: 0 }) : text, to), changes };
}

/** The `# trinity-version:` comment, if the file has one, names the release it was migrated to. */
function withReleaseComment(text: string, release: Release): string {
  const comment = releaseComment(text);
  return comment ? text.slice(0, comment.range[0]) + release + text.slice(comment.range[1]) : text;
}

class Migrator {
  constructor(
    private readonly doc: Document,
    private readonly from: Release,
    private readonly to: Release,
    private readonly changes: MigrationChange[],
    private readonly host: MigrationHost,
  ) {}

  /** True when the change that came in `release` lies on the way from `from` to `to`. */
  private crosses(release: Release): boolean {
    return !atLeast(this.from, release) && atLeast(this.to, release);
  }

  private note(path: string, description: string): void {
    this.changes.push({ path, description });
  }

  /** A root config or a stage: the sections it may hold. */
  config(cfg: AnyMap, at: string): void {
    const explorer = mapAt(cfg, 'explorer');
    if (explorer) {
      this.rename(explorer, 'runner_num', 'runner_per_model', `${at}explorer`, true);
      if (this.crosses('v0.4.0')) this.rename(explorer, 'api_port', 'proxy_port', `${at}explorer`);
    }
    const trainer = mapAt(cfg, 'trainer');
    if (trainer) {
      if (this.crosses('v0.3.2')) this.rename(trainer, 'actor_grad_clip', 'grad_clip', `${at}trainer`);
      if (this.crosses('v0.3.2') || this.crosses('main')) this.inlineTrainerConfig(trainer, `${at}trainer`);
    }
    const algorithm = mapAt(cfg, 'algorithm');
    if (algorithm) {
      if (this.crosses('v0.3.1')) {
        this.remove(
          algorithm,
          'use_token_level_loss',
          `${at}algorithm`,
          'token-level loss is the default `loss_agg_mode: token-mean`',
        );
        const args = mapAt(algorithm, 'policy_loss_fn_args');
        if (args)
          this.remove(
            args,
            'use_token_level_loss_in_sft',
            `${at}algorithm.policy_loss_fn_args`,
            'the SFT term averages over tokens (`loss_agg_mode`)',
          );
      }
      const optimizer = mapAt(algorithm, 'optimizer');
      if (optimizer && this.crosses('v0.5.0')) {
        this.rename(optimizer, 'warmup_style', 'lr_scheduler_type', `${at}algorithm.optimizer`);
        this.rename(optimizer, 'lr_decay_style', 'lr_scheduler_type', `${at}algorithm.optimizer`);
        for (const k of ['lr_warmup_init', 'lr_decay_steps', 'min_lr'])
          this.remove(
            optimizer,
            k,
            `${at}algorithm.optimizer`,
            'derived from `lr`, `min_lr_ratio` and the training steps since v0.5.0',
          );
      }
    }
    const synchronizer = mapAt(cfg, 'synchronizer');
    if (synchronizer && this.crosses('v0.5.0')) {
      this.renameValue(
        synchronizer,
        'sync_style',
        { dynamic_by_explorer: 'explorer_driven', dynamic_by_trainer: 'trainer_driven' },
        `${at}synchronizer`,
      );
    }
    const buffer = mapAt(cfg, 'buffer');
    if (buffer) this.buffer(buffer, `${at}buffer`, cfg);
    if (buffer && this.crosses('v0.5.2'))
      this.remove(buffer, 'pad_token_id', `${at}buffer`, 'Trinity reads it from the tokenizer');
  }

  private buffer(buffer: AnyMap, at: string, cfg: AnyMap): void {
    const input = mapAt(buffer, 'explorer_input');
    const tasksets: [AnyMap, string, boolean][] = [];
    if (input) {
      const ts = mapAt(input, 'taskset');
      if (ts) tasksets.push([ts, `${at}.explorer_input.taskset`, false]);
      for (const key of ['tasksets', 'eval_tasksets']) {
        const list = input.get(key, true);
        if (isSeq(list))
          list.items.forEach(
            (t, i) =>
              isMap(t) && tasksets.push([t as AnyMap, `${at}.explorer_input.${key}.${i}`, key === 'eval_tasksets']),
          );
      }
      if (this.crosses('v0.3.2')) {
        for (const key of ['system_prompt', 'reply_prefix']) {
          const value = input.get(key, true);
          if (value === undefined) continue;
          for (const [t, p] of tasksets) {
            const format = ensureMap(t, 'format');
            if (!format.has(key)) format.set(key, cloneNode(value));
            this.note(`${p}.format.${key}`, `\`explorer_input.${key}\` moved to each taskset's \`format.${key}\``);
          }
          if (tasksets.length === 0)
            this.note(
              `${at}.explorer_input.${key}`,
              `\`${key}\` removed: it belongs in a taskset's \`format\`, and no taskset is written`,
            );
          input.delete(key);
        }
      }
      if (this.crosses('v0.4.0')) {
        for (const key of ['default_workflow_type', 'default_eval_workflow_type'])
          this.renameValue(input, key, { toolcall_workflow: 'tool_call_workflow' }, `${at}.explorer_input`);
      }
    }
    for (const [t, p, isEval] of tasksets) {
      this.storage(t, p);
      if (this.crosses('v0.3.2')) {
        if (isEval && t.has('default_eval_workflow_type')) {
          if (!t.has('default_workflow_type')) this.rename(t, 'default_eval_workflow_type', 'default_workflow_type', p);
          else this.remove(t, 'default_eval_workflow_type', p, 'an eval taskset uses its `default_workflow_type`');
        } else {
          this.remove(
            t,
            'default_eval_workflow_type',
            p,
            'set `explorer_input.default_eval_workflow_type` for eval tasksets',
          );
        }
      }
      if (this.crosses('v0.4.0'))
        this.renameValue(t, 'default_workflow_type', { toolcall_workflow: 'tool_call_workflow' }, p);
      if (this.crosses('v0.5.2')) this.rename(t, 'task_selector', 'data_selector', p);
    }
    const trainerInput = mapAt(buffer, 'trainer_input');
    if (!trainerInput) return;
    const mode = String(scalarAt(cfg, 'mode') ?? scalarAt(this.doc.contents as AnyMap, 'mode') ?? 'both');
    const eb = mapAt(trainerInput, 'experience_buffer');
    if (eb) {
      this.storage(eb, `${at}.trainer_input.experience_buffer`);
      this.pinFileStorage(eb, `${at}.trainer_input.experience_buffer`, mode);
    }
    const aux = mapAt(trainerInput, 'auxiliary_buffers');
    if (aux) {
      for (const pair of aux.items) {
        if (isPair(pair) && isMap(pair.value)) {
          const p = `${at}.trainer_input.auxiliary_buffers.${String((pair.key as Scalar).value)}`;
          this.storage(pair.value as AnyMap, p);
          this.pinFileStorage(pair.value as AnyMap, p, 'train');
        }
      }
    }
    if (this.crosses('v0.3.1')) this.mixExpertBuffer(trainerInput, cfg, at);
    if (this.crosses('v0.3.2')) this.sftWarmupToStages(trainerInput, buffer, at);
  }

  /** Up to v0.3.0 the mix strategies read expert data from `sft_warmup_dataset`; from v0.3.1 from an auxiliary buffer. */
  private mixExpertBuffer(trainerInput: AnyMap, cfg: AnyMap, at: string): void {
    const type = String(mapAt(cfg, 'algorithm')?.get('algorithm_type') ?? '');
    const dataset = trainerInput.get('sft_warmup_dataset', true);
    if (!['mix', 'mix_chord'].includes(type) || !isMap(dataset)) return;
    const aux = ensureMap(trainerInput, 'auxiliary_buffers');
    if (!aux.has('sft_dataset')) aux.set('sft_dataset', cloneNode(dataset));
    trainerInput.delete('sft_warmup_dataset');
    trainerInput.delete('sft_warmup_steps');
    this.note(
      `${at}.trainer_input.auxiliary_buffers.sft_dataset`,
      'the expert data of `mix` moved from `sft_warmup_dataset` to `auxiliary_buffers.sft_dataset`',
    );
  }

  /** The v0.3.2 replay-buffer restructure of a storage section. */
  private storage(s: AnyMap, at: string): void {
    if (!this.crosses('v0.3.2')) return;
    const moved: [string, string][] = [
      ['use_priority_queue', 'enable'],
      ['reuse_cooldown_time', 'reuse_cooldown_time'],
    ];
    for (const [oldKey, newKey] of moved) {
      const v = s.get(oldKey, true);
      if (v === undefined) continue;
      ensureMap(s, 'replay_buffer').set(newKey, cloneNode(v));
      s.delete(oldKey);
      this.note(`${at}.replay_buffer.${newKey}`, `\`${oldKey}\` moved to \`replay_buffer.${newKey}\``);
    }
    const kwargs = s.get('replay_buffer_kwargs', true);
    if (isMap(kwargs)) {
      const rb = ensureMap(s, 'replay_buffer');
      const args = new YAMLMap();
      for (const pair of kwargs.items) {
        if (!isPair(pair)) continue;
        const k = String((pair.key as Scalar).value);
        if (k === 'priority_fn') rb.set('priority_fn', cloneNode(pair.value));
        else args.set(k, cloneNode(pair.value));
      }
      if (args.items.length) rb.set('priority_fn_args', args);
      s.delete('replay_buffer_kwargs');
      this.note(
        `${at}.replay_buffer`,
        '`replay_buffer_kwargs` moved to `replay_buffer.priority_fn` / `priority_fn_args`',
      );
    }
    this.remove(s, 'mm_data_kwargs', at, 'multi-modal settings moved to the workflow');
  }

  /** Up to v0.3.2 a buffer's storage type defaulted to `file`; from v0.4.0 to `queue`, which nothing fills in train mode. */
  private pinFileStorage(s: AnyMap, at: string, mode: string): void {
    if (!this.crosses('v0.4.0') || s.has('storage_type') || mode !== 'train') return;
    s.set('storage_type', 'file');
    this.note(
      `${at}.storage_type`,
      'the default storage type became `queue` in v0.4.0; `file` keeps this buffer reading its dataset',
    );
  }

  /** `sft_warmup_steps` + `sft_warmup_dataset` (<= v0.3.1) become an SFT stage before the RL stage. */
  private sftWarmupToStages(trainerInput: AnyMap, buffer: AnyMap, at: string): void {
    const steps = trainerInput.get('sft_warmup_steps');
    const dataset = trainerInput.get('sft_warmup_dataset', true);
    trainerInput.delete('sft_warmup_steps');
    trainerInput.delete('sft_warmup_dataset');
    if (steps === undefined && dataset === undefined) return;
    const root = this.doc.contents as AnyMap;
    if (typeof steps === 'number' && steps > 0 && isMap(dataset) && at === 'buffer' && !root.has('stages')) {
      const ds = cloneNode(dataset) as AnyMap;
      if (!ds.has('storage_type')) ds.set('storage_type', 'file');
      const batch = buffer.get('train_batch_size') ?? buffer.get('batch_size') ?? 1;
      // createNode keeps an existing node (the dataset, with its comments) where it is placed.
      const warmup = {
        stage_name: 'sft_warmup',
        mode: 'train',
        algorithm: { algorithm_type: 'sft' },
        buffer: { total_steps: steps, train_batch_size: batch, trainer_input: { experience_buffer: ds } },
      };
      root.set('stages', this.doc.createNode([warmup, { stage_name: 'rft' }]));
      this.note('stages', `SFT warmup (${steps} steps) became a \`sft_warmup\` stage before the \`rft\` stage`);
    } else {
      this.note(`${at}.trainer_input`, '`sft_warmup_*` removed (no warmup steps were configured)');
    }
  }

  /** From v0.3.2 a `trainer_config_path` file must be written inline under `trainer_config`. */
  private inlineTrainerConfig(trainer: AnyMap, at: string): void {
    const path = trainer.get('trainer_config_path');
    const inline = trainer.get('trainer_config', true);
    if (typeof path !== 'string' || path === '' || (isMap(inline) && inline.items.length > 0)) return;
    const text = this.host.readFile?.(path);
    if (text === undefined) return;
    const sub = parseYamlDocument(text, { version: '1.1' });
    if (sub.errors.length || !isMap(sub.contents)) return;
    // Inside the main config, veRL's own `${a.b}` references are relative to `trainer.trainer_config`.
    rewriteReferences(sub.contents as AnyMap);
    trainer.set('trainer_config', sub.contents);
    trainer.delete('trainer_config_path');
    this.note(`${at}.trainer_config`, `the veRL settings of \`${path}\` are now inline`);
  }

  private rename(map: AnyMap, oldKey: string, newKey: string, at: string, dropIfTargetExists = false): void {
    const pair = map.items.find((p) => isPair(p) && isScalar(p.key) && p.key.value === oldKey) as
      | Pair<Scalar, unknown>
      | undefined;
    if (!pair) return;
    if (map.has(newKey)) {
      if (!dropIfTargetExists) return;
      map.delete(oldKey);
      this.note(`${at}.${oldKey}`, `\`${oldKey}\` removed: \`${newKey}\` is already set`);
      return;
    }
    pair.key = new Scalar(newKey);
    this.note(`${at}.${newKey}`, `\`${oldKey}\` renamed to \`${newKey}\``);
  }

  private renameValue(map: AnyMap, key: string, names: Record<string, string>, at: string): void {
    const v = map.get(key);
    if (typeof v !== 'string' || !(v in names)) return;
    map.set(key, names[v]);
    this.note(`${at}.${key}`, `\`${v}\` is now called \`${names[v]}\``);
  }

  private remove(map: AnyMap, key: string, at: string, why: string): void {
    if (!map.has(key)) return;
    map.delete(key);
    this.note(`${at}.${key}`, `\`${key}\` removed: ${why}`);
  }
}

function mapAt(m: AnyMap, key: string): AnyMap | undefined {
  const v = m.get(key, true);
  return isMap(v) ? (v as AnyMap) : undefined;
}

function scalarAt(m: AnyMap, key: string): unknown {
  const v = m.get(key);
  return v === null || typeof v === 'object' ? undefined : v;
}

function ensureMap(m: AnyMap, key: string): AnyMap {
  const v = m.get(key, true);
  if (isMap(v)) return v as AnyMap;
  const created = new YAMLMap();
  m.set(key, created);
  return created as AnyMap;
}

function cloneNode<T>(n: T): T {
  return n && typeof n === 'object' && 'clone' in (n as object) ? (n as unknown as { clone(): T }).clone() : n;
}

/** `${actor_rollout_ref.x}` in a standalone veRL file becomes `${trainer.trainer_config.actor_rollout_ref.x}`. */
function rewriteReferences(node: unknown): void {
  if (isMap(node) || isSeq(node)) {
    for (const item of node.items) rewriteReferences(isPair(item) ? item.value : item);
    return;
  }
  if (isScalar(node) && typeof node.value === 'string') {
    node.value = node.value.replace(/\$\{(?!oc\.|\.)([A-Za-z_][\w.[\]]*)\}/g, '${trainer.trainer_config.$1}');
  }
}
