/**
 * Folio (CAF range) rules, pure: no bindings, no storage, no clock. The FolioAllocator Durable
 * Object loads its state, asks these functions for a plan and writes the plan in one synchronous
 * transaction.
 *
 * Representation ("used" without one row per folio):
 * - Each range keeps a `cursor`: every folio in [from, cursor) is consumed (allocated to a document,
 *   marked used by a next-folio move, or annulled). Folios in [cursor, to] are available unless they
 *   are in the annulled set. The cursor is kept normalised: it never rests on an annulled folio.
 * - Annulled folios are explicit (one entry each); only those >= their range's cursor matter here.
 * - A folio is consumed only by an allocation, a next-folio move or an annulment; cursors only move
 *   forward, so a consumed folio never becomes available again (folios are never reused).
 *
 * Specification: service-interface §2.6, §3 (folio rules 1-4), §4.7 (set next folio), §7.
 */
import { issuingCountry } from "../countries";

export interface FolioRange {
  /** CAF id (the range's identifier). */
  id: string;
  /** Inclusive bounds (enumeration_from, enumeration_end). */
  from: number;
  to: number;
  active: boolean;
  /** Authorisation date of the CAF (FA), ISO 8601. */
  authorizedAt: string;
  /** Instant after which the range may no longer be used (ISO 8601), or null when it never expires. */
  expiresAt: string | null;
  /** Lowest folio not yet consumed; from <= cursor <= to + 1. */
  cursor: number;
}

/** Folios annulled explicitly. Only members >= the cursor of their range are looked at. */
export type AnnulledSet = ReadonlySet<number>;

/** Upper bound of a folio number (the SII's Folio is at most 10 digits). */
export const MAX_FOLIO = 9_999_999_999;

/** Days before a range's expiry at which an ENU "EXPIRING" alert is raised. */
export const EXPIRY_WARNING_DAYS = 30;

export function isValidFolio(n: unknown): n is number {
  return typeof n === "number" && Number.isSafeInteger(n) && n >= 1 && n <= MAX_FOLIO;
}

/**
 * Expiry of a CAF authorised on `authorizedAt` (FA, `YYYY-MM-DD` or an ISO instant) for a document
 * type: the country's expiry date for the types whose CAF expires (6 calendar months later in Chile),
 * null (never) for the others. The result is 00:00 UTC of that day, i.e. a few hours
 * before midnight in Chile: deliberately on the safe side (a folio is never stamped on the last hours
 * of a doubtful day). Returns undefined when `authorizedAt` is not a date.
 */
export function cafExpiresAt(documentType: string, authorizedAt: string): string | null | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})/.exec(authorizedAt);
  if (!m) return undefined;
  const mo = Number(m[2]);
  const d = Number(m[3]);
  if (mo < 1 || mo > 12 || d < 1 || d > 31) return undefined;
  const expiry = issuingCountry().numberRanges.expiryDate(Number(documentType), m[0]);
  return expiry === null ? null : `${expiry}T00:00:00.000Z`;
}

export function expiresAtMs(range: Pick<FolioRange, "expiresAt">): number | null {
  if (range.expiresAt === null) return null;
  const t = Date.parse(range.expiresAt);
  return Number.isNaN(t) ? null : t;
}

/** A range is expired once `now` is past its expiry instant. */
export function isExpired(range: Pick<FolioRange, "expiresAt">, now: number): boolean {
  const t = expiresAtMs(range);
  return t !== null && t < now;
}

/** Active and not expired: the ranges allocation and next-folio resolution draw from. */
export function isUsable(range: FolioRange, now: number): boolean {
  return range.active && !isExpired(range, now);
}

function byFrom(a: FolioRange, b: FolioRange): number {
  return a.from - b.from;
}

/** First folio >= start in the range that is neither consumed nor annulled, or null. */
export function firstAvailableInRange(range: FolioRange, annulled: AnnulledSet, start: number): number | null {
  let f = Math.max(start, range.cursor, range.from);
  while (f <= range.to && annulled.has(f)) f++;
  return f <= range.to ? f : null;
}

/** Cursor value after consuming everything below `target` (skips annulled folios at the target). */
export function normalisedCursor(range: FolioRange, annulled: AnnulledSet, target: number): number {
  return firstAvailableInRange(range, annulled, target) ?? range.to + 1;
}

/** Annulled folios inside [lo, hi) of a range (lo, hi clamped to the range). */
export function countAnnulledBetween(range: FolioRange, annulled: AnnulledSet, lo: number, hi: number): number {
  const a = Math.max(lo, range.from);
  const b = Math.min(hi, range.to + 1);
  if (b <= a) return 0;
  let n = 0;
  if (annulled.size < b - a) {
    for (const f of annulled) if (f >= a && f < b) n++;
  } else {
    for (let f = a; f < b; f++) if (annulled.has(f)) n++;
  }
  return n;
}

/** Folios still available in one range (ignores active/expired). */
export function remainingInRange(range: FolioRange, annulled: AnnulledSet): number {
  if (range.cursor > range.to) return 0;
  return range.to - range.cursor + 1 - countAnnulledBetween(range, annulled, range.cursor, range.to + 1);
}

/**
 * HTTP status of every folio error code the allocator returns. The three ENUMERATION_* codes are
 * the specification's (§4.7, §7); the others are ours for operations the spec does not detail.
 */
export const FOLIO_ERROR_STATUS = {
  ENUMERATION_NOT_FOUND: 404,
  ENUMERATION_OUT_OF_RANGE: 400,
  ENUMERATION_NO_FOLIOS_AVAILABLE_FROM: 400,
  FOLIO_NUMBER_INVALID: 400,
  FOLIO_NOT_IN_RANGE: 400,
  FOLIO_ALREADY_ANNULLED: 409,
  FOLIO_ALREADY_USED: 409,
  FOLIO_RANGE_INVALID: 400,
  FOLIO_RANGE_OVERLAP: 409,
  FOLIO_RANGE_DUPLICATE: 409,
  FOLIO_RANGE_NOT_FOUND: 404,
  THRESHOLD_INVALID: 400,
} as const;

export type FolioErrorCode = keyof typeof FOLIO_ERROR_STATUS;

// ---------------------------------------------------------------------------------------------
// Ranges

export type AddRangeError =
  | { code: "FOLIO_RANGE_INVALID"; message: string }
  | { code: "FOLIO_RANGE_OVERLAP"; message: string; conflictingCafId: string }
  | { code: "FOLIO_RANGE_DUPLICATE"; message: string };

export interface RangeInput {
  cafId: string;
  from: number;
  to: number;
  authorizedAt: string;
  expiresAt: string | null;
}

/**
 * Checks a new range against the existing ones (active or not: a folio number belongs to at most
 * one CAF of a document type, forever). Returns null when it may be added.
 * The same cafId with the same bounds is reported as a duplicate; the caller may treat that as
 * an idempotent repeat.
 */
export function checkNewRange(existing: readonly FolioRange[], input: RangeInput): AddRangeError | null {
  if (typeof input.cafId !== "string" || input.cafId.length < 1 || input.cafId.length > 200) {
    return { code: "FOLIO_RANGE_INVALID", message: "cafId must be a string of 1 to 200 characters" };
  }
  if (!isValidFolio(input.from) || !isValidFolio(input.to)) {
    return { code: "FOLIO_RANGE_INVALID", message: `from and to must be integers between 1 and ${MAX_FOLIO}` };
  }
  if (input.from > input.to) {
    return { code: "FOLIO_RANGE_INVALID", message: `from (${input.from}) is greater than to (${input.to})` };
  }
  if (typeof input.authorizedAt !== "string" || Number.isNaN(Date.parse(input.authorizedAt))) {
    return { code: "FOLIO_RANGE_INVALID", message: "authorizedAt must be an ISO 8601 date" };
  }
  if (input.expiresAt !== null && (typeof input.expiresAt !== "string" || Number.isNaN(Date.parse(input.expiresAt)))) {
    return { code: "FOLIO_RANGE_INVALID", message: "expiresAt must be an ISO 8601 instant or null" };
  }
  const same = existing.find((r) => r.id === input.cafId);
  if (same) {
    return { code: "FOLIO_RANGE_DUPLICATE", message: `CAF ${input.cafId} is already loaded (${same.from}-${same.to})` };
  }
  const clash = existing.find((r) => r.from <= input.to && input.from <= r.to);
  if (clash) {
    return {
      code: "FOLIO_RANGE_OVERLAP",
      message: `folios ${input.from}-${input.to} overlap CAF ${clash.id} (${clash.from}-${clash.to})`,
      conflictingCafId: clash.id,
    };
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Allocation

export type AllocationFailure = "EXHAUSTED" | "NO_RANGES" | "EXPIRED";

export type AllocationPlan =
  | { ok: true; folio: number; rangeId: string; newCursor: number }
  | { ok: false; reason: AllocationFailure };

/**
 * Next folio for a document: the lowest available folio over the usable ranges (folio rule 1;
 * rule 2 when nothing was ever set: the lowest available folio of the loaded ranges).
 * - NO_RANGES: no active range at all.
 * - EXPIRED: nothing usable, but expired active ranges still hold unused folios.
 * - EXHAUSTED: every active range is used up.
 */
export function planAllocation(ranges: readonly FolioRange[], annulled: AnnulledSet, now: number): AllocationPlan {
  const active = ranges.filter((r) => r.active);
  if (active.length === 0) return { ok: false, reason: "NO_RANGES" };
  for (const r of [...active].sort(byFrom)) {
    if (isExpired(r, now)) continue;
    const folio = firstAvailableInRange(r, annulled, r.cursor);
    if (folio === null) continue;
    return { ok: true, folio, rangeId: r.id, newCursor: normalisedCursor(r, annulled, folio + 1) };
  }
  const expiredLeft = active.some((r) => isExpired(r, now) && remainingInRange(r, annulled) > 0);
  return { ok: false, reason: expiredLeft ? "EXPIRED" : "EXHAUSTED" };
}

/**
 * The range the folio after the first `skip` available ones comes from (in allocation order), or
 * null when fewer than skip + 1 folios are available: where a reservation made behind `skip` others
 * will most likely take its folio.
 */
export function rangeOfNth(ranges: readonly FolioRange[], annulled: AnnulledSet, now: number, skip: number): FolioRange | null {
  let left = skip;
  for (const r of ranges.filter((x) => isUsable(x, now)).sort(byFrom)) {
    const remaining = remainingInRange(r, annulled);
    if (left < remaining) return r;
    left -= remaining;
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Set next folio (§4.7)

export type SetNextFolioError =
  | { code: "ENUMERATION_NOT_FOUND"; status: 404; message: string }
  | { code: "ENUMERATION_OUT_OF_RANGE"; status: 400; message: string }
  | { code: "ENUMERATION_NO_FOLIOS_AVAILABLE_FROM"; status: 400; message: string }
  | { code: "FOLIO_NUMBER_INVALID"; status: 400; message: string };

export type SetNextFolioPlan =
  | {
      ok: true;
      nextNumberToUse: number;
      foliosUpdated: number;
      /** New cursors of the ranges that change. */
      updates: { rangeId: string; cursor: number }[];
    }
  | ({ ok: false } & SetNextFolioError);

/**
 * Plans "set next folio N":
 * 1. N must lie in a loaded, active range;
 * 2. otherwise (outside every range or in a gap) ENUMERATION_OUT_OF_RANGE, no redirect;
 * 3. N inside a range but no available folio >= N: ENUMERATION_NO_FOLIOS_AVAILABLE_FROM;
 * 4. no active range: ENUMERATION_NOT_FOUND.
 * On success every folio < N of every active range is consumed ("marked used"); foliosUpdated
 * counts those that were still available. nextNumberToUse is the first available folio >= N over
 * the usable ranges (greater than N when N is used or annulled; expired ranges are skipped just
 * as allocation skips them).
 */
export function planSetNextFolio(
  ranges: readonly FolioRange[],
  annulled: AnnulledSet,
  n: number,
  now: number,
): SetNextFolioPlan {
  const active = ranges.filter((r) => r.active).sort(byFrom);
  if (active.length === 0) {
    return { ok: false, code: "ENUMERATION_NOT_FOUND", status: 404, message: "the document type has no active folio ranges" };
  }
  if (typeof n !== "number" || !Number.isSafeInteger(n)) {
    return { ok: false, code: "FOLIO_NUMBER_INVALID", status: 400, message: "next_folio_number must be an integer" };
  }
  if (!active.some((r) => r.from <= n && n <= r.to)) {
    const bounds = active.map((r) => `${r.from}-${r.to}`).join(", ");
    return {
      ok: false,
      code: "ENUMERATION_OUT_OF_RANGE",
      status: 400,
      message: `folio ${n} is not inside any active range (${bounds})`,
    };
  }
  let next: number | null = null;
  for (const r of active) {
    if (r.to < n || isExpired(r, now)) continue;
    next = firstAvailableInRange(r, annulled, n);
    if (next !== null) break;
  }
  if (next === null) {
    return {
      ok: false,
      code: "ENUMERATION_NO_FOLIOS_AVAILABLE_FROM",
      status: 400,
      message: `no folio at or above ${n} is available in the active ranges`,
    };
  }
  let foliosUpdated = 0;
  const updates: { rangeId: string; cursor: number }[] = [];
  for (const r of active) {
    const target = Math.min(n, r.to + 1);
    if (target <= r.cursor) continue;
    foliosUpdated += target - r.cursor - countAnnulledBetween(r, annulled, r.cursor, target);
    updates.push({ rangeId: r.id, cursor: normalisedCursor(r, annulled, target) });
  }
  return { ok: true, nextNumberToUse: next, foliosUpdated, updates };
}

// ---------------------------------------------------------------------------------------------
// Annulment

export type AnnulError =
  | { code: "FOLIO_NUMBER_INVALID"; status: 400; message: string }
  | { code: "FOLIO_NOT_IN_RANGE"; status: 400; message: string }
  | { code: "FOLIO_ALREADY_ANNULLED"; status: 409; message: string }
  | { code: "FOLIO_ALREADY_USED"; status: 409; message: string };

export type AnnulPlan = { ok: true; rangeId: string; newCursor: number } | ({ ok: false } & AnnulError);

/**
 * Annulling marks one unused folio of a loaded range (active or not) so it is never issued.
 * `annulled` must contain the folio when it was annulled before (even below the cursor), so the
 * error can tell "already annulled" from "already used".
 */
export function planAnnul(ranges: readonly FolioRange[], annulled: AnnulledSet, folio: number): AnnulPlan {
  if (!isValidFolio(folio)) {
    return { ok: false, code: "FOLIO_NUMBER_INVALID", status: 400, message: `folio must be an integer between 1 and ${MAX_FOLIO}` };
  }
  const r = ranges.find((x) => x.from <= folio && folio <= x.to);
  if (!r) return { ok: false, code: "FOLIO_NOT_IN_RANGE", status: 400, message: `folio ${folio} is not inside any loaded range` };
  if (annulled.has(folio)) return { ok: false, code: "FOLIO_ALREADY_ANNULLED", status: 409, message: `folio ${folio} is already annulled` };
  if (folio < r.cursor) return { ok: false, code: "FOLIO_ALREADY_USED", status: 409, message: `folio ${folio} is already used` };
  let newCursor = r.cursor;
  if (folio === r.cursor) {
    const withIt = new Set(annulled);
    withIt.add(folio);
    newCursor = normalisedCursor(r, withIt, folio + 1);
  }
  return { ok: true, rangeId: r.id, newCursor };
}

// ---------------------------------------------------------------------------------------------
// Availability and alerts (ENU)

export interface RangeAvailability {
  range: FolioRange;
  expired: boolean;
  usable: boolean;
  /** Unused folios left in the range (counted even when it is inactive or expired). */
  remaining: number;
}

export interface Availability {
  ranges: RangeAvailability[];
  /** Folios available for allocation: unused folios of usable ranges. */
  totalAvailable: number;
  /** Unused folios left in expired active ranges (lost for allocation). */
  expiredUnused: number;
  /** Folios of active ranges (used or not): the base of the default threshold. */
  loadedActive: number;
  hasActive: boolean;
}

export function availability(ranges: readonly FolioRange[], annulled: AnnulledSet, now: number): Availability {
  const out: RangeAvailability[] = [];
  let totalAvailable = 0;
  let expiredUnused = 0;
  let loadedActive = 0;
  for (const r of [...ranges].sort(byFrom)) {
    const expired = isExpired(r, now);
    const usable = r.active && !expired;
    const remaining = remainingInRange(r, annulled);
    if (usable) totalAvailable += remaining;
    if (r.active && expired) expiredUnused += remaining;
    if (r.active) loadedActive += r.to - r.from + 1;
    out.push({ range: r, expired, usable, remaining });
  }
  return { ranges: out, totalAvailable, expiredUnused, loadedActive, hasActive: ranges.some((r) => r.active) };
}

/**
 * Default alert threshold when none is configured: 10 % of the folios in active ranges (rounded
 * up, at least 1). With ranges 1-100 and 201-300 that is 20.
 */
export function defaultThreshold(loadedActive: number): number {
  return Math.max(1, Math.ceil(loadedActive / 10));
}

export type EnuReason = "LOW_AVAILABILITY" | "EXPIRING" | "EXHAUSTED";

/** Episode state: an event is raised once per episode; the episode ends when the condition clears. */
export interface AlertState {
  lowSeq: number;
  lowRaised: boolean;
  exhaustedSeq: number;
  exhaustedRaised: boolean;
  /** Ranges whose EXPIRING alert was raised (a range's expiry never changes). */
  expiringRaised: string[];
}

export const INITIAL_ALERT_STATE: AlertState = {
  lowSeq: 1,
  lowRaised: false,
  exhaustedSeq: 1,
  exhaustedRaised: false,
  expiringRaised: [],
};

export interface AlertEvent {
  reason: EnuReason;
  /** Unique per company together with the document type (the event_outbox dedupe_key). */
  dedupeKey: string;
  available: number;
  threshold: number;
  cafId?: string;
  expiresAt?: string;
  rangeAvailable?: number;
}

/**
 * Which ENU events to raise now:
 * - LOW_AVAILABILITY when available < threshold (and some range is active);
 * - EXHAUSTED when some range is active but nothing is available (expired ranges included);
 * - EXPIRING for an active range with unused folios whose expiry is within EXPIRY_WARNING_DAYS
 *   (or already past).
 * A condition that clears (e.g. a new CAF is loaded) re-arms its alert under a new sequence number.
 */
export function planAlerts(
  documentType: string,
  avail: Availability,
  threshold: number,
  state: AlertState,
  now: number,
  warningDays: number = EXPIRY_WARNING_DAYS,
): { state: AlertState; events: AlertEvent[] } {
  const next: AlertState = { ...state, expiringRaised: [...state.expiringRaised] };
  const events: AlertEvent[] = [];
  const available = avail.totalAvailable;
  const low = avail.hasActive && available < threshold;
  const exhausted = avail.hasActive && available === 0;
  if (low && !next.lowRaised) {
    events.push({ reason: "LOW_AVAILABILITY", dedupeKey: `ENU:${documentType}:LOW_AVAILABILITY:${next.lowSeq}`, available, threshold });
    next.lowRaised = true;
  } else if (!low && next.lowRaised) {
    next.lowRaised = false;
    next.lowSeq += 1;
  }
  if (exhausted && !next.exhaustedRaised) {
    events.push({ reason: "EXHAUSTED", dedupeKey: `ENU:${documentType}:EXHAUSTED:${next.exhaustedSeq}`, available, threshold });
    next.exhaustedRaised = true;
  } else if (!exhausted && next.exhaustedRaised) {
    next.exhaustedRaised = false;
    next.exhaustedSeq += 1;
  }
  const windowMs = warningDays * 86_400_000;
  for (const ra of avail.ranges) {
    const r = ra.range;
    const exp = expiresAtMs(r);
    if (!r.active || exp === null || ra.remaining === 0) continue;
    if (exp - now > windowMs || next.expiringRaised.includes(r.id)) continue;
    events.push({
      reason: "EXPIRING",
      dedupeKey: `ENU:${documentType}:EXPIRING:${r.id}`,
      available,
      threshold,
      cafId: r.id,
      expiresAt: r.expiresAt ?? undefined,
      rangeAvailable: ra.remaining,
    });
    next.expiringRaised.push(r.id);
  }
  return { state: next, events };
}

/**
 * Earliest future instant at which the alert picture changes by the clock alone (an EXPIRING
 * window opens, or a range expires and availability drops), or null.
 */
export function nextExpiryCheck(
  avail: Availability,
  now: number,
  warningDays: number = EXPIRY_WARNING_DAYS,
): number | null {
  let best: number | null = null;
  for (const ra of avail.ranges) {
    const exp = expiresAtMs(ra.range);
    if (!ra.range.active || exp === null || ra.remaining === 0) continue;
    // When the warning window opens, and just after the expiry itself (availability drops then).
    for (const due of [exp - warningDays * 86_400_000, exp + 1]) {
      if (due > now && (best === null || due < best)) best = due;
    }
  }
  return best;
}
