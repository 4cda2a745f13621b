import { and, eq, lt, type SQL } from "drizzle-orm";
import type { MiddlewareHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import type { Db } from "../../storage/db/client";
import { indexStore } from "../../storage/db/document-store";
import { idempotencyKeys } from "../../storage/db/schema";
import { sha256Hex } from "../../lib/crypto";
import { AppError } from "../../lib/errors";
import type { AppEnv } from "../types";
import { describeError, log } from "../../lib/log";

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
/** How long a key's record is kept (its claim, then its answer). */
export const TTL_MS = 24 * 60 * 60 * 1000;

/**
 * `Idempotency-Key` on creating POSTs (DECISIONS 11). The first request claims the key; a repeat
 * with the same method, path and body (JSON compared by meaning: key order and spacing do not count) replays the stored response (header Idempotent-Replayed:
 * true) without doing the work again; the same key with another request is 409
 * IDEMPOTENCY_KEY_REUSED; a repeat while the first is still running is 409 IDEMPOTENCY_KEY_IN_USE.
 * Responses of 5xx are not stored, so the client may retry. Keys are kept 24 hours, per client.
 *
 * The records live in the client's index store (`<clientId>[:live]:index`, a Durable Object),
 * which purges its expired records as it claims new ones.
 */
export const idempotency: MiddlewareHandler<AppEnv> = async (c, next) => {
  const key = c.req.header("Idempotency-Key");
  if (key === undefined) return next();
  if (!KEY_PATTERN.test(key)) {
    throw new AppError("IDEMPOTENCY_KEY_INVALID", "The Idempotency-Key header must be 1 to 255 printable ASCII characters.");
  }
  const principal = c.get("principal");
  // Keys are per client and mode: a test request and a live one never share an Idempotency-Key.
  const clientId = principal.livemode ? `${principal.clientId}:live` : principal.clientId;
  const db = indexStore(c.env, clientId);
  const url = new URL(c.req.url);
  const scope = `${c.req.method} ${url.pathname}`;
  const contentType = c.req.header("content-type") ?? "";
  const body = new Uint8Array(await c.req.raw.clone().arrayBuffer());
  // A multipart boundary is the client's random choice, not part of the request's meaning.
  const head = new TextEncoder().encode(`${scope}\n${contentType.replace(/;\s*boundary=[^;]*/i, "")}\n`);
  const meaning = jsonMeaning(contentType, body) ?? (await multipartMeaning(contentType, body)) ?? body;
  const signed = new Uint8Array(head.length + meaning.byteLength);
  signed.set(head);
  signed.set(meaning, head.length);
  const fingerprint = await sha256Hex(signed);
  const now = new Date();

  const claim = await claimKey(db, { clientId, key, scope, fingerprint }, now);
  if ("replay" in claim) {
    c.res = claim.replay;
    return;
  }
  // The routes name what they create from this (the same seed on every attempt of the claim:
  // createdUlid in src/lib/ids.ts), so that work redone after an unknown outcome is the same work.
  c.set("idempotency", { seed: `${clientId}\n${key}\n${claim.createdAt}`, createdAt: claim.createdAt, takenOver: claim.takenOver });

  // This request's claim: its record while its expiry is the one this claim set (a takeover sets another).
  const own = and(recordOf(clientId, key), eq(idempotencyKeys.expiresAt, claim.expiresAt))!;
  try {
    await next();
  } catch (err) {
    await settleFailure(db, own, isRefusal(err)).catch(() => undefined);
    throw err;
  }
  // Errors thrown inside handlers are turned into responses by onError after this middleware
  // returns, so c.error tells whether the request failed with an exception. A 4xx answered without
  // one (the body's validation, malformed JSON) is a refusal too: nothing was done.
  const res = c.res;
  if (c.error || res.status >= 400) {
    // Unsettled (the store unreachable), the claim waits out its lease.
    await settleFailure(db, own, c.error ? isRefusal(c.error) : res.status < 500).catch(() => undefined);
    return;
  }
  const text = await res.clone().text();
  // The work is done: its answer goes to the client even when it could not be recorded (a retry
  // with the key then answers 409 until the claim's lease ends, then takes it over and, the route
  // naming what it creates from the claim, is answered with what this attempt stored).
  await complete(db, own, res.status, text).catch((err) => log("error", "idempotency record not completed; retries with the key answer 409 until the claim's lease ends", { scope, request_fingerprint: fingerprint.slice(0, 16), error: describeError(err) }));
};

/**
 * How long a claim IN_PROGRESS is taken for a running request. A request that died without saying
 * so (its isolate ended) leaves its claim; after this a retry with the same request takes it over
 * and redoes the work with the same seed (routes that create documents are idempotent per seed).
 */
export const CLAIM_LEASE_MS = 60_000;

type Claim = { createdAt: string; expiresAt: string; takenOver: boolean } | { replay: Response };

/**
 * Claims the key for this request, or answers what a repeat gets: the stored response of a finished
 * one, 409 while another runs, 409 REUSED for another request. A claim ABANDONED (its request failed
 * with an unknown outcome) or IN_PROGRESS past its lease is taken over by the same request, keeping
 * its creation time (the seed's), so the work is redone as the same work.
 */
async function claimKey(db: Db, r: { clientId: string; key: string; scope: string; fingerprint: string }, now: Date): Promise<Claim> {
  // The store is the client's alone: a claim also removes every record that expired since the last
  // (at most a day of keys), so the store never holds much more than a day's records.
  const claimedAt = now.toISOString();
  const expiresAt = new Date(now.getTime() + TTL_MS).toISOString();
  let claimed: { createdAt: string; expiresAt: string }[];
  try {
    [, claimed] = await db.batch([
      db.delete(idempotencyKeys).where(lt(idempotencyKeys.expiresAt, claimedAt)),
      db
        .insert(idempotencyKeys)
        .values({ ...r, state: "IN_PROGRESS", createdAt: claimedAt, expiresAt })
        .onConflictDoNothing()
        .returning({ createdAt: idempotencyKeys.createdAt, expiresAt: idempotencyKeys.expiresAt }),
    ]);
  } catch (err) {
    // The claim may have been written and only its answer lost (the store restarted, the
    // connection dropped): nothing was done yet, so a claim of this request is taken back, or
    // every retry with the key would be "in progress" until the claim's lease ends.
    await releaseOwnClaim(db, r.clientId, r.key, r.fingerprint, claimedAt).catch(() => undefined);
    throw err;
  }
  if (claimed[0]) return { ...claimed[0], takenOver: false };

  const existing = await db.query.idempotencyKeys.findFirst({ where: recordOf(r.clientId, r.key) });
  if (!existing) throw new AppError("IDEMPOTENCY_KEY_IN_USE", "This Idempotency-Key is being released; retry.", [], { "Retry-After": "1" });
  if (existing.fingerprint !== r.fingerprint) {
    throw new AppError("IDEMPOTENCY_KEY_REUSED", `This Idempotency-Key was already used for another request (${existing.scope} with a different body).`);
  }
  if (existing.state === "COMPLETED") {
    return { replay: new Response(existing.responseBody, { status: existing.responseStatus ?? 200, headers: { "Content-Type": "application/json", "Idempotent-Replayed": "true" } }) };
  }
  const leaseEnded = Date.parse(existing.expiresAt) - TTL_MS + CLAIM_LEASE_MS <= now.getTime();
  if (existing.state === "ABANDONED" || leaseEnded) {
    // Taken over only by one retry: the record must still be the one read (its expiry is renewed).
    const [taken] = await db
      .update(idempotencyKeys)
      .set({ state: "IN_PROGRESS", expiresAt })
      .where(and(recordOf(r.clientId, r.key), eq(idempotencyKeys.state, existing.state), eq(idempotencyKeys.expiresAt, existing.expiresAt)))
      .returning({ createdAt: idempotencyKeys.createdAt, expiresAt: idempotencyKeys.expiresAt });
    if (taken) return { ...taken, takenOver: true };
  }
  throw inUse(now.getTime() - (Date.parse(existing.expiresAt) - TTL_MS));
}

/** A claim younger than this is a request still running (they take milliseconds): retry in a second. */
const RUNNING_MS = 5_000;

/**
 * 409 for a claim held `ageMs`: a young one is a request still running (retry in 1 s); an older one
 * is most likely an attempt that died, taken over when its lease ends, which Retry-After says.
 */
function inUse(ageMs: number): AppError {
  if (ageMs < RUNNING_MS) return new AppError("IDEMPOTENCY_KEY_IN_USE", "A request with this Idempotency-Key is still in progress; retry shortly.", [], { "Retry-After": "1" });
  const left = Math.min(CLAIM_LEASE_MS / 1000, Math.max(1, Math.ceil((CLAIM_LEASE_MS - ageMs) / 1000)));
  return new AppError("IDEMPOTENCY_KEY_IN_USE", `An earlier request with this Idempotency-Key started ${Math.floor(ageMs / 1000)} s ago and has not finished; if it died, a retry in ${left} s takes it over.`, [], { "Retry-After": String(left) });
}

/**
 * After a failed request: a refusal (an AppError, or a 4xx answer: the route or the body's
 * validation decided, nothing was done) gives the key back, so a corrected request may use it; any
 * other failure may have happened after the work was done (a store's answer lost), so the claim is
 * marked ABANDONED: the next retry with the same request takes it over at once and redoes the work
 * with the same seed, which the route makes the same work.
 */
async function settleFailure(db: Db, own: SQL, refused: boolean): Promise<void> {
  // Only this request's claim, still in progress: a write repeated after its answer was lost must
  // not touch a claim another attempt made since.
  const mine = and(own, eq(idempotencyKeys.state, "IN_PROGRESS"));
  if (refused) await attempts(() => db.delete(idempotencyKeys).where(mine));
  else await attempts(() => db.update(idempotencyKeys).set({ state: "ABANDONED" }).where(mine));
}

/** An error that refuses the request before any work (an AppError; Hono's 4xx, such as malformed JSON). */
const isRefusal = (err: unknown) => err instanceof AppError || (err instanceof HTTPException && err.status < 500);

/** Attempts at each write that settles a claim (a claim left unsettled blocks the key: 409 until its lease ends). */
const SETTLE_ATTEMPTS = 3;

/** `write`, tried again after a failure (50 ms, then 100 ms), SETTLE_ATTEMPTS times in all; each write is the same whether or not an earlier attempt reached the store. */
async function attempts(write: () => Promise<unknown>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await write();
      return;
    } catch (err) {
      if (attempt >= SETTLE_ATTEMPTS) throw err;
      await new Promise((r) => setTimeout(r, 50 * attempt));
    }
  }
}

/**
 * Records the answer of a request whose work is done: an answer not recorded leaves the key "in
 * progress" (retries with it answer 409 until the claim's lease ends; then the retry that takes it
 * over redoes the request under the same seed, which finds the stored record), which is safe but
 * blocks the key for a while.
 */
function complete(db: Db, own: SQL, status: number, body: string): Promise<void> {
  return attempts(() => db.update(idempotencyKeys).set({ state: "COMPLETED", responseStatus: status, responseBody: body }).where(own));
}

/** Deletes the claim only if it is this request's own (same fingerprint and claim time, still in progress). */
function releaseOwnClaim(db: Db, clientId: string, key: string, fingerprint: string, claimedAt: string) {
  return attempts(() =>
    db
      .delete(idempotencyKeys)
      .where(and(recordOf(clientId, key), eq(idempotencyKeys.fingerprint, fingerprint), eq(idempotencyKeys.createdAt, claimedAt), eq(idempotencyKeys.state, "IN_PROGRESS"))),
  );
}

/** The record of a client's key. */
const recordOf = (clientId: string, key: string) => and(eq(idempotencyKeys.clientId, clientId), eq(idempotencyKeys.key, key));

/**
 * A JSON body compared by meaning, not bytes: keys sorted at every depth, no insignificant white
 * space, so `{"a":1,"b":2}` and `{ "b": 2, "a": 1 }` are the same request. Other bodies (and JSON
 * that does not parse, which the route refuses anyway) are compared byte for byte.
 */
export function jsonMeaning(contentType: string, body: Uint8Array): Uint8Array | undefined {
  if (!/^application\/(?:[\w.+-]+\+)?json\b/i.test(contentType.trim())) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(body));
  } catch {
    return undefined;
  }
  return new TextEncoder().encode(JSON.stringify(sortKeys(value)));
}

/**
 * A multipart body compared by its parts, not bytes: each part's name, file name and content in
 * order, so the same upload sent again with another boundary (every client draws a new one) is the
 * same request. A body that does not parse is compared byte for byte.
 */
export async function multipartMeaning(contentType: string, body: Uint8Array): Promise<Uint8Array | undefined> {
  if (!/^multipart\/form-data\b/i.test(contentType.trim())) return undefined;
  let form: FormData;
  try {
    form = await new Response(body as Uint8Array<ArrayBuffer>, { headers: { "Content-Type": contentType } }).formData();
  } catch {
    return undefined;
  }
  const entries: [string, string | File][] = [];
  form.forEach((value, name) => entries.push([name, value]));
  const parts: unknown[] = [];
  for (const [name, value] of entries) parts.push(typeof value === "string" ? [name, value] : [name, value.name, await sha256Hex(new Uint8Array(await value.arrayBuffer()))]);
  return new TextEncoder().encode(JSON.stringify(parts));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== "object") return value;
  // fromEntries defines own properties, so a "__proto__" key stays a key.
  return Object.fromEntries(Object.keys(value).sort().map((key) => [key, sortKeys((value as Record<string, unknown>)[key])]));
}
