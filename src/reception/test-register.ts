/**
 * Test mode: a document received by upload or e-mail that verifies is known to the simulated SII's
 * register from the moment it is taken in (src/countries/cl/simulator/received-register.ts), so its reception
 * time, its 8-day deadline and the accept and claim flow can be tried offline. Live mode never
 * comes here: the real SII learns of a document from its issuer only.
 */
import { createDb, type Db } from "../storage/db/client";
import type { receivedDocuments } from "../storage/db/schema";
import { issuingCountry } from "../countries";
import { log } from "../lib/log";

type Row = typeof receivedDocuments.$inferInsert;

/** A document as the simulated register records it. */
export interface RegisteredDocument { issuerRut: string; type: number; folio: number; receiverRut: string; issueDate: string; total: string }
/** Registers the documents it does not hold yet as received at `at`; returns the keys (`issuer|type|folio`) it registered. */
export type SimulatedRegister = (db: Db, docs: RegisteredDocument[], at: Date, file: { name: string; sha256: string; size: number }) => Promise<Set<string>>;
let register: SimulatedRegister | undefined;

/** Wires the simulated SII's register; called once by the composition root (src/index.ts), as the simulator is not a layer below this one. */
export function useSimulatedRegister(fn: SimulatedRegister): void {
  register = fn;
}
const keyOf = (r: { issuerRut: string; documentType?: number; type?: number; folio: number }) => `${r.issuerRut}|${r.documentType ?? r.type}|${r.folio}`;

/** Registers the verified rows the register does not know yet and gives them its reception time (`at`) and deadline, before they are written. */
export async function registerInSimulator(env: Env, rows: Row[], at: Date, file: { name: string | null; sha256: string; size: number }): Promise<void> {
  const verified = rows.filter((r) => r.receptionStatus === 0 && !r.siiReceivedAt && r.recipientRut && r.issueDate && r.total);
  if (verified.length === 0) return;
  if (!register) return log("warn", "the simulated register is not wired: received documents are not registered", {});
  const docs = verified.map((r) => ({ issuerRut: r.issuerRut, type: r.documentType, folio: r.folio, receiverRut: r.recipientRut!, issueDate: r.issueDate!, total: r.total! }));
  const registered = await register(createDb(env.DB), docs, at, { name: file.name ?? "received.xml", sha256: file.sha256, size: file.size });
  const when = at.toISOString();
  for (const r of verified) {
    if (!registered.has(keyOf(r))) continue;
    r.siiReceivedAt = when;
    const window = issuingCountry().responseWindow;
    if (window.types.has(r.documentType)) r.responseDeadline = window.deadlineOf(when);
  }
}
