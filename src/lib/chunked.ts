/**
 * `items` in consecutive slices of at most `size` (the last may be shorter). D1 binds at most 100
 * parameters per statement and a queue batch holds at most 100 messages, so set-based statements and
 * sends go in chunks.
 */
export function chunked<T>(items: readonly T[], size: number): T[][] {
  if (!(size >= 1)) throw new RangeError("chunk size must be at least 1");
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
