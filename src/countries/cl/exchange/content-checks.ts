/**
 * The checks of a received DTE beyond its cryptography: who signed it (pki/trust.ts) and whether
 * its amounts agree (documents/totals-check.ts), read from the same parsed element as the rest.
 */
import { checkTotals } from "../documents/totals-check";
import { checkSigner, type TrustMode } from "../pki/trust";
import { childElements, childText, NS_DSIG, type XElement } from "../xml/xml";
import { certificateOf, signatureCertificateText } from "../xml/xmldsig";
import type { InboundDteReport, InboundOptions } from "./verify";

/** The signer trust of a verification: the simulator's test CA counts only in simulator mode. */
const trustMode = (opts: InboundOptions): TrustMode => (opts.mode === "simulator" ? "simulator" : "live");

/** Fills `report.signer` and `report.totals` for the DTE element `dte` (its signed branch `branch`) whose signature and stamp were checked. */
export async function addContentChecks(report: InboundDteReport, dte: XElement, branch: XElement | undefined, opts: InboundOptions): Promise<void> {
  // The signature verifyChildSignature checked: the DTE's last XMLDSig Signature child.
  const sigs = childElements(dte, "Signature").filter((s) => s.namespaceURI === NS_DSIG);
  const certText = sigs.length ? signatureCertificateText(sigs[sigs.length - 1]!).trim() : "";
  const cert = certText ? certificateOf(certText) : undefined;
  const tmstFirma = (branch && childText(branch, "TmstFirma")) ?? null;
  report.signer = await checkSigner(report.signature.ok, cert ?? undefined, { tmstFirma, issueDate: report.issueDate }, trustMode(opts));
  report.totals = checkTotals(dte);
}
