/** How the dataset readers word a caught error and a byte count in their messages. */

const MiB = 1024 * 1024;

export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

export function formatBytes(n: number): string {
  return n >= MiB ? `${Math.round((n / MiB) * 10) / 10} MiB` : n >= 1024 ? `${Math.round(n / 1024)} KiB` : `${n} bytes`;
}
