import { closest, distance } from "fastest-levenshtein";

/**
 * "did you mean `x`?": the known name closest to `unknown` when it is within a third of the unknown
 * one's length (at least 1 edit, at most 3), else undefined. Unknown fields, misspelt choices and
 * event types use it.
 */
export function suggestion(unknown: string, known: readonly string[]): string | undefined {
  if (known.length === 0) return undefined;
  const best = closest(unknown, known as string[]);
  const limit = Math.min(3, Math.max(1, Math.floor(unknown.length / 3)));
  return distance(unknown.toLowerCase(), best.toLowerCase()) <= limit ? best : undefined;
}
