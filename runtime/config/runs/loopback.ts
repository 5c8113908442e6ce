/**
 * Whether a listen address only accepts connections from this machine: `localhost`, 127.0.0.0/8 and `::1`
 * (also IPv4-mapped 127.x). Anything else, wildcards and host names included, may be reachable from the network.
 */
import { isIP } from 'node:net';

export function isLoopbackAddress(address: string): boolean {
  const a = address
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1');
  if (a === 'localhost') return true;
  if (isIP(a) === 4) return a.startsWith('127.');
  if (isIP(a) !== 6) return false;
  // The URL parser writes an IPv6 address in its canonical form (::1, ::ffff:7f00:1).
  const canonical = new URL(`http://[${a}]/`).hostname.slice(1, -1);
  return canonical === '::1' || /^::ffff:7f[0-9a-f]{2}:/.test(canonical);
}
