/** What every pipeline step shares: its dependencies, error kinds, per-isolate caches, the FAILED ending. */
import { eq, inArray } from "drizzle-orm";
import type { Db } from "../../../storage/db/client";
import { cafs, cancellations, companies, invoices } from "../../../storage/db/schema";
import { companyControl } from "../../../accounts/companies/control-cache";
import { requireSigningCredentials, signingCredentialsOf } from "../../../accounts/certificates/certificates";
import { companyEntry, directory } from "../../../storage/db/control-directory";
import { readCafFile } from "../../../folios/caf-files";
import { AppError } from "../../../lib/errors";
import { MOVES, transition, type InvoiceRow } from "../../state";
import type { Credentials, NumberRange, TaxAuthority } from "../../../countries/port";
import { issuingCountry } from "../../../countries";
import { chunked } from "../../../lib/chunked";
import { envForMode } from "../../../config";
import { allocator } from "../../../folios/cafs";
import { releaseReference } from "../../references";
import { ordinalOfId, partitionedId, partitionFor } from "../../../storage/db/document-store";

export interface StepDeps {
  /** D1: companies, certificates, CAFs (everything but the documents). */
  db: Db;
  /**
   * The store of the documents this step works on: invoices, their events, envelopes and
   * cancellations of one partition. A consumer batch is grouped per store, so every write of a step
   * goes to one store.
   */
  store: Db;
  /** The partition `store` holds; new envelopes get ids that name it. */
  ordinal: number;
  env: Env;
  /** The authority of every company (tests), unless `authorityFor` is given. */
  authority?: TaxAuthority;
  /**
   * The authority of a company by its mode (test companies always reach the SII simulator) and its
   * API client (whose simulator scenarios apply to it).
   */
  authorityFor?: (company: AuthorityCompany) => TaxAuthority;
  now: () => Date;
}

/** What picks a company's tax authority: its mode and its API client. */
export type AuthorityCompany = { livemode: boolean; clientId: string };

/** The tax authority the company talks to. */
export function authorityOf(deps: StepDeps, company: AuthorityCompany): TaxAuthority {
  if (deps.authorityFor) return deps.authorityFor(company);
  if (!deps.authority) throw new Error("pipeline deps without a tax authority");
  return deps.authority;
}

/** A problem that will not go away by retrying: the document ends FAILED with the reason. */
export class TerminalStepError extends Error {}
/** A problem worth waiting for (tax authority down, certificate being replaced...). */
export class RetryableStepError extends Error {}

// ---------------------------------------------------------------------------------------------
// Per-isolate caches: the expensive parses (the .pfx opening and the CAF key import) and the
// company's control rows (src/accounts/companies/control-cache.ts: at most CONTROL_CACHE_MS old,
// dropped in this isolate by every write to them).

const credentialCache = new Map<string, Promise<Credentials & { certificateId: string }>>();

/**
 * The company's signing credentials. Opening a .pfx is slow, so credentials are cached per isolate
 * by certificate id. Which certificate is the active one comes from the control cache: a certificate
 * uploaded, activated or deleted in this isolate is seen at once, in others within CONTROL_CACHE_MS;
 * one past its end date is never used (its credentials are loaded again, which refuses it).
 */
export async function signerFor(deps: StepDeps, companyId: string): Promise<Credentials & { certificateId: string }> {
  const found = await companyControl(deps.env, companyId, deps.now().getTime());
  const active = found?.certificate ? { id: found.certificate.id } : undefined;
  const cached = active ? credentialCache.get(active.id) : undefined;
  if (cached) {
    const creds = await cached;
    if (creds.notAfter.getTime() > deps.now().getTime()) return creds;
  }
  // The active certificate's row comes with the control data: no D1 read (none there: D1 says why).
  const pending = found?.certificate ? signingCredentialsOf(deps.env, found.certificate, deps.now()) : requireSigningCredentials(deps.db, deps.env, companyId, deps.now());
  // Shared while it loads: a cold batch opens the .pfx once, not once per document (found by
  // `npm run bench -- capacity`).
  if (active) {
    credentialCache.set(active.id, pending);
    pending.catch(() => credentialCache.get(active.id) === pending && credentialCache.delete(active.id));
  }
  try {
    const creds = await pending;
    credentialCache.set(creds.certificateId, pending);
    return creds;
  } catch (e) {
    if (e instanceof AppError) throw new RetryableStepError(e.message);
    throw e;
  }
}

const cafCache = new Map<string, Promise<NumberRange>>();
/** A CAF parsed once per isolate; its row (file key, mode) from the company's control directory object (D1 only when the object does not hold it). */
export async function cafFor(deps: StepDeps, companyId: string, cafId: string): Promise<NumberRange> {
  let p = cafCache.get(cafId);
  if (!p) {
    p = (async () => {
      const row = await directory(deps.env, companyEntry(companyId)).caf(companyId, cafId);
      if (!row) throw new TerminalStepError(`CAF ${cafId} is not on record`);
      const file = await readCafFile(deps.env, { id: cafId, fileKey: row.fileKey });
      if (!file) throw new TerminalStepError(`CAF file of ${cafId} is missing`);
      return issuingCountry().numberRanges.parse(file, { simulated: envForMode(deps.env, row.livemode).SII_MODE === "simulator" });
    })();
    cafCache.set(cafId, p);
    p.catch(() => cafCache.delete(cafId));
  }
  return p;
}

/** The company, its settings and time zone, from the isolate's control cache (one D1 round trip on a miss, shared with `signerFor`). */
export async function companyContext(deps: StepDeps, companyId: string) {
  const found = await companyControl(deps.env, companyId, deps.now().getTime());
  if (!found) throw new TerminalStepError(`company ${companyId} not found`);
  return { company: found.company, timeZone: found.settings?.timeZone ?? "America/Santiago", settings: found.settings };
}

/**
 * Notes that ended FAILED or REJECTED no longer hold the documents they meant to cancel (a note
 * holds at most one, keyed by the note's id), so those can be cancelled again. The row is removed
 * beside the note and in the cancelled document's partition when that is another one (where the
 * row belongs once the POST writes documents to the stores: the document's reads find it there).
 */
export async function releaseCancellations(deps: StepDeps, notes: CancellingNote[]) {
  await releaseCancellationsIn(deps.env, { db: deps.store, ordinal: deps.ordinal }, notes);
}

/** `releaseCancellations` for notes of the partition `at` (the dead-letter consumer has no step deps). */
export async function releaseCancellationsIn(env: Env, at: { db: Db; ordinal: number }, notes: CancellingNote[]) {
  const ids = notes.map((n) => n.id);
  for (const chunk of chunked(ids, 90)) await at.db.delete(cancellations).where(inArray(cancellations.creditNoteId, chunk));
  const elsewhere = new Map<string, { companyId: string; ordinal: number; ids: string[] }>();
  for (const n of notes) {
    const ordinal = n.cancelsInvoiceId ? ordinalOfId(n.cancelsInvoiceId) : null;
    if (ordinal === null || ordinal === at.ordinal) continue;
    const key = `${n.companyId}:${ordinal}`;
    const g = elsewhere.get(key) ?? { companyId: n.companyId, ordinal, ids: [] };
    elsewhere.set(key, { ...g, ids: [...g.ids, n.id] });
  }
  for (const g of elsewhere.values()) {
    const p = await partitionFor(env, g.companyId, g.ordinal);
    for (const chunk of chunked(g.ids, 90)) await p.db.delete(cancellations).where(inArray(cancellations.creditNoteId, chunk));
  }
}

export type CancellingNote = Pick<InvoiceRow, "id" | "companyId" | "cancelsInvoiceId">;

export async function releaseCancellation(deps: StepDeps, inv: InvoiceRow) {
  if (inv.cancelsInvoiceId) await releaseCancellations(deps, [inv]);
}

/**
 * A note already REJECTED or FAILED whose message or envelope poll comes again: the release that
 * followed its move (other writes, one in another store) may have failed after it, so it is done
 * again (deleting what is already gone changes nothing). An ACCEPTED note keeps its document.
 */
export async function releaseIfEnded(deps: StepDeps, notes: (CancellingNote & Pick<InvoiceRow, "status">)[]) {
  await releaseCancellations(deps, notes.filter((n) => n.cancelsInvoiceId && (n.status === "REJECTED" || n.status === "FAILED")));
}

/**
 * What a document that just ended FAILED lets go: the document it meant to cancel and its
 * external_reference in the company's index store (best effort: a FAILED holder is taken over anyway).
 */
export async function releaseOnFailure(deps: StepDeps, inv: InvoiceRow) {
  await releaseCancellation(deps, inv);
  if (inv.externalReference) await releaseReference(deps.env, inv.companyId, inv.externalReference, inv.id).catch(() => undefined);
}

/**
 * Ends a document FAILED (terminal); a cancellation and an external_reference it held are released,
 * and so is its folio reservation when it never got a folio.
 */
export async function fail(deps: StepDeps, inv: InvoiceRow, reason: string): Promise<InvoiceRow | null> {
  const done = await transition(deps.store, inv.id, MOVES.fail, { fiscalMessage: reason, lastError: reason }, reason);
  if (done) await releaseOnFailure(deps, inv);
  if (done && inv.folio === null) await allocator(deps.env, inv.companyId, inv.documentType).release(inv.id).catch(() => undefined);
  return done;
}

export async function reload(deps: StepDeps, id: string): Promise<InvoiceRow> {
  const row = await deps.store.query.invoices.findFirst({ where: eq(invoices.id, id) });
  if (!row) throw new TerminalStepError(`invoice ${id} not found`);
  return row;
}

/** A new envelope's id, naming the partition of its documents (the envelope lives in their store). */
export function newEnvelopeId(deps: Pick<StepDeps, "ordinal">): string {
  return partitionedId("env", deps.ordinal);
}

/** The deps of one store within a batch: the same D1, authority and clock. */
export function depsForStore(deps: StepDeps, store: Db, ordinal: number): StepDeps {
  return { ...deps, store, ordinal };
}

export type CompanyContext = Awaited<ReturnType<typeof companyContext>>;
export type Signer = Awaited<ReturnType<typeof signerFor>>;
