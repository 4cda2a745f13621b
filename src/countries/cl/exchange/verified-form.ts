/**
 * What is kept of a received signed file: the canonical form (C14N) of its signed content and of
 * the signatures over it, from the one parse of the file. Nothing unsigned is kept but whitespace
 * and the signatures' own parts of the SII profile (SignedInfo, SignatureValue, the signer's
 * KeyValue and X509Certificate): a comment, a processing instruction, an Object, anything an
 * issuer or an attacker put beside the signed content is left out, so that what is stored, served
 * and printed is only what was verified.
 */
import { canonicalize } from "../xml/c14n";
import { childElements, NS_DSIG, type XElement, type XNode } from "../xml/xml";

/** The elements of a Signature kept, by parent: the XMLDSig profile of sii-formats.md §3.3 (SignedInfo is signed: kept whole). */
const SIGNATURE_PARTS: Record<string, readonly string[]> = {
  Signature: ["SignedInfo", "SignatureValue", "KeyInfo"],
  KeyInfo: ["KeyValue", "X509Data"],
  KeyValue: ["RSAKeyValue"],
  RSAKeyValue: ["Modulus", "Exponent"],
  X509Data: ["X509Certificate"],
};
const LEAVES = new Set(["SignedInfo", "SignatureValue", "Modulus", "Exponent", "X509Certificate"]);

const isBlank = (n: XNode) => (n.nodeType === 3 || n.nodeType === 4) && /^\s*$/.test((n as unknown as { data: string }).data);
const isSignature = (n: XNode) => n.nodeType === 1 && (n as XElement).localName === "Signature" && (n as XElement).namespaceURI === NS_DSIG;

/** Adds to `omit` what a Signature element holds beyond its profile (its leaves' text is kept). */
function signatureOmissions(el: XElement, omit: Set<XNode>): void {
  const parts = SIGNATURE_PARTS[el.localName ?? ""];
  if (LEAVES.has(el.localName ?? "")) return;
  for (let c = el.firstChild; c; c = c.nextSibling) {
    const keep = c.nodeType === 1 ? (c as XElement).namespaceURI === NS_DSIG && !!parts?.includes((c as XElement).localName ?? "") : isBlank(c);
    if (!keep) omit.add(c);
    else if (c.nodeType === 1) signatureOmissions(c as XElement, omit);
  }
}

/** Adds to `omit` what the Signatures inside signed content hold beyond their profile (an EnvioRecibos' Recibos). */
function nestedSignatureOmissions(el: XElement, omit: Set<XNode>): void {
  for (let c = el.firstChild; c; c = c.nextSibling) {
    if (isSignature(c)) signatureOmissions(c as XElement, omit);
    else if (c.nodeType === 1) nestedSignatureOmissions(c as XElement, omit);
  }
}

/** What is not kept of a signed file (unsignedParts); `inContent`: some of it lies inside signed content. */
export type Omissions = Set<XNode> & { inContent?: boolean };

/**
 * The nodes under `root` that are neither signed content (`signed`: elements kept, the Signatures
 * inside them as their profile), nor the signatures that are children of `root` or of its kept
 * ancestors of signed content (kept as their profile), nor whitespace between them.
 */
export function unsignedParts(root: XElement, signed: ReadonlySet<XElement>): Omissions {
  const omit: Omissions = new Set<XNode>();
  for (const s of signed) {
    const before = omit.size;
    nestedSignatureOmissions(s, omit);
    if (omit.size > before) omit.inContent = true;
  }
  const holdsSigned = (el: XElement): boolean => {
    for (const s of signed) for (let n: XNode | null = s; n; n = n.parentNode) if (n === el) return true;
    return false;
  };
  const walk = (el: XElement) => {
    for (let c = el.firstChild; c; c = c.nextSibling) {
      if (signed.has(c as XElement) || isBlank(c)) continue;
      if (isSignature(c)) signatureOmissions(c as XElement, omit);
      else if (c.nodeType === 1 && holdsSigned(c as XElement)) walk(c as XElement);
      else omit.add(c);
    }
  };
  walk(root);
  return omit;
}

/** What is not kept of a DTE: all but its signed branch and its last Signature (the one verified), as unsignedParts. */
export function dteOmissions(dte: XElement, branch: XElement | undefined): Omissions {
  const omit = unsignedParts(dte, new Set(branch ? [branch] : []));
  const sigs = childElements(dte).filter(isSignature);
  for (const s of sigs.slice(0, -1)) omit.add(s);
  return omit;
}

/**
 * A DTE as stored: its canonical form without `omit` (dteOmissions), with the namespace
 * declarations of the context its signature verified in: the envelope's for a signature made in
 * place (`inPlace`), the DTE's own for one made on the DTE alone (sii-formats.md §3.3), and
 * `defaultNamespace` when its signature verified with it restored (C14nOptions.defaultNamespace).
 */
export function verifiedDteForm(dte: XElement, omit: ReadonlySet<XNode>, inPlace: boolean, defaultNamespace?: string): string {
  return canonicalize(dte, { omit, ...(inPlace ? {} : { boundary: dte }), ...(defaultNamespace ? { defaultNamespace } : {}) });
}
