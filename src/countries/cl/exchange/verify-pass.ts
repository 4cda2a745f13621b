/**
 * A received DTE of an envelope verified in one pass over its source (documents/dte-reader.ts: the
 * schema walk, the canonical form's checks and the fields, as the tags are met) instead of over a
 * flat index built first and walked after (verify-flat.ts): then the same checks on what the pass
 * read, the signed content and the SignedInfo taken as source spans behind their apex tags, the
 * stamp's DD and CAF as their source text. Like verify-flat.ts it only ever says "passed": it gives
 * the report the flat index would give when every check passes there on its first form, and null
 * for anything else, which then goes through the flat index and the tree, so every failure report
 * and every fallback stays theirs. test/reception/one-pass.test.ts and lazy-verify.test.ts hold its
 * reports equal to the others'.
 */
import { knownCafVerdict } from "../documents/caf";
import { readDte, readSignature, type DteReading } from "../documents/dte-reader";
import type { TedCheck } from "../documents/ted";
import { apexNamespaces, sourceCanonicalUtf8, spanCanonicalUtf8 } from "../xml/c14n";
import { BODY_CANONICAL, BODY_PLAIN, EXPANDED, OPAQUE, type FDocument, type FElement, type Scope } from "../xml/fastxml";
import { commitSeen } from "../xml/flatxml";
import { encodeLatin1, flatten, NS_DSIG, NS_SII, ownCopy, type XElement } from "../xml/xml";
import { certificateOf, keyValueMatchesCert, type SignatureCheck } from "../xml/xmldsig";
import { num, stampDisagreements, verifyPaths, type InboundDteReport, type InboundOptions } from "./verify";
import { signatureChecks, stampChecks } from "./verify-flat";

/** The report of an OPAQUE DTE of a lazily parsed envelope when it passes every check in one pass (the DTE then recorded as seen); null otherwise, the document left as it was. */
export async function verifyDtePass(dte: FElement, opts: InboundOptions): Promise<InboundDteReport | null> {
  const doc = dte.doc;
  const scope = dte.opaqueScope;
  if (!doc || !scope || dte.contentStart < 0 || !(dte.flags & OPAQUE) || dte.flags & EXPANDED) return null;
  if (dte.localName !== "DTE" || dte.namespaceURI !== NS_SII || scope.get("") !== NS_SII || inheritsXmlAttributes(dte)) return null;
  const read = readDte(dte);
  if (!read) return null;
  const v = read.values;
  const report: InboundDteReport = {
    ok: false,
    id: read.id,
    documentType: num(v[0]),
    folio: num(v[1]),
    issuerRut: v[3] ?? null,
    receiverRut: v[4] ?? null,
    issueDate: v[2] ?? null,
    total: v[6] ?? null,
    signature: { ok: false },
    ted: { ok: false },
    schemaErrors: [],
  };
  const signature = await signatureOf(dte, read, scope);
  // Signature wrapping, as verifyDteElement: the signed element is this DTE's own branch (the only ID in it: the reader takes no other).
  if (!signature || signature.reference !== `#${read.id}`) return null;
  report.signature = signature;
  const ted = await stampOf(dte, read, opts);
  if (!ted) return null;
  report.ted = ted;
  if (stampDisagreements(report, v[5] ?? "", v[7] ?? "").length) return null;
  report.ok = true;
  commitSeen(dte, BODY_CANONICAL, [], [read.id]);
  verifyPaths.pass++;
  return report;
}

/**
 * The envelope's own XMLDSig (`sig`, the root's OPAQUE Signature of an envelope parsed with its
 * parts, every DTE of the SetDTE `set` seen) read in one pass in the SII's form (dte-reader.ts
 * readSignature) instead of over a flat index (verify-flat.ts envelopeSignatureFlat, which gives the
 * same check): undefined when it is not in that form (the Signature left as it was, for the flat
 * index), else the Signature recorded as seen (its content canonical and plain: the reading takes no
 * declaration, prefix or ID in it) and the check, null when it does not verify with the SetDTE
 * canonical as written.
 */
export async function envelopeSignaturePass(sig: FElement, set: FElement): Promise<SignatureCheck | null | undefined> {
  const scope = sig.opaqueScope;
  if (!sig.doc || !scope || !(sig.flags & OPAQUE) || sig.flags & EXPANDED || inheritsXmlAttributes(sig)) return undefined;
  const s = readSignature(sig);
  if (!s) return undefined;
  commitSeen(sig, BODY_CANONICAL | BODY_PLAIN, [], []);
  const setId = set.getAttribute("ID");
  if (setId === null || s.uri !== `#${setId}`) return null;
  // Its SignedInfo's tag as apexNamespacesOf keeps it when the Signature declares the XMLDSig's namespace as the default one (the SII's form).
  const signedInfoTag = scope.get("") === NS_DSIG ? apexNamespacesOf(scope).signedInfoTag : `<SignedInfo${apexNamespaces(scope)}>`;
  return readSignatureChecks(sig.doc, s, signedInfoTag, () => sourceCanonicalUtf8(set as unknown as XElement, true));
}

/**
 * A signature read in one pass (`s`) checked in the SII profile: the key in its certificate (and its
 * KeyValue, if any, that key), then verify-flat.ts signatureChecks over the signed content (made by
 * `content` after those checks, possibly in the scratch buffer; null: not canonical as written) and
 * the SignedInfo behind its apex start tag `signedInfoTag`; null when anything fails.
 */
function readSignatureChecks(doc: FDocument, s: DteReading["signature"], signedInfoTag: string, content: () => Uint8Array<ArrayBuffer> | null): Promise<SignatureCheck | null> | null {
  const cert = certificateOf(s.certificate);
  if (!cert) return null;
  if (s.modulus !== null && !keyValueMatchesCert(cert, s.modulus, s.exponent ?? "")) return null;
  // The signed content in the scratch buffer, handed to the digest at once (WebCrypto copies it), then the SignedInfo there, handed to the verify.
  const signed = content();
  if (signed === null) return null;
  const signedInfo = () => spanCanonicalUtf8(doc, signedInfoTag, s.signedInfoContent[0], s.signedInfoContent[1], "SignedInfo", true);
  return signatureChecks(cert, s.uri, signed, s.digestValue, s.signatureValue, signedInfo);
}

/** Whether an ancestor carries an xml:* attribute (inclusive C14N would write it on the apex: left to the other paths). */
function inheritsXmlAttributes(dte: FElement): boolean {
  for (let e: unknown = dte; e && (e as FElement).nodeType === 1; e = (e as FElement).parentNode) {
    const attrs = (e as FElement).attributes;
    for (let i = 0; i < attrs.length; i++) if (attrs.item(i)!.name.startsWith("xml:")) return true;
  }
  return false;
}

/** The DTE's XMLDSig when it verifies with its SignedInfo and the signed branch canonical as written; null otherwise. */
async function signatureOf(dte: FElement, read: DteReading, scope: Scope): Promise<SignatureCheck | null> {
  const s = read.signature;
  if (!s.uri.startsWith("#")) return null;
  const doc = dte.doc!;
  const apex = apexNamespacesOf(scope);
  const [from, to] = read.branchContent;
  if (apex.branchName !== read.branch) {
    apex.branchName = ownCopy(read.branch);
    apex.branchHead = `<${read.branch}${apex.branch}`;
  }
  return readSignatureChecks(doc, s, apex.signedInfoTag, () => spanCanonicalUtf8(doc, apex.branchHead, from, to, read.branch, true, `${read.branchAttributes}>`));
}

/**
 * The namespace declarations C14N writes on the branch (the DTE's scope) and the start tag it
 * writes for the SignedInfo (of the Signature's scope: the same with the XMLDSig's default
 * namespace, which an envelope's Signature declares itself); the last two scopes' kept, as the DTEs
 * of an envelope declare the same namespaces each in a scope of its own, and its Signature another.
 * With the start of the last branch's tag (`<` its name and `branch`).
 */
function apexNamespacesOf(scope: Scope): ApexTags {
  for (let k = 0; k < lastApex.length; k++) {
    const last = lastApex[k]!;
    if (last.scope.size !== scope.size) continue;
    let same = true;
    for (const [p, u] of scope) if (last.scope.get(p) !== u) same = false;
    if (same) return last;
  }
  // Copies: the scope's texts are slices of a received file, which the memo must not keep alive.
  const kept = new Map<string, string>();
  for (const [p, u] of scope) kept.set(ownCopy(p), ownCopy(u));
  const apex: ApexTags = { scope: kept, branch: apexNamespaces(kept), signedInfoTag: `<SignedInfo${apexNamespaces(new Map(kept).set("", NS_DSIG))}>`, branchName: "", branchHead: "" };
  lastApex = [apex, ...lastApex.slice(0, 1)];
  return apex;
}
interface ApexTags {
  scope: Scope;
  branch: string;
  signedInfoTag: string;
  branchName: string;
  branchHead: string;
}
let lastApex: ApexTags[] = [];

/** The stamp's check when its FRMT verifies under a CAF this isolate already verified and the CAF covers it; null otherwise (as verify-flat.ts stampOf). */
async function stampOf(dte: FElement, read: DteReading, opts: InboundOptions): Promise<TedCheck | null> {
  const { DD: dd } = read.spans;
  const frmt = read.values[17];
  if (!dd || read.cafText === null || frmt === undefined) return null;
  // Canonical as written and without namespaces: its canonical form without namespaces is its source
  // text (a string of its own, the same for the DTEs that share the last CAF read).
  const known = knownCafVerdict(read.cafText, opts, true);
  if (!known) return null;
  const v = read.values;
  const fields = { RE: v[8] ?? "", TD: v[9] ?? "", F: v[10] ?? "", FE: v[11] ?? "", RR: v[12] ?? "", RSR: v[13] ?? "", MNT: v[14] ?? "", IT1: v[15] ?? "", TSTED: v[16] ?? "" };
  return stampChecks(known, frmt, () => ddBytes(dte, read, dd), fields);
}

/** The bytes the stamp signs: the DD's canonical form without namespaces, flattened, in ISO-8859-1 (the received bytes themselves when they are ASCII and the DD has no white space between tags). */
function ddBytes(dte: FElement, read: DteReading, [from, to]: [number, number]): Uint8Array<ArrayBuffer> {
  const doc = dte.doc!;
  // (The received bytes live in an ArrayBuffer: a file's bytes, never shared memory.)
  if (read.ddFlat && doc.bytes) return doc.bytes.subarray(from, to) as Uint8Array<ArrayBuffer>;
  const text = doc.source.slice(from, to);
  return encodeLatin1(read.ddFlat ? text : flatten(text), "DD");
}
