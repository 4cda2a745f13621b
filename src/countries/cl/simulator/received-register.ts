/**
 * The simulated SII's register learns of documents a test-mode company received by upload or
 * e-mail and verified, as if their issuer had sent them to the SII when the company received them:
 * the accept and claim services (ACD, ERM, RCD, …), the reception time and its 8-day deadline then
 * work offline on a supplier's real file. A document the register already accepted is left as it is.
 */
import type { Db } from "../../../storage/db/client";
import { acceptedAmong, saveEnvio } from "./store";
import { documentKeyText, ENVIO_GLOSA, statsOf, type DocumentVerdict } from "./validate";

export type ReceivedDocument = Omit<DocumentVerdict, "status" | "errors">;

/** Registers the documents not registered yet, received at `at` (one envelope per issuer); returns the keys registered (documentKeyText). Wired into reception by the composition root (reception/test-register.ts). */
export async function registerReceived(db: Db, docs: ReceivedDocument[], at: Date, file: { name: string; sha256: string; size: number }): Promise<Set<string>> {
  const known = await acceptedAmong(db, docs);
  const fresh = docs.filter((d) => !known.has(documentKeyText(d)));
  const byIssuer = new Map<string, ReceivedDocument[]>();
  for (const d of fresh) byIssuer.set(d.issuerRut, [...(byIssuer.get(d.issuerRut) ?? []), d]);
  for (const [issuerRut, group] of byIssuer) {
    const documents: DocumentVerdict[] = group.map((d) => ({ ...d, status: "DOK", errors: [] }));
    const verdict = { kind: "EnvioDTE" as const, finalStatus: "EPR" as const, glosa: ENVIO_GLOSA.EPR!, errors: [], documents };
    await saveEnvio(db, { channel: "soap", companyRut: issuerRut, senderRut: issuerRut, fileName: file.name, sha256: file.sha256, size: file.size, now: at, verdict, stats: statsOf(documents), scenario: undefined });
  }
  return new Set(fresh.map(documentKeyText));
}
