/**
 * Chile's cessions (factoring, Ley 19.983) as the country port's `Cessions`: the AEC built and signed
 * by ./aec.ts, the SII's register (RPETC) by ./rpetc.ts, in the Worker's SII mode.
 */
import type { Cessions } from "../../port";
import { isEngineError } from "../errors";
import { ownCredentials } from "../pki/certificate";
import { siiClientFor } from "../sii";
import { buildAec, CEDIBLE_TYPES } from "./aec";
import { rpetcAuthority } from "./rpetc";

export { buildAec, signAecAsGiven, CEDIBLE_TYPES, cededDteOf, readCededDte, swornDeclaration, type AecParams, type CededDte, type SignedAec } from "./aec";
export { aecFieldProblems, partyProblems, CESSION_LIMITS, type CessionParty } from "./fields";

export const chileanCessions: Cessions = {
  types: CEDIBLE_TYPES,
  async build(p) {
    const signer = ownCredentials(p.signer);
    const party = (x: typeof p.cedent) => ({ rut: x.taxId, name: x.legalName, address: x.address, email: x.email });
    const aec = await buildAec({
      dte: p.document,
      cedent: party(p.cedent),
      assignee: party(p.assignee),
      amount: p.amount,
      lastDueDate: p.lastDueDate,
      ...(p.debtorEmail ? { debtorEmail: p.debtorEmail } : {}),
      ...(p.otherConditions ? { otherConditions: p.otherConditions } : {}),
      timestamp: p.timestamp,
      authorized: { rut: signer.rut ?? "", name: (signer.subjectCN ?? signer.rut ?? "").slice(0, 40) },
      signer,
    });
    return { xml: aec.xml, fileName: `AEC_${p.cedent.taxId}_T${aec.dte.documentType}F${aec.dte.folio}.xml`, declaration: aec.declaration };
  },
  isRefusal: (e): e is Error => isEngineError(e) && e.code !== "INTERNAL",
  authority: (env, ctx) => rpetcAuthority(siiClientFor(env, ctx)),
};
