/**
 * Opaque identifiers: `<prefix>_<ULID>` (48-bit millisecond time + 80 random bits, Crockford base32).
 * Every id visible outside gets 80 fresh random bits, so ids minted in the same millisecond are not
 * neighbours (+1) of each other and cannot be guessed from one another. Only the internal,
 * order-sensitive records listed in MONOTONIC (event log rows, simulator rows) keep the monotonic
 * variant, where same-millisecond ids increment so that ordering by id stays the insert order.
 */
import { hmacSha256 } from "./crypto";
const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

let lastTime = -1;
let lastRandom: Uint8Array = new Uint8Array(10);

function encodeTime(time: number): string {
  let out = "";
  let t = time;
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[t % 32] + out;
    t = Math.floor(t / 32);
  }
  return out;
}

/** The 10-character time prefix of a ULID made at `time` (sorts as the time does). */
export function encodeUlidTime(time: number): string {
  return encodeTime(time);
}

/** The time (epoch ms) a ULID's 10-character prefix encodes; NaN when a character is not of the alphabet. */
export function decodeUlidTime(prefix: string): number {
  let t = 0;
  for (const ch of prefix.slice(0, 10)) {
    const v = ALPHABET.indexOf(ch);
    if (v < 0) return Number.NaN;
    t = t * 32 + v;
  }
  return t;
}

function encodeRandom(bytes: Uint8Array): string {
  // 80 bits -> 16 base32 characters.
  let bits = 0n;
  for (const b of bytes) bits = (bits << 8n) | BigInt(b);
  let out = "";
  for (let i = 0; i < 16; i++) {
    out = ALPHABET[Number(bits & 31n)] + out;
    bits >>= 5n;
  }
  return out;
}

function increment(bytes: Uint8Array): Uint8Array {
  const copy = new Uint8Array(bytes);
  for (let i = copy.length - 1; i >= 0; i--) {
    if (copy[i]! < 255) {
      copy[i]! += 1;
      return copy;
    }
    copy[i] = 0;
  }
  return copy;
}

/** Fully random ULID: time prefix plus 80 fresh random bits, never derived from a previous id. */
export function randomUlid(now: number = Date.now()): string {
  return encodeTime(now) + encodeRandom(crypto.getRandomValues(new Uint8Array(10)));
}

/**
 * A ULID derived from a seed: the time prefix of `time` and 80 bits of HMAC-SHA-256(secret, seed),
 * as unpredictable as random ones to anyone without the secret, and the same on every call with the
 * same seed (an Idempotency-Key claim names the document it creates, attempt after attempt).
 */
export async function seededUlid(secret: string, seed: string, time: number): Promise<string> {
  return encodeTime(time) + encodeRandom((await hmacSha256(secret, seed)).subarray(0, 10));
}

/** Monotonic ULID (same-millisecond ids increment): only for internal, order-sensitive rows. */
export function ulid(now: number = Date.now()): string {
  if (now <= lastTime) {
    lastRandom = increment(lastRandom);
    now = lastTime;
  } else {
    lastTime = now;
    lastRandom = crypto.getRandomValues(new Uint8Array(10));
  }
  return encodeTime(now) + encodeRandom(lastRandom);
}

export type IdPrefix =
  | "att" | "bat" | "cli" | "env" | "lgo" | "sim" | "usr" | "key" | "cmp" | "set" | "req" | "cer" | "caf" | "inv" | "evt" | "idem" | "whk" | "dlv" | "rcv" | "inm" | "dlq" | "ces";

const MONOTONIC: ReadonlySet<IdPrefix> = new Set(["evt", "sim"]);

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${MONOTONIC.has(prefix) ? ulid() : randomUlid()}`;
}

/**
 * An Idempotency-Key claim as the route sees it: the same seed on every attempt of one claim (a route
 * derives what it creates from it), the claim's time, and whether this attempt took the claim over
 * from an earlier one that failed or died (which may have stored its work: the route looks for it).
 */
export interface IdempotencyClaim {
  seed: string;
  createdAt: string;
  takenOver: boolean;
}

/**
 * The ULID of what a POST creates: under an Idempotency-Key claim (src/http/middleware/idempotency.ts)
 * derived from it (seededUlid of its seed, at its creation time), so that every attempt of one claim
 * names the same record and a retry after an unknown outcome finds what the first attempt stored
 * instead of making a second; without one, a fresh random one made at `now`.
 */
export async function createdUlid(secret: string, claim?: Pick<IdempotencyClaim, "seed" | "createdAt">, now: number = Date.now()): Promise<string> {
  return claim ? seededUlid(secret, claim.seed, Date.parse(claim.createdAt)) : randomUlid(now);
}

/** `<prefix>_` and createdUlid: the id of a record a POST creates (companies, webhook endpoints). */
export async function createdId(prefix: IdPrefix, secret: string, claim?: Pick<IdempotencyClaim, "seed" | "createdAt">): Promise<string> {
  return `${prefix}_${await createdUlid(secret, claim)}`;
}
