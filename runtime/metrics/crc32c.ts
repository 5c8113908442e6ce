/**
 * CRC-32C (Castagnoli), as TFRecord framing uses it, and TFRecord's "masked" form of it. One copy for the
 * TensorBoard writer (runtime/rft/monitor) and the event-file reader here.
 */

const TABLE = (() => {
  const t = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    t[i] = c >>> 0;
  }
  return t;
})();

export function crc32c(data: Uint8Array): number {
  let c = 0xffffffff;
  for (let i = 0; i < data.length; i++) c = TABLE[(c ^ data[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** TFRecord stores `rotate_right(crc, 15) + 0xa282ead8`, so that CRCs of CRCs do not degenerate. */
export function maskedCrc32c(data: Uint8Array): number {
  const c = crc32c(data);
  return ((((c >>> 15) | (c << 17)) >>> 0) + 0xa282ead8) >>> 0;
}
