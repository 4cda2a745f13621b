/**
 * The checks of a received DTE beyond its cryptography: who signed it (pki/trust.ts) and whether
 * its amounts agree (documents/totals-check.ts). Every verification path (the tree, the flat index,
 * the one pass) hands its report and the DTE element here, so that each report carries them the
 * same way; a DTE of a lazily parsed envelope whose content was never built as a tree is parsed
 * from its own source text for them.
 */
import { checkTotals } from "../documents/totals-check";
import { checkSigner, type TrustMode } from "../pki/trust";
import { fastParse, FElement } from "../xml/fastxml";
import { childElements, childText, firstChild, NS_DSIG, parseXml, type XElement } from "../xml/xml";
import { certificateOf } from "../xml/xmldsig";
import { BRANCH_NAMES } from "../documents/dte-reader-model";
import type { InboundDteReport, InboundOptions } from "./verify";

/** The signer trust of a verification: the simulator's test CA counts only in simulator mode. */
const trustMode = (opts: InboundOptions): TrustMode => (opts.mode === "simulator" ? "simulator" : "live");

/**
 * The DTE's content as a tree: `dte` itself when it has one, else (an OPAQUE DTE of a lazily parsed
 * envelope) its source between its tags, parsed with the namespaces in scope there. Null when it
 * cannot be read.
 */
function treeOf(dte: XElement): XElement | null {
  if (!(dte instanceof FElement) || dte.firstChild || !dte.doc || dte.contentStart < 0) return dte;
  let decls = "";
  for (const [prefix, uri] of dte.opaqueScope ?? []) {
    if (prefix === "xml") continue;
    decls += ` ${prefix ? `xmlns:${prefix}` : "xmlns"}="${uri.replace(/&/g, "&amp;").replace(/"/g, "&quot;")}"`;
  }
  const text = `<${dte.nodeName}${decls}>${dte.doc.source.slice(dte.contentStart, dte.contentEnd)}</${dte.nodeName}>`;
  try {
    const fast = fastParse(text);
    return ((fast?.documentElement as unknown as XElement | null) ?? parseXml(text, "The DTE").documentElement) as XElement | null;
  } catch {
    return null;
  }
}

/** Fills `report.signer` and `report.totals` for the DTE element `dte` whose signature and stamp were checked. */
export async function addContentChecks(report: InboundDteReport, dte: XElement, opts: InboundOptions): Promise<void> {
  const tree = treeOf(dte);
  if (!tree) {
    const message = "The document's content cannot be read for this check.";
    report.signer = { result: "NOT_CHECKED", message, kind: null, name: null, rut: null, issuer: null, notBefore: null, notAfter: null };
    report.totals = { result: "FAILED", message };
    return;
  }
  // The signature verifyChildSignature checked: the DTE's last XMLDSig Signature child.
  const sigs = childElements(tree, "Signature").filter((s) => s.namespaceURI === NS_DSIG);
  const keyInfo = sigs.length ? firstChild(sigs[sigs.length - 1]!, "KeyInfo") : undefined;
  const x509 = keyInfo && firstChild(keyInfo, "X509Data");
  const cert = x509 ? certificateOf(childText(x509, "X509Certificate") ?? "") : undefined;
  const branch = childElements(tree).find((c) => BRANCH_NAMES.includes(c.localName ?? ""));
  const tmstFirma = (branch && childText(branch, "TmstFirma")) ?? null;
  report.signer = await checkSigner(report.signature.ok, cert ?? undefined, { tmstFirma, issueDate: report.issueDate }, trustMode(opts));
  report.totals = checkTotals(tree);
}
