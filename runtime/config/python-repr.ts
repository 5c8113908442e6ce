/** How Python's str() prints the values OmegaConf hands to string fields and string interpolations. */

export function pyStr(v: unknown): string {
  if (v === null || v === undefined) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (typeof v === 'number') return Number.isInteger(v) && !Object.is(v, -0) ? String(v) : pyFloat(v);
  if (typeof v === 'string') return v;
  return JSON.stringify(v);
}

/** Python's repr of a float: shortest round-trip digits, exponent form below 1e-4 and from 1e16. */
export function pyFloat(n: number): string {
  if (Number.isNaN(n)) return 'nan';
  if (!Number.isFinite(n)) return n > 0 ? 'inf' : '-inf';
  if (n === 0) return Object.is(n, -0) ? '-0.0' : '0.0';
  const [mant, expText] = n.toExponential().split('e');
  const exp = Number(expText);
  if (exp < -4 || exp >= 16) {
    const sign = exp < 0 ? '-' : '+';
    return `${mant}e${sign}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  const digits = mant.replace('-', '').replace('.', '');
  const neg = n < 0 ? '-' : '';
  let s: string;
  if (exp >= 0) {
    const intPart = digits.slice(0, exp + 1).padEnd(exp + 1, '0');
    const frac = digits.slice(exp + 1);
    s = `${intPart}.${frac || '0'}`;
  } else {
    s = `0.${'0'.repeat(-exp - 1)}${digits}`;
  }
  return neg + s;
}
