// The agent demo's tokenizer: a character BPE whose merges are learned from the demonstrations' messages, so that
// Trinity's long system prompt is a few hundred tokens rather than ~1,100 characters (the model stays tiny and an
// episode's context short). Written as tokenizer.json + tokenizer_config.json for `model create --vocab DIR`.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildBpeTokenizer } from '../../../runtime/engine/tokenizer/build.ts';
import { trainBpe } from '../../../runtime/engine/tokenizer/train-bpe.ts';

/** Every character the environment can show (the grid's √ and X included) or the model may need to write. */
const EXTRA_CHARS = ' \t\n_OGPX√`' + 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,:;!?()|+-\'"';

/** Learns the merges from sft.jsonl's messages (roles included, as the chat template writes them) into `outDir`. */
export function writeDemoTokenizer(sftPath, outDir, maxMerges = 400) {
  const texts = [];
  for (const line of readFileSync(sftPath, 'utf8').split('\n'))
    if (line.trim()) for (const m of JSON.parse(line).messages) texts.push(m.role, m.content);
  const { alphabet, merges } = trainBpe(texts, { maxMerges, extraChars: EXTRA_CHARS });
  const files = buildBpeTokenizer(alphabet, merges);
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, 'tokenizer.json'), JSON.stringify(files.tokenizerJson));
  writeFileSync(join(outDir, 'tokenizer_config.json'), JSON.stringify(files.tokenizerConfig, null, 2));
  return { vocab: alphabet.length + merges.length + 4 };
}
