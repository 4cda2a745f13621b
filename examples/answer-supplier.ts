/**
 * Receiving a supplier's documents and answering them: upload the file a supplier sent (an
 * EnvioDTE or one DTE, as it came by mail), read what the verification found for each document,
 * and answer the SII for the verified ones: accept (ACD) or claim (RCD, with a reason). The default
 * policy accepts what verified; an ERP passes its own `decide`, e.g. comparing each document with
 * its purchase order. A document that NEEDS_REVIEW is for a person to look at; one that FAILED is
 * not the supplier's document as signed (the service already answered its sender why), so there is
 * nothing to accept or claim at the SII.
 *
 *   DTE_API_URL=http://127.0.0.1:8787 DTE_API_KEY=dte_test_… COMPANY=cmp_… \
 *     npx tsx examples/answer-supplier.ts envio.xml
 */
import { readFileSync } from "node:fs";
import { createDteClient, type ApiError, type components, type DteClient } from "../clients/typescript";

type Received = components["schemas"]["ReceivedDocument"];

export interface AnswerOptions {
  client: DteClient;
  companyId: string;
  /** The file as the supplier sent it. */
  file: Uint8Array;
  fileName?: string;
  /** What to answer for a verified document (default: ACD); null leaves it unanswered. */
  decide?: (doc: Received) => { action: "ACD" | "RCD"; reason?: string } | null;
  log?: (line: string) => void;
}

export interface Answered {
  id: string;
  folio: number;
  verification: string;
  action: "ACD" | "RCD" | null;
  response_state: string;
}

function ok<T>(step: string, r: { data?: T; error?: unknown; response: Response }): T {
  if (r.data !== undefined) return r.data;
  const e = (r.error as ApiError | undefined)?.error;
  throw new Error(`${step}: HTTP ${r.response.status} ${e ? `${e.code}: ${e.message}` : String(r.error)}`);
}

/** The default policy: accept what verified. */
export const acceptVerified = (): { action: "ACD" | "RCD"; reason?: string } | null => ({ action: "ACD" });

export async function answerSupplierFile(opts: AnswerOptions): Promise<Answered[]> {
  const { client, companyId } = opts;
  const log = opts.log ?? (() => undefined);
  const decide = opts.decide ?? acceptVerified;
  const uploaded = ok("upload", await client.POST("/api/reception/invoices/upload", {
    params: { query: { company_id: companyId } },
    body: { file: "" },
    bodySerializer: () => {
      const form = new FormData();
      form.append("file", new Blob([opts.file as Uint8Array<ArrayBuffer>], { type: "application/xml" }), opts.fileName ?? "envio.xml");
      return form;
    },
  }));
  const out: Answered[] = [];
  for (const doc of uploaded.documents) {
    log(`${doc.document_type} ${doc.folio} from ${doc.issuer.legal_name}: ${doc.verification.status} (${doc.outcome})`);
    const decision = doc.verification.status === "VERIFIED" ? decide(doc) : null;
    let state = doc.response_state;
    if (decision) {
      const answered = ok("send_response", await client.POST("/api/reception/invoices/{purchase_id}/send_response", {
        params: { path: { purchase_id: doc.id }, query: { company_id: companyId } },
        body: decision.reason ? { action: decision.action, reason: decision.reason } : { action: decision.action },
      }));
      state = answered.response_state;
      log(`  answered ${decision.action}: ${state}`);
    }
    out.push({ id: doc.id, folio: doc.folio, verification: doc.verification.status, action: decision?.action ?? null, response_state: state });
  }
  return out;
}

if (typeof process !== "undefined" && process.argv[1]?.endsWith("answer-supplier.ts")) {
  const need = (name: string) => process.env[name] ?? (console.error(`set ${name}`), process.exit(2));
  const path = process.argv[2] ?? (console.error("usage: answer-supplier.ts FILE.xml"), process.exit(2));
  const client = createDteClient({ baseUrl: process.env.DTE_API_URL ?? "http://127.0.0.1:8787", apiKey: need("DTE_API_KEY") });
  await answerSupplierFile({ client, companyId: need("COMPANY"), file: readFileSync(path), fileName: path, log: console.log });
}
