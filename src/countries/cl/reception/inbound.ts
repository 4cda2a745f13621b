/**
 * Suppliers' files as Chile's companies receive them (the country port's Inbound): an EnvioDTE or a
 * lone DTE, verified once (../exchange/verify.ts), each DTE judged for the RecepcionEnvio that
 * acknowledges it; and the signed replies of Ley 19.983 (sii-formats.md §5).
 */
import type { Inbound, ReceivedDocumentReading, ReceivedFileReading, IssuerResolution } from "../../port";
import { receptionCafTrust, verifyInbound, type InboundReport } from "../exchange/verify";
import { xmlDocumentBytes } from "../xml/xml";
import { isValidRut, normalizeRut } from "../documents/rut";
import { judge, SII_STATUS_WAITING } from "./judge";
import { acknowledgment, refusalOf, reply, RESPONSES, statusText } from "./replies";

/**
 * A buyer's reply to a document the company issued (RespuestaDTE, EnvioRecibos) reaches the same
 * exchange address as suppliers' documents: say what it is rather than "Unexpected root element".
 */
function replyProblem(root: string | undefined): string | null {
  if (root !== "RespuestaDTE" && root !== "EnvioRecibos") return null;
  const what = root === "RespuestaDTE" ? "a RespuestaDTE (a buyer's reception or acceptance reply)" : "an EnvioRecibos (a buyer's receipt of goods or services)";
  return `The file is ${what} to a document this company issued, not a document sent to it: upload it at POST /api/companies/{company_id}/invoices/buyer_replies (mailed to the reception address, it is read by itself).`;
}

/** Why nothing of the file is taken, or null. */
function problemOf(report: InboundReport): string | null {
  if (report.kind === "unknown") return replyProblem(report.root) ?? report.message ?? "Not an EnvioDTE or DTE.";
  if (report.kind === "EnvioBOLETA") return "An EnvioBOLETA holds boletas, which are not sent to their buyers as DTEs to acknowledge.";
  if (report.documents.length === 0) return report.message ?? "The envelope holds no DTE.";
  return null;
}

/** The Caratula's RutEmisor, NroResol and FchResol; null when there is no Caratula or a value is not well formed. */
export function caratulaResolution(c: InboundReport["caratula"]): IssuerResolution | null {
  const [issuerRut, number, date] = [c?.rutEmisor, c?.nroResol, c?.fchResol];
  if (!issuerRut || !number || !/^\d{1,6}$/.test(number) || !date || !/^\d{4}-\d{2}-\d{2}$/.test(date)) return null;
  return { issuerRut: issuerRut.slice(0, 12), number: Number(number), date };
}

export async function readReceivedFile(bytes: Uint8Array, opts: { simulated: boolean }): Promise<ReceivedFileReading> {
  const report = await verifyInbound(bytes, receptionCafTrust(opts.simulated ? "simulator" : "sii"));
  const problem = problemOf(report);
  const documents: ReceivedDocumentReading[] = problem
    ? []
    : report.documents.map((d) => ({
        documentType: d.documentType,
        folio: d.folio,
        issuerRut: d.issuerRut && isValidRut(d.issuerRut) ? normalizeRut(d.issuerRut) : (d.issuerRut ?? "?"),
        receiverRut: d.receiverRut,
        issueDate: d.issueDate,
        total: d.total,
        content: d.content,
        file: xmlDocumentBytes(d.xml),
        judge: (companyRut, duplicate) => judge(report, d, companyRut, duplicate),
      }));
  const c = report.caratula;
  return {
    kind: report.kind,
    problem,
    ...(report.root ? { root: report.root } : {}),
    envelope: {
      id: report.setId ?? null,
      digest: report.envelopeSignature?.ok ? (report.envelopeSignature.digestValue ?? null) : null,
      issuerRut: c?.rutEmisor ?? null,
      recipientRut: c?.rutReceptor ?? null,
      resolution: caratulaResolution(c),
    },
    documents,
  };
}

export const chileanInbound: Inbound = {
  read: readReceivedFile,
  statusCheckWaiting: SII_STATUS_WAITING,
  statusText,
  responses: RESPONSES,
  refusalOf,
  reply,
  acknowledgment,
};
