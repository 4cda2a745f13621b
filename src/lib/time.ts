const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-CA", {
      timeZone,
      year: "numeric", month: "2-digit", day: "2-digit",
      hour: "2-digit", minute: "2-digit", second: "2-digit",
      hourCycle: "h23",
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** `2026-11-22T03:00:00`: an instant as wall-clock time in a zone, without offset (DECISIONS 14). */
export function toLocalDateTime(instant: string | Date, timeZone: string): string {
  const date = typeof instant === "string" ? new Date(instant) : instant;
  const parts = Object.fromEntries(formatter(timeZone).formatToParts(date).map((p) => [p.type, p.value]));
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}`;
}

export function isValidTimeZone(tz: string): boolean {
  if (!/^[A-Za-z_]+(?:\/[A-Za-z0-9_+-]+)*$/.test(tz) && tz !== "UTC") return false;
  try {
    new Intl.DateTimeFormat("en", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** A real calendar date in `YYYY-MM-DD` form (rejects 2026-02-30). */
/** How an API answer names the form of a calendar day (query filters, company and invoice dates). */
export const DATE_FORM = "A date as YYYY-MM-DD, e.g. 2026-11-27.";

export function isRealDate(value: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(y, mo - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d && y >= 1900;
}

/** A well-formed BCP 47 language tag, returned in canonical case (`es-cl` -> `es-CL`). */
export function canonicalLanguageTag(tag: string): string | null {
  try {
    const [canonical] = Intl.getCanonicalLocales(tag);
    return canonical ?? null;
  } catch {
    return null;
  }
}

/**
 * The last instant (ISO, UTC) of a local calendar day in a zone: "valid until 2026-05-31" in
 * Santiago means until 23:59:59.999 there, whatever the offset (-03:00 or -04:00) is that day.
 */
export function endOfLocalDay(date: string, timeZone: string): string {
  let best: number | null = null;
  for (let offsetHours = -14; offsetHours <= 14; offsetHours++) {
    const sign = offsetHours < 0 ? "-" : "+";
    const abs = String(Math.abs(offsetHours)).padStart(2, "0");
    const candidate = Date.parse(`${date}T23:59:59.999${sign}${abs}:00`);
    if (toLocalDateTime(new Date(candidate), timeZone).slice(0, 10) === date && (best === null || candidate > best)) best = candidate;
  }
  return new Date(best ?? Date.parse(`${date}T23:59:59.999Z`)).toISOString();
}

/** Whole seconds left until the deadline (0 once passed), or null when the deadline is unknown. */
export function secondsLeft(deadline: string | null, now = Date.now()): number | null {
  if (!deadline) return null;
  return Math.max(0, Math.floor((Date.parse(deadline) - now) / 1000));
}
