/**
 * The checks of a received DTE beyond its cryptography: who signed it (pki/trust.ts) and whether
 * its amounts agree (documents/totals-check.ts), read from the same parsed element as the rest.
 */
import { checkTotals } from "../documents/totals-check";
import { checkSigner, type TrustMode } from "../pki/trust";
import { childText, type XElement } from "../xml/xml";
import type { InboundDteReport, InboundOptions } from "./verify";

/** The signer trust of a verification: the simulator's test CA counts only in simulator mode. */
const trustMode = (opts: InboundOptions): TrustMode => (opts.mode === "simulator" ? "simulator" : "live");

/** Fills `report.signer` and `report.totals` for the DTE element `dte` (its signed branch `branch`) whose signature and stamp were checked. */
export async function addContentChecks(report: InboundDteReport, dte: XElement, branch: XElement | undefined, opts: InboundOptions): Promise<void> {
  // The certificate the signature was verified with (none: a bare key).
  const tmstFirma = (branch && childText(branch, "TmstFirma")) ?? null;
  report.signer = await checkSigner(report.signature.ok, report.signature.certificate, { tmstFirma, issueDate: report.issueDate }, trustMode(opts));
  report.totals = checkTotals(dte);
}
