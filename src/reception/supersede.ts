/**
 * What a received copy of a document is, beside the copies of the same key (issuer, type, folio)
 * received before it with other XML. The same document often arrives twice in different forms (a
 * standalone DTE extracted from its envelope, then the envelope itself): that is a copy, not a
 * duplicate. A copy that verifies takes the place of an earlier copy that did not (the earlier one
 * kept in the document's history, its XML still stored), as long as no earlier copy verified. Only
 * a different document, when one of its key was received before, is a duplicate (EstadoRecepDTE 4).
 */
import type { ReceivedDocumentReading } from "../countries/port";
import type { ReceivedFile } from "./intake";
import { receivedFileOfRow, type ReceivedRow } from "./view";

/** An earlier copy kept in the history of the document that superseded it (received_file.superseded). */
export interface SupersededCopy {
  xml_sha256: string;
  reception_status: number | null;
  /** Its file's name and when it was taken in, as its record kept them. */
  name: string | null;
  received_at: string | null;
  channel: ReceivedRow["channel"];
  /** Its checks' verdicts, each failed one with its message. */
  failed_checks: { name: string; message: string | null }[];
  superseded_at: string;
}

export type CopyVerdict =
  | { kind: "SUPERSEDES"; prior: ReceivedRow }
  | { kind: "COPY"; prior: ReceivedRow }
  | { kind: "DUPLICATE" };

/** Whether an earlier document's row says what the report says: the same data (parties, dates, amounts, lines). */
export function sameDocument(row: ReceivedRow, d: ReceivedDocumentReading): boolean {
  return row.summary === JSON.stringify(d.content) && row.total === d.total && row.issueDate === d.issueDate && row.recipientRut === d.receiverRut;
}

/**
 * What a copy is beside the `earlier` rows of its key (arrival order), given whether it verifies on
 * its own (EstadoRecepDTE 0 judged as if no other copy existed).
 */
export function copyVerdict(earlier: ReceivedRow[], d: ReceivedDocumentReading, verifiesAlone: boolean): CopyVerdict {
  const original = earlier[0];
  if (original && verifiesAlone && !earlier.some((r) => r.receptionStatus === 0)) return { kind: "SUPERSEDES", prior: original };
  const same = earlier.find((r) => sameDocument(r, d));
  return same ? { kind: "COPY", prior: same } : { kind: "DUPLICATE" };
}

/** The received_file of the copy that supersedes `prior`: its own, with the prior copy added to the history it carried. */
export function supersedingFile(receivedFile: string, prior: ReceivedRow, at: Date): string {
  const before = receivedFileOfRow(prior);
  const checks = prior.checks ? (JSON.parse(prior.checks) as { name: string; result: string; message: string | null }[]) : [];
  const copy: SupersededCopy = {
    xml_sha256: prior.xmlSha256 ?? "",
    reception_status: prior.receptionStatus,
    name: before?.name ?? null,
    received_at: before?.received_at ?? prior.createdAt,
    channel: prior.channel,
    failed_checks: checks.filter((c) => c.result === "FAILED").map((c) => ({ name: c.name, message: c.message })),
    superseded_at: at.toISOString(),
  };
  const file = JSON.parse(receivedFile) as ReceivedFile;
  return JSON.stringify({ ...file, superseded: [...(before?.superseded ?? []), copy] } satisfies ReceivedFile);
}
