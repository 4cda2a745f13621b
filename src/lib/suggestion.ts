import { closest, distance } from "fastest-levenshtein";

/**
 * "did you mean `x`?": the known name closest to `unknown` when it is within a third of the unknown
 * one's length (at least 1 edit, at most 3); else the one known name that holds it or that it holds
 * as a whole word part (`threshold` for `alert_threshold`, `next_folio` for `next_folio_number`);
 * else undefined. Unknown fields, misspelt choices and event types use it.
 */
export function suggestion(unknown: string, known: readonly string[]): string | undefined {
  if (known.length === 0) return undefined;
  const best = closest(unknown, known as string[]);
  const limit = Math.min(3, Math.max(1, Math.floor(unknown.length / 3)));
  if (distance(unknown.toLowerCase(), best.toLowerCase()) <= limit) return best;
  return partOf(unknown, known);
}

/** The only known name of which `unknown` is a whole part (split on `_`, `.`, `-`), or which is one of `unknown`'s. */
function partOf(unknown: string, known: readonly string[]): string | undefined {
  const u = unknown.toLowerCase();
  if (u.length < 4) return undefined;
  const holds = (whole: string, part: string) => `_${whole.replace(/[.-]/g, "_")}_`.includes(`_${part.replace(/[.-]/g, "_")}_`);
  const hits = known.filter((k) => {
    const l = k.toLowerCase();
    return l !== u && (holds(l, u) || (l.length >= 4 && holds(u, l)));
  });
  return hits.length === 1 ? hits[0] : undefined;
}
