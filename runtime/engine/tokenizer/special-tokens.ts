/** The special token ids a tokenizer_config (and generation_config) names: EOS, padding, BOS. */
import { TokenizerError } from './api';
import { generationEosIds, type JsonDocument } from '../json-file';

export interface SpecialTokens {
  eosTokenIds: number[];
  padTokenId: number;
  bosTokenId: number | undefined;
  /** The strings chat templates receive as `bos_token` / `eos_token`. */
  bosToken: string | undefined;
  eosToken: string | undefined;
}

/** A special token entry: a string, null, or (older configs) an AddedToken object `{ "content": ... }`. */
function tokenContent(config: JsonDocument, key: string): string | undefined {
  const value = config.value[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  if (
    typeof value === 'object' &&
    !Array.isArray(value) &&
    typeof (value as { content?: unknown }).content === 'string'
  ) {
    return (value as { content: string }).content;
  }
  throw new TokenizerError(`${config.origin}: "${key}" must be a string, null or an object with "content"`);
}

function tokenId(
  config: JsonDocument,
  key: string,
  tokenToId: (t: string) => number | undefined,
): { token: string; id: number } | undefined {
  const token = tokenContent(config, key);
  if (token === undefined) return undefined;
  const id = tokenToId(token);
  if (id === undefined)
    throw new TokenizerError(`${config.origin}: ${key} ${JSON.stringify(token)} is not in the tokenizer's vocabulary`);
  return { token, id };
}

export function resolveSpecialTokens(
  source: string,
  config: JsonDocument,
  generationConfig: JsonDocument | undefined,
  tokenToId: (t: string) => number | undefined,
): SpecialTokens {
  const eos = tokenId(config, 'eos_token', tokenToId);
  const bos = tokenId(config, 'bos_token', tokenToId);
  const pad = tokenId(config, 'pad_token', tokenToId);
  const eosTokenIds = eos ? [eos.id] : [];
  const generationEos = generationConfig ? generationEosIds(generationConfig, TokenizerError) : undefined;
  for (const id of generationEos ?? []) if (!eosTokenIds.includes(id)) eosTokenIds.push(id);
  const padTokenId = pad?.id ?? eosTokenIds[0];
  if (padTokenId === undefined) {
    throw new TokenizerError(
      `${source}: no pad_token and no eos_token (in ${config.origin}${generationConfig ? ` or ${generationConfig.origin}` : ''}), so there is no id to pad or stop with`,
    );
  }
  return { eosTokenIds, padTokenId, bosTokenId: bos?.id, bosToken: bos?.token, eosToken: eos?.token };
}
