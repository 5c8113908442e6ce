// The agent demo's tokenizer: a character BPE whose merges are learned from the texts the model reads and writes (the
// demonstrations' messages and Trinity's invalid-move hint), written as tokenizer.json + tokenizer_config.json for
// `model create --vocab DIR`. Its pieces are lines, not words, and each grid row (` _ \t P \t … \t\n`) is a piece
// of its own: a line the environment repeats becomes one token (Trinity's system message 26 tokens instead of 275,
// the hint one), and a row of the map one token that says which cells are P, G and holes. Under GPT-2's word
// pieces a row was 8 tokens, and the 2-layer model never learned where P and G are (issue 31 §4, docs/runtime.md
// "The agent demo"). The text is Trinity's either way: only how it is cut into tokens is the demo's.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildBpeTokenizer } from '../../../runtime/engine/tokenizer/build.ts';
import { trainBpe } from '../../../runtime/engine/tokenizer/train-bpe.ts';
import { FROZEN_LAKE_INVALID_HINT } from '../../../runtime/rft/environments/frozen-lake/frozen-lake-game.ts';

/** Every character the environment can show (the grid's √ and X included) or the model may need to write. */
const EXTRA_CHARS = ' \t\n_OGPX√`' + 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,:;!?()|+-\'"';
/** A run of grid cells with its line end; else a line with its line end; else a bare line end. */
export const DEMO_SPLIT_PATTERN = '(?: [_OGPX√] \\t)+\\n?|[^\\n]+\\n?|\\n';

/** Learns the merges from sft.jsonl's messages (roles included, as the chat template writes them) into `outDir`. */
export function writeDemoTokenizer(sftPath, outDir, maxMerges = 6000) {
  const texts = [];
  for (const line of readFileSync(sftPath, 'utf8').split('\n'))
    if (line.trim()) for (const m of JSON.parse(line).messages) texts.push(m.role, m.content);
  // The demonstrations never move invalidly; GRPO's episodes do, and the workflow then sends the hint.
  texts.push(FROZEN_LAKE_INVALID_HINT, FROZEN_LAKE_INVALID_HINT);
  const { alphabet, merges } = trainBpe(texts, {
    maxMerges,
    extraChars: EXTRA_CHARS,
    splitPattern: DEMO_SPLIT_PATTERN,
  });
  const files = buildBpeTokenizer(alphabet, merges, DEMO_SPLIT_PATTERN);
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, 'tokenizer.json'), JSON.stringify(files.tokenizerJson));
  writeFileSync(join(outDir, 'tokenizer_config.json'), JSON.stringify(files.tokenizerConfig, null, 2));
  return { vocab: alphabet.length + merges.length + 4 };
}
