/**
 * Train-mode datasets (SFT / DPO experience buffers with `storage_type: file`) → Experiences, as Trinity's
 * ExperienceFileReader with its SFTFormatter / DPOFormatter (trinity/buffer/schema/formatter.py,
 * trinity/common/models/utils.py `tokenize_and_mask_messages_default`).
 *
 * SFT, `format.prompt_type`:
 *  - `messages`: `row[messages_key]`, a message list or its JSON string; tools from `row[tools_key]` (list or JSON
 *    string; an empty string is no tools);
 *  - `plaintext`: [system: `row[system_prompt_key]`, else `system_prompt`] + user `row[prompt_key]` + assistant
 *    `row[response_key]`;
 *  - `chatpair` (releases before v0.3.1 only): `row[prompt_key]` and `row[response_key]` are message lists.
 *  Tokens = template(messages); prompt length = template(messages[:-1], add_generation_prompt) → only the last turn
 *  is trained on (action mask all ones). With `enable_concatenated_multi_turn`, every assistant turn is trained on:
 *  the mask is 1 between each turn's generation prompt and its end, the prompt ends at the first assistant token.
 * DPO: prompt = [system] + user `row[prompt_key]` (plaintext) or `row[messages_key]` (messages); chosen / rejected =
 *  one assistant message of `row[chosen_key]` / `row[rejected_key]` (plaintext) or those message lists (messages).
 *  The Experience holds the prompt tokens; `chosen` / `rejected` are template(prompt + answer) minus the prompt's
 *  length.
 *
 * Added here (Trinity does neither): samples longer than `maxLength` tokens are cut to it (counted in `truncated`;
 * a prompt that alone reaches it leaves nothing to train on and the row is skipped), and prompts that do not
 * tokenise as a prefix of the whole conversation are counted in a warning (Trinity slices by length regardless).
 */
import { randomUUID } from 'node:crypto';
import type { DataSelectorConfig, FormatConfig } from '../../config/types.generated';
import type { TextTokenizer } from '../../engine/tokenizer';
import type { Experience } from '../experience';
import { ChatRenderer, type Message } from './chat';
import { DataError } from '../../config/datasets/data-error';
import { describeSource, loadDatasetRows, type RowSource, type SkippedRow } from './load-dataset';
import { BatchReader } from './reader';
import { resolveFormat } from './tasks';

export type TrainSchema = 'sft' | 'dpo';

/** An experience buffer as written in a config (ExperienceBufferConfig / StorageConfig); unset = default. */
export interface TrainDatasetInput {
  name?: string | null;
  /** Must be `file` (unset is taken as file). */
  storage_type?: string | null;
  path?: string | null;
  split?: string | null;
  subset_name?: string | null;
  format?: Partial<FormatConfig> | (Omit<Partial<FormatConfig>, 'prompt_type'> & { prompt_type?: string }) | null;
  /** `sft` or `dpo` (Trinity sets it from the algorithm). */
  schema_type?: string | null;
  data_selector?: Partial<DataSelectorConfig> | null;
  total_epochs?: number | null;
  total_steps?: number | null;
  batch_size?: number | null;
}

export interface FormatterOptions {
  /** model.custom_chat_template: used when format.chat_template is unset (Trinity's set_if_none); else the tokenizer's template. */
  chatTemplate?: string | null;
  /** model.enable_thinking, used when format.enable_thinking is unset (multi-turn SFT only, as in Trinity). */
  enableThinking?: boolean | null;
}

export interface TrainDataOptions extends FormatterOptions {
  baseDir: string;
  tokenizer: TextTokenizer;
  /** Default: the dataset's `schema_type`. */
  schemaType?: TrainSchema;
  /** Most tokens per sample (e.g. model.max_model_len); longer samples are truncated. Unset: no limit. */
  maxLength?: number | null;
  /** `error` (default): a bad row throws a DataError naming file, line and key. `skip`: it is counted in `skipped`. */
  onInvalidRow?: 'error' | 'skip';
}

export interface TrainDataResult {
  schemaType: TrainSchema;
  experiences: Experience[];
  skipped: SkippedRow[];
  /** Samples cut to `maxLength`. */
  truncated: number;
  warnings: string[];
  format: FormatConfig;
  files: string[];
  columns: string[];
}

// ---------------------------------------------------------------------------------------------------------------

function newEid(): Experience['eid'] {
  return { batch: '', task: '', run: 0, step: 0, suffix: randomUUID().replace(/-/g, '').slice(0, 6) };
}

function keyRole(format: FormatConfig, key: string): string {
  const roles = (Object.keys(format) as (keyof FormatConfig)[])
    .filter((k) => k.endsWith('_key') && format[k] === key)
    .map((k) => `format.${k}`);
  return roles.length > 0 ? ` (${roles.join(', ')})` : '';
}

function isMessage(v: unknown): v is Message {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && typeof (v as { role?: unknown }).role === 'string';
}

/** Counters a formatter keeps across rows, reported as warnings. */
export interface FormatterStats {
  /** Prompt tokens that are not a prefix of the full conversation's tokens. */
  promptNotPrefix: number;
  /** SFT conversations whose last message is not the assistant's (Trinity trains on it anyway). */
  lastNotAssistant: number;
  /** Multi-turn SFT conversations without any assistant token. */
  noAssistantTokens: number;
}

abstract class RowFormatter {
  readonly format: FormatConfig;
  readonly renderer: ChatRenderer;
  readonly stats: FormatterStats = { promptNotPrefix: 0, lastNotAssistant: 0, noAssistantTokens: 0 };

  constructor(format: Partial<FormatConfig> | FormatConfig, tokenizer: TextTokenizer, opts: FormatterOptions = {}) {
    this.format = resolveFormat(format as Partial<FormatConfig>);
    if (this.format.chat_template == null && opts.chatTemplate != null) this.format.chat_template = opts.chatTemplate;
    if (this.format.enable_thinking == null && opts.enableThinking != null)
      this.format.enable_thinking = opts.enableThinking;
    if (this.format.image_key || this.format.video_key) {
      throw new DataError('multi-modal SFT/DPO data (format.image_key / format.video_key) is not supported here');
    }
    this.renderer = new ChatRenderer(tokenizer, this.format.chat_template);
  }

  abstract formatRow(row: Record<string, unknown>, source?: RowSource): Experience;

  protected fail(source: RowSource | undefined, message: string, key?: string): never {
    throw new DataError(source ? `${describeSource(source)}: ${message}` : message, source?.file, source?.line, key);
  }

  protected value(row: Record<string, unknown>, key: string, source: RowSource | undefined): unknown {
    const v = row[key];
    if (v === undefined || v === null)
      this.fail(source, `row has no '${key}'${keyRole(this.format, key)} (null or absent)`, key);
    return v;
  }

  /** A message list (or, where Trinity json.loads it, its JSON string). */
  protected messages(
    row: Record<string, unknown>,
    key: string,
    source: RowSource | undefined,
    allowJson: boolean,
  ): Message[] {
    let v = this.value(row, key, source);
    if (typeof v === 'string' && allowJson) {
      try {
        v = JSON.parse(v);
      } catch {
        this.fail(
          source,
          `'${key}'${keyRole(this.format, key)} is a string but not valid JSON ("Invalid JSON format for messages")`,
          key,
        );
      }
    }
    if (!Array.isArray(v) || !v.every(isMessage)) {
      this.fail(
        source,
        `'${key}'${keyRole(this.format, key)} must be a list of messages with a string 'role'${allowJson ? ' (or its JSON string)' : ''}`,
        key,
      );
    }
    return v as Message[];
  }

  protected system(row: Record<string, unknown>, source: RowSource | undefined): Message[] {
    if (this.format.system_prompt_key != null)
      return [{ role: 'system', content: this.value(row, this.format.system_prompt_key, source) }];
    if (this.format.system_prompt != null) return [{ role: 'system', content: this.format.system_prompt }];
    return [];
  }

  protected checkPrefix(prompt: readonly number[], full: readonly number[]): void {
    for (let i = 0; i < prompt.length; i++) {
      if (full[i] !== prompt[i]) {
        this.stats.promptNotPrefix++;
        return;
      }
    }
  }
}

/** Trinity's `build_mm_message` without media: the prompt as user content ("" → an empty content list). */
function userMessage(prompt: unknown): Message {
  return { role: 'user', content: prompt === '' ? [] : prompt };
}

export class SftFormatter extends RowFormatter {
  private readonly promptType: string;

  constructor(format: Partial<FormatConfig> | FormatConfig, tokenizer: TextTokenizer, opts: FormatterOptions = {}) {
    super(format, tokenizer, opts);
    this.promptType = String(this.format.prompt_type).toLowerCase();
    if (!['messages', 'plaintext', 'chatpair'].includes(this.promptType))
      throw new DataError(`Unsupported prompt_type: ${this.format.prompt_type}`);
    if (
      this.format.enable_concatenated_multi_turn &&
      this.format.chat_template &&
      /\{%-?\s*generation\s*-?%\}/.test(this.format.chat_template)
    ) {
      throw new DataError(
        'format.chat_template uses {% generation %} (assistant masks from the template), which is not supported here',
      );
    }
  }

  private tools(row: Record<string, unknown>, source: RowSource | undefined): unknown[] | null {
    let t = row[this.format.tools_key];
    if (typeof t === 'string') {
      if (t === '') return null;
      try {
        t = JSON.parse(t);
      } catch {
        this.fail(
          source,
          `'${this.format.tools_key}' (format.tools_key) is not valid JSON ("Invalid JSON format for tools")`,
          this.format.tools_key,
        );
      }
    }
    if (t === null || t === undefined) return null;
    if (!Array.isArray(t))
      this.fail(
        source,
        `'${this.format.tools_key}' (format.tools_key) must be a list of tool definitions (or its JSON string)`,
        this.format.tools_key,
      );
    return t;
  }

  /** The conversation a row holds, in the chosen prompt_type. */
  conversation(
    row: Record<string, unknown>,
    source?: RowSource,
  ): { messages: Message[]; tools: unknown[] | null; promptMessages?: Message[] } {
    const f = this.format;
    if (this.promptType === 'messages')
      return { messages: this.messages(row, f.messages_key, source, true), tools: this.tools(row, source) };
    if (this.promptType === 'plaintext') {
      const messages = [
        ...this.system(row, source),
        userMessage(this.value(row, f.prompt_key, source)),
        { role: 'assistant', content: this.value(row, f.response_key, source) },
      ];
      return { messages, tools: this.tools(row, source) };
    }
    // chatpair (before v0.3.1): a single message counts as a list of one.
    const asList = (key: string) => {
      const v = this.value(row, key, source);
      const list = Array.isArray(v) ? v : [v];
      if (!list.every(isMessage))
        this.fail(
          source,
          `'${key}'${keyRole(f, key)} must be a message or a list of messages (prompt_type chatpair)`,
          key,
        );
      return list as Message[];
    };
    const promptMessages = asList(f.prompt_key);
    return { messages: [...promptMessages, ...asList(f.response_key)], tools: null, promptMessages };
  }

  formatRow(row: Record<string, unknown>, source?: RowSource): Experience {
    const { messages, tools, promptMessages } = this.conversation(row, source);
    if (messages.length === 0)
      this.fail(source, 'the conversation is empty ("Messages should not be empty")', this.format.messages_key);
    const info: Record<string, unknown> = { messages };
    if (tools) info.tools = tools;
    if (source) info.source = describeSource(source);
    if (this.format.enable_concatenated_multi_turn && this.promptType === 'messages') {
      const { tokens, mask, promptLength } = this.multiTurn(messages, tools);
      if (!mask.includes(1)) this.stats.noAssistantTokens++;
      return { eid: newEid(), tokens, promptLength, actionMask: mask.slice(promptLength), info };
    }
    if (messages[messages.length - 1].role !== 'assistant') this.stats.lastNotAssistant++;
    const tokens = this.renderer.tokenize(messages, { addGenerationPrompt: false, tools });
    const prompt = this.renderer.tokenize(promptMessages ?? messages.slice(0, -1), {
      addGenerationPrompt: true,
      tools,
    });
    const promptLength = prompt.length;
    if (promptLength <= 0 || tokens.length <= promptLength) {
      this.fail(
        source,
        `Token ids must be larger than the prompt length. Got len(tokens)=${tokens.length}, prompt_length=${promptLength}.`,
      );
    }
    this.checkPrefix(prompt, tokens);
    return {
      eid: newEid(),
      tokens,
      promptLength,
      actionMask: new Array<number>(tokens.length - promptLength).fill(1),
      info,
    };
  }

  /** `tokenize_and_mask_messages_default`. */
  private multiTurn(
    messages: Message[],
    tools: unknown[] | null,
  ): { tokens: number[]; mask: number[]; promptLength: number } {
    const opts = { tools, enableThinking: this.format.enable_thinking };
    let start = 0;
    if (this.renderer.templateText.includes('<think>')) {
      for (let i = messages.length - 1; i >= 0; i--) {
        if (messages[i].role === 'user') {
          start = i;
          break;
        }
      }
    }
    const generation: Message[][] = [];
    const response: Message[][] = [];
    for (let i = start; i < messages.length; i++) {
      if (messages[i].role === 'assistant') {
        generation.push(messages.slice(0, i));
        response.push(messages.slice(0, i + 1));
      } else if (i === messages.length - 1) response.push(messages);
    }
    const responseIds = response.map((m) => this.renderer.tokenize(m, { ...opts, addGenerationPrompt: false }));
    const tokens = responseIds[responseIds.length - 1];
    const mask = new Array<number>(tokens.length).fill(0);
    if (generation.length === 0) return { tokens, mask, promptLength: 0 };
    const firstEmpty = generation[0].length === 0;
    if (firstEmpty) generation[0] = response[0];
    const promptIds = generation.map((m) => this.renderer.tokenize(m, { ...opts, addGenerationPrompt: true }));
    if (firstEmpty) promptIds[0] = [];
    for (let t = 0; t < Math.min(promptIds.length, responseIds.length); t++) {
      for (let j = promptIds[t].length; j < Math.min(responseIds[t].length, mask.length); j++) mask[j] = 1;
    }
    const first = mask.indexOf(1);
    return { tokens, mask, promptLength: first < 0 ? 0 : first };
  }
}

export class DpoFormatter extends RowFormatter {
  private readonly promptType: string;

  constructor(format: Partial<FormatConfig> | FormatConfig, tokenizer: TextTokenizer, opts: FormatterOptions = {}) {
    super(format, tokenizer, opts);
    this.promptType = String(this.format.prompt_type).toLowerCase();
    if (this.promptType !== 'messages' && this.promptType !== 'plaintext')
      throw new DataError(`Unsupported prompt_type: ${this.format.prompt_type}`);
  }

  conversation(
    row: Record<string, unknown>,
    source?: RowSource,
  ): { prompt: Message[]; chosen: Message[]; rejected: Message[] } {
    const f = this.format;
    if (this.promptType === 'plaintext') {
      return {
        prompt: [...this.system(row, source), { role: 'user', content: this.value(row, f.prompt_key, source) }],
        chosen: [{ role: 'assistant', content: this.value(row, f.chosen_key, source) }],
        rejected: [{ role: 'assistant', content: this.value(row, f.rejected_key, source) }],
      };
    }
    return {
      prompt: this.messages(row, f.messages_key, source, false),
      chosen: this.messages(row, f.chosen_key, source, false),
      rejected: this.messages(row, f.rejected_key, source, false),
    };
  }

  formatRow(row: Record<string, unknown>, source?: RowSource): Experience {
    const { prompt, chosen, rejected } = this.conversation(row, source);
    const promptIds = this.renderer.tokenize(prompt, { addGenerationPrompt: true });
    const chosenFull = this.renderer.tokenize([...prompt, ...chosen], { addGenerationPrompt: false });
    const rejectedFull = this.renderer.tokenize([...prompt, ...rejected], { addGenerationPrompt: false });
    this.checkPrefix(promptIds, chosenFull);
    this.checkPrefix(promptIds, rejectedFull);
    const info: Record<string, unknown> = {
      chosenMessages: [...prompt, ...chosen],
      rejectedMessages: [...prompt, ...rejected],
    };
    if (source) info.source = describeSource(source);
    return {
      eid: newEid(),
      tokens: promptIds,
      promptLength: promptIds.length,
      chosen: chosenFull.slice(promptIds.length),
      rejected: rejectedFull.slice(promptIds.length),
      info,
    };
  }
}

export function createFormatter(
  schema: TrainSchema,
  format: Partial<FormatConfig> | FormatConfig,
  tokenizer: TextTokenizer,
  opts: FormatterOptions = {},
): SftFormatter | DpoFormatter {
  return schema === 'dpo' ? new DpoFormatter(format, tokenizer, opts) : new SftFormatter(format, tokenizer, opts);
}

/**
 * Cuts an experience to `maxLength` tokens (prompt + response; DPO: prompt + the longer answer). Returns the
 * (possibly new) experience and whether it was cut, or null when the prompt alone reaches the limit.
 */
export function truncateExperience(
  exp: Experience,
  maxLength: number,
): { experience: Experience; truncated: boolean } | null {
  if (exp.promptLength >= maxLength) return null;
  const room = maxLength - exp.promptLength;
  if (exp.chosen !== undefined || exp.rejected !== undefined) {
    const cut = (exp.chosen?.length ?? 0) > room || (exp.rejected?.length ?? 0) > room;
    if (!cut) return { experience: exp, truncated: false };
    return {
      experience: {
        ...exp,
        chosen: exp.chosen?.slice(0, room),
        rejected: exp.rejected?.slice(0, room),
        truncated: true,
      },
      truncated: true,
    };
  }
  if (exp.tokens.length <= maxLength) return { experience: exp, truncated: false };
  return {
    experience: {
      ...exp,
      tokens: exp.tokens.slice(0, maxLength),
      actionMask: exp.actionMask?.slice(0, room),
      truncated: true,
    },
    truncated: true,
  };
}

/** Reads an SFT/DPO dataset and converts every row. */
export async function readTrainData(dataset: TrainDatasetInput, opts: TrainDataOptions): Promise<TrainDataResult> {
  const schemaRaw = opts.schemaType ?? dataset.schema_type ?? null;
  if (schemaRaw !== 'sft' && schemaRaw !== 'dpo') {
    throw new DataError(
      schemaRaw === null
        ? `dataset '${dataset.name ?? ''}': no schema_type (sft or dpo); Trinity sets it from algorithm_type`
        : `dataset '${dataset.name ?? ''}': schema_type '${schemaRaw}' is not read from files (sft and dpo are)`,
    );
  }
  const schemaType: TrainSchema = schemaRaw;
  const formatter = createFormatter(schemaType, (dataset.format ?? {}) as Partial<FormatConfig>, opts.tokenizer, opts);
  const onInvalid = opts.onInvalidRow ?? 'error';
  const loaded = await loadDatasetRows(
    {
      path: dataset.path,
      split: dataset.split,
      subset_name: dataset.subset_name,
      storage_type: dataset.storage_type,
      name: dataset.name,
      kind: `${schemaType.toUpperCase()} dataset`,
    },
    { baseDir: opts.baseDir, onInvalidRow: onInvalid },
  );
  const warnings = [...loaded.warnings];
  const skipped = [...loaded.skipped];
  const experiences: Experience[] = [];
  let truncated = 0;
  let promptTooLong = 0;
  const max = opts.maxLength ?? null;
  if (max !== null && (!Number.isInteger(max) || max <= 0))
    throw new DataError(`maxLength must be a positive integer, got ${max}`);
  for (const [index, { row, source }] of loaded.rows.entries()) {
    let exp: Experience;
    try {
      exp = formatter.formatRow(row, source);
    } catch (e) {
      if (onInvalid === 'error' || !(e instanceof DataError)) throw e;
      skipped.push({ source, key: e.key, reason: e.message });
      continue;
    }
    exp.info = { ...exp.info, index };
    if (max !== null) {
      const t = truncateExperience(exp, max);
      if (t === null) {
        promptTooLong++;
        const reason = `${describeSource(source)}: the prompt alone has ${exp.promptLength} tokens, at least maxLength (${max}): nothing left to train on`;
        if (onInvalid === 'error') throw new DataError(reason, source.file, source.line);
        skipped.push({ source, reason });
        continue;
      }
      if (t.truncated) truncated++;
      exp = t.experience;
    }
    experiences.push(exp);
  }
  const n = loaded.rows.length;
  if (truncated > 0)
    warnings.push(`${truncated} of ${n} samples were longer than ${max} tokens and were truncated to it`);
  if (promptTooLong > 0)
    warnings.push(`${promptTooLong} of ${n} samples were skipped: their prompt alone reaches ${max} tokens`);
  const st = formatter.stats;
  if (st.promptNotPrefix > 0) {
    warnings.push(
      `${st.promptNotPrefix} sample(s): the prompt's tokens are not a prefix of the conversation's tokens (the chat template renders earlier turns differently); Trinity splits at the prompt's length regardless`,
    );
  }
  if (st.lastNotAssistant > 0)
    warnings.push(
      `${st.lastNotAssistant} SFT sample(s) do not end with an assistant message; Trinity trains on their last message anyway`,
    );
  if (st.noAssistantTokens > 0)
    warnings.push(`${st.noAssistantTokens} multi-turn SFT sample(s) have no assistant tokens to train on`);
  return {
    schemaType,
    experiences,
    skipped,
    truncated,
    warnings,
    format: formatter.format,
    files: loaded.files,
    columns: loaded.columns,
  };
}

/**
 * Batches of a train dataset as the trainer reads them (ExperienceFileReader): `batchSize` = `train_batch_size`,
 * `total_epochs` or `total_steps`, the last incomplete batch dropped, rows picked by the buffer's data_selector.
 */
export function trainBatchReader(
  result: TrainDataResult,
  opts: {
    batchSize: number;
    totalEpochs?: number;
    totalSteps?: number | null;
    selector?: Partial<DataSelectorConfig> | null;
    offset?: number;
  },
): BatchReader<Experience> {
  return new BatchReader(result.experiences, {
    name: `${result.schemaType} dataset`,
    batchSize: opts.batchSize,
    totalEpochs: opts.totalEpochs,
    totalSteps: opts.totalSteps,
    dropLast: true,
    offset: opts.offset,
    selector: opts.selector ?? { selector_type: 'sequential' },
  });
}
