/**
 * The SII client as the issuance pipeline's country port (src/invoices/pipeline/authority.ts TaxAuthority,
 * DECISIONS 15). Returns a plain object (callers spread it to wrap one method).
 *
 * upload: EnvioDTE -> DTEUpload, EnvioBOLETA -> boleta REST. STATUS 99 is success (original track).
 * poll:   EnvioDTE -> QueryEstUp; at EPR the per-type counts decide each type at once when they are
 *         uniform (all accepted: DOK / all objected: RLV); otherwise (rejections, mixed, or a type
 *         missing from the counts) each document of that type is asked with QueryEstDte (DOK/… vs
 *         FAU = RCH with the reason in GLOSA_ERR). fiscalStatus is the document's own code.
 *         EnvioBOLETA -> REST status; documents not listed in detalle_rep_rech are accepted.
 * Envelope rejections (RSC, RFR, RCT, ...) reject every document. SiiError -> AuthorityError with the
 * same `retryable` and the SII code as fiscalStatus.
 */
import { AuthorityError, type DocumentKey, type DocumentVerdict, type EnvelopeVerdict, type ReceptionAuthority, type TaxAuthority } from "../../port";
import { siiReceptionAuthority } from "./reception";
import type { SiiClient, SiiCertificate } from "./client";
import { SiiError } from "./errors";
import { siiClientFor } from "./index";
import { explainSiiStatus, type EnvioTypeCounts } from "./status";
import { ownCredentials } from "../pki/certificate";

/** Turns a SiiError into the pipeline's error (main: `new AuthorityError(message, retryable, fiscalStatus)`). */
export type AuthorityErrorFactory = (message: string, retryable: boolean, fiscalStatus?: string) => Error;

const text = (code: string, kind: "envio" | "document" | "dte", extra?: string) => {
  const i = explainSiiStatus(kind, code);
  return `${code}: ${i.es} / ${i.en}${extra ? ` ${extra}` : ""}`;
};

async function perDocument(client: SiiClient, cert: SiiCertificate, companyRut: string, d: DocumentKey, typeCounts: EnvioTypeCounts | undefined): Promise<DocumentVerdict> {
  const st = await client.queryEstDte({ cert, companyRut, receiverRut: d.receiverRut, documentType: d.documentType, folio: d.folio, issueDate: d.issueDate, total: d.total });
  if (st.outcome === "ACCEPTED") {
    // DOK does not tell reparos apart: the type's counts do.
    if (typeCounts && typeCounts.objected > 0) {
      return { outcome: "ACCEPTED_WITH_OBJECTIONS", fiscalStatus: "RLV", message: text("RLV", "document", `(${typeCounts.objected} of ${typeCounts.accepted} accepted documents of type ${d.documentType} carry reparos; SII answered ${st.estado})`) };
    }
    return { outcome: "ACCEPTED", fiscalStatus: st.estado, message: text(st.estado, "dte") };
  }
  // After EPR, "not received" (FAU) means the SII rejected it in this envelope: the document's own
  // verdict is RCH, with whatever reason the SII gives (its result e-mail carries the DTE-x-xxx codes).
  if (st.estado === "FAU") return { outcome: "REJECTED", fiscalStatus: "RCH", message: text("RCH", "document", st.glosaErr ? `(${st.glosaErr})` : "(the reasons are in the SII's result e-mail or portal)") };
  return { outcome: "REJECTED", fiscalStatus: st.estado, message: text(st.estado, "dte", st.glosaErr ? `(${st.glosaErr})` : undefined) };
}

/**
 * The pipeline port over a SiiClient. On main: `siiTaxAuthority(siiClientFor(env, ctx), (m, r, f) =>
 * new AuthorityError(m, r, f))`. Without a factory, SiiErrors pass through unchanged.
 */
export function siiTaxAuthority(client: SiiClient, makeError?: AuthorityErrorFactory): TaxAuthority {
  const guard = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (e) {
      if (e instanceof SiiError && makeError) throw makeError(`${e.message}${e.es ? ` — ${e.es}` : ""}`, e.retryable, e.siiCode);
      throw e;
    }
  };
  return {
    upload: (p) =>
      guard(async () => {
        const r = p.kind === "EnvioBOLETA" ? await client.uploadBoleta({ cert: ownCredentials(p.signer), companyRut: p.companyRut, file: p.xml, fileName: p.fileName }) : await client.uploadEnvio({ cert: ownCredentials(p.signer), companyRut: p.companyRut, file: p.xml, fileName: p.fileName });
        return { trackId: r.trackId, duplicate: r.duplicate };
      }),

    poll: (p) =>
      guard(async (): Promise<EnvelopeVerdict> => {
        const st = p.kind === "EnvioBOLETA" ? await client.queryBoletaEnvio({ cert: ownCredentials(p.signer), companyRut: p.companyRut, trackId: p.trackId }) : await client.queryEstUp({ cert: ownCredentials(p.signer), companyRut: p.companyRut, trackId: p.trackId });
        const message = `${st.estado}: ${st.es} / ${st.en}`;
        if (st.outcome === "PENDING") return { final: false, fiscalStatus: st.estado, message };
        const documents = new Map<string, DocumentVerdict>();
        if (st.estado !== "EPR") {
          // The whole envelope was refused (schema, signature, carátula).
          for (const d of p.documents) documents.set(d.invoiceId, { outcome: "REJECTED", fiscalStatus: st.estado, message: st.glosa ? `${message} (${st.glosa})` : message });
          return { final: true, fiscalStatus: st.estado, message, documents };
        }
        if (p.kind === "EnvioBOLETA") {
          for (const d of p.documents) {
            const det = st.details.find((x) => x.type === d.documentType && x.folio === d.folio);
            if (!det) documents.set(d.invoiceId, { outcome: "ACCEPTED", fiscalStatus: "DOK", message: text("DOK", "document") });
            else {
              const outcome = det.outcome === "ACCEPTED_WITH_OBJECTIONS" ? "ACCEPTED_WITH_OBJECTIONS" : det.outcome === "ACCEPTED" ? "ACCEPTED" : "REJECTED";
              documents.set(d.invoiceId, { outcome, fiscalStatus: det.estado, message: text(det.estado, "document", det.errors.length ? `(${det.errors.join("; ")})` : undefined) });
            }
          }
          return { final: true, fiscalStatus: st.estado, message, documents };
        }
        for (const d of p.documents) {
          const c = st.counts.find((x) => x.type === d.documentType);
          // The document's own verdict (DOK, RLV, RCH), never the envelope's EPR.
          if (c && c.informed > 0 && c.rejected === 0 && c.objected === 0) documents.set(d.invoiceId, { outcome: "ACCEPTED", fiscalStatus: "DOK", message: text("DOK", "document", `(envelope ${st.estado}: ${c.accepted}/${c.informed} of type ${d.documentType} accepted)`) });
          else if (c && c.informed > 0 && c.rejected === 0 && c.objected >= c.informed) documents.set(d.invoiceId, { outcome: "ACCEPTED_WITH_OBJECTIONS", fiscalStatus: "RLV", message: text("RLV", "document") });
          // Rejected or mixed: each document is asked, so a rejection carries the reason the SII gives.
          else documents.set(d.invoiceId, await perDocument(client, ownCredentials(p.signer), p.companyRut, d, c));
        }
        return { final: true, fiscalStatus: st.estado, message, documents };
      }),
  
    // Not an issuance step: the caller needs the error's own retryability (a refused range stays refused).
    requestCaf: async (p) => {
      try {
        return await client.requestCaf(p);
      } catch (e) {
        if (e instanceof SiiError) throw new AuthorityError(e.message, e.retryable, e.siiCode);
        throw e;
      }
    },
  };
}

/** DTEUpload STATUS codes that mean the file itself is wrong: its documents are rejected. */
const CONTENT_REFUSALS: Record<string, string> = { "7": "RSC", "8": "RFR" };

/**
 * Only a refusal of the file's content rejects its documents. Every other failure (the SII down,
 * token or authorisation trouble that a new certificate fixes) keeps the documents waiting and
 * retrying, so no folio is burnt for a problem that is not the document's.
 */
export function toAuthorityError(message: string, retryable: boolean, siiCode?: string): AuthorityError {
  const refusal = siiCode ? CONTENT_REFUSALS[siiCode] : undefined;
  if (!retryable && refusal) return new AuthorityError(`The SII refused the file: ${message}`, false, refusal);
  return new AuthorityError(message, true, siiCode);
}

/** The Chilean SII (or its simulator, by SII_MODE) behind the country port. */
export function siiAuthority(env: Env, ctx?: ExecutionContext, client: SiiClient = siiClientFor(env, ctx)): TaxAuthority {
  return siiTaxAuthority(client, toAuthorityError);
}

/** The SII's reception side (accept/claim WS, reception time, register) for this Worker's SII mode. */
export function siiReception(env: Env, ctx?: ExecutionContext, client: SiiClient = siiClientFor(env, ctx)): ReceptionAuthority {
  return siiReceptionAuthority(client, (m, r, f) => new AuthorityError(m, r, f));
}
