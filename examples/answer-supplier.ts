/**
 * Receiving a supplier's documents and answering them: upload the file a supplier sent (an
 * EnvioDTE or one DTE, as it came by mail), read what the verification found for each document,
 * and accept the verified ones (ACD) or claim the others (RCD) with the failed checks as the
 * reason. A real ERP would also compare the document with its purchase order before accepting; a
 * document that NEEDS_REVIEW is for a person to look at, not to accept blindly.
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
  /** What to answer for a document (default: ACD when VERIFIED, RCD when FAILED, nothing otherwise). */
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

/** The default policy: accept what verified, claim what failed, leave the rest to a person. */
export function defaultDecision(doc: Received): { action: "ACD" | "RCD"; reason?: string } | null {
  if (doc.verification.status === "VERIFIED") return { action: "ACD" };
  if (doc.verification.status !== "FAILED") return null;
  const failed = doc.verification.checks.filter((c) => c.result === "FAILED").map((c) => `${c.name}: ${c.message}`);
  return { action: "RCD", reason: failed.join("; ").slice(0, 256) || "The document did not verify" };
}

export async function answerSupplierFile(opts: AnswerOptions): Promise<Answered[]> {
  const { client, companyId } = opts;
  const log = opts.log ?? (() => undefined);
  const decide = opts.decide ?? defaultDecision;
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
    const decision = decide(doc);
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
