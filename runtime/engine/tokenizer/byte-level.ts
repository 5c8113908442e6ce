/**
 * GPT-2's byte-to-unicode map (ByteLevel pre-tokenizer and decoder): printable Latin-1 bytes map to themselves, the
 * other 68 bytes to U+0100 upwards, so that every byte is one visible character in tokenizer.json.
 */
export function bytesToUnicode(): string[] {
  const printable = (b: number): boolean =>
    (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  const out: string[] = new Array<string>(256);
  let shifted = 0;
  for (let b = 0; b < 256; b++) out[b] = String.fromCharCode(printable(b) ? b : 256 + shifted++);
  return out;
}
