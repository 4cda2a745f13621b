/**
 * The control directory (docs/capacity.md "Control data in Durable Objects"): the Durable
 * Objects that keep, in their own storage, the control-plane rows every document reads, so that an
 * isolate whose cache misses asks an object instead of D1. One object per company
 * (`company:<id>`: its row, its control data, its open partition) and one per API key hash
 * (`key:<hash>`: the key's row and grants). An object fills an entry from D1 on a miss; absence and
 * failed reads are never stored (src/operations/objects/control-directory).
 *
 * Every control-plane write tells the objects it touches to forget, AFTER its D1 commit
 * (`forgetInDirectory`); a forget that fails is retried and logged, and DIRECTORY_TTL_MS bounds how
 * long an entry outlives a lost forget (docs/architecture.md, "Caches"). A write that withdraws something
 * (a key or user revoked, a grant withdrawn, a certificate deleted, a company deleted) first HOLDS
 * the objects (`holdInDirectory`: they drop their entries and keep no fill for HOLD_MS) and makes
 * no change if that fails, so a lost forget after it cannot keep the withdrawn row alive.
 */
import { AppError } from "../../lib/errors/app-error";
import { describeError, log } from "../../lib/log";

/** How long an object trusts an entry it filled: the bound when a forget is lost (docs/architecture.md). */
export const DIRECTORY_TTL_MS = 3_600_000;

export type DirectoryEnv = Pick<Env, "CONTROL_DIRECTORY">;

export const companyEntry = (companyId: string) => `company:${companyId}`;
export const keyEntry = (keyHash: string) => `key:${keyHash}`;

/** The stub of one directory object by name (`companyEntry`, `keyEntry`). */
export function directory(env: DirectoryEnv, name: string) {
  return env.CONTROL_DIRECTORY.get(env.CONTROL_DIRECTORY.idFromName(name));
}

const FORGET_ATTEMPTS = 3;

/** How long a hold keeps an object from keeping fills: far longer than the D1 write it covers. */
export const HOLD_MS = 60_000;

/**
 * Tells each named object to drop what it holds (all of it, or only `parts`). Called after the D1
 * write committed, so it never throws: a failure is retried FORGET_ATTEMPTS times and logged, and
 * the object's entry then lives at most DIRECTORY_TTL_MS.
 */
export async function forgetInDirectory(env: DirectoryEnv, names: readonly string[], parts?: readonly string[]): Promise<void> {
  await Promise.all(names.map((name) => forgetOne(env, name, parts)));
}

async function forgetOne(env: DirectoryEnv, name: string, parts: readonly string[] | undefined): Promise<void> {
  const error = await forgetWithRetries(env, name, parts, 0);
  if (error !== undefined) log("error", "the control directory did not forget; its entry lives until its safety TTL", { object: name, ttl_ms: DIRECTORY_TTL_MS, error: describeError(error) });
}

/** Asks the object to forget (and hold, with `holdMs`) up to FORGET_ATTEMPTS times; the last error, or undefined once it answered. */
async function forgetWithRetries(env: DirectoryEnv, name: string, parts: readonly string[] | undefined, holdMs: number): Promise<unknown> {
  for (let attempt = 1; ; attempt++) {
    try {
      await directory(env, name).forget(parts ? [...parts] : undefined, holdMs);
      return undefined;
    } catch (e) {
      if (attempt >= FORGET_ATTEMPTS) return e ?? new Error("forget failed");
      await new Promise((r) => setTimeout(r, 50 * attempt));
    }
  }
}

/**
 * Before a D1 write that withdraws access or a credential: each named object drops its entries (or
 * `parts`) and keeps no fill for HOLD_MS, so no isolate can bring the row as it was before the
 * write back into the object, whatever happens to the forget after the write. Throws
 * CONTROL_DIRECTORY_UNAVAILABLE (503, nothing changed) when an object cannot be reached after
 * FORGET_ATTEMPTS tries: the caller has not written yet.
 */
export async function holdInDirectory(env: DirectoryEnv, names: readonly string[], parts?: readonly string[]): Promise<void> {
  await Promise.all(names.map((name) => holdOne(env, name, parts)));
}

async function holdOne(env: DirectoryEnv, name: string, parts: readonly string[] | undefined): Promise<void> {
  const error = await forgetWithRetries(env, name, parts, HOLD_MS);
  if (error === undefined) return;
  log("error", "the control directory could not be held; the change was not made", { object: name, error: describeError(error) });
  throw new AppError("CONTROL_DIRECTORY_UNAVAILABLE", "The change was not made: the service could not reach the store every server reads access from. Nothing changed; retry in a moment.");
}
