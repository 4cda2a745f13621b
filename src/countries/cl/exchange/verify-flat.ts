/**
 * A received DTE of an envelope verified over its flat index (xml/flatxml.ts) instead of its tree:
 * the schema walk, the XMLDSig signature, the stamp (TED) with its CAF, and the stamp against the
 * document, the same checks verify.ts verifyDteElement makes. It only ever says "passed": it returns
 * the report verifyDteElement would give when every check passes on the first form it tries (the
 * signed content canonical as written, the SII profile's algorithms, a CAF already verified in this
 * isolate, no schema problem), and null for anything else, which then goes through the tree, so
 * every failure report and every fallback (namespace variants, other algorithms) stays exactly the
 * tree's. test/reception/lazy-verify.test.ts holds the reports of both paths equal.
 */
import { b64decode, b64encode } from "../pki/asn1";
import { knownCafVerdict, type CafElementCheck } from "../documents/caf";
import { dteSchemaProblemsFlat } from "../documents/dte-schema";
import type { TedCheck } from "../documents/ted";
import { flatCanonical, flatCanonicalUtf8, sourceCanonicalUtf8 } from "../xml/c14n";
import type { FElement } from "../xml/fastxml";
import * as flat from "../xml/flatxml";
import * as model from "../documents/dte-reader-model";
import type { FlatIndex } from "../xml/flatxml";
import { encodeLatin1, flatten, NS_DSIG, type XElement } from "../xml/xml";
import { ALG, certificateOf, keyValueMatchesCert, signerOf, verifyKey, type SignatureCheck } from "../xml/xmldsig";
import type { CertificateInfo } from "../pki/certificate";
import { num, stampDisagreements, verifyPaths, type InboundDteReport, type InboundOptions, type InboundReport } from "./verify";

// Module-local copies of the branch names and the index's accessors (a module runner may read each import through a getter).
const { BRANCH_NAMES } = model;
const { attr, child, childTextOf, commitIndex, indexElement, plainChildTexts, textOf } = flat;

/**
 * The report of an OPAQUE DTE of a lazily parsed envelope when it passes every check over its flat
 * index (the document then records the DTE as seen, as `expand` would); null otherwise, and the
 * document is left as it was. `scratch` holds the index for the next DTE of the envelope to write over.
 */
export async function verifyDteFlat(dte: FElement, opts: InboundOptions, scratch: { index?: FlatIndex }): Promise<InboundDteReport | null> {
  const x = indexElement(dte, scratch.index);
  if (!x) return null;
  scratch.index = x;
  const report = await verifyIndexed(x, opts);
  if (!report) return null;
  commitIndex(x);
  verifyPaths.flat++;
  return report;
}

async function verifyIndexed(x: FlatIndex, opts: InboundOptions): Promise<InboundDteReport | null> {
  let branch = -1;
  for (let c = x.first[0]!; c >= 0 && branch < 0; c = x.next[c]!) if (BRANCH_NAMES.includes(x.local[c]!)) branch = c;
  if (branch < 0 || dteSchemaProblemsFlat(x).length) return null;
  const enc = child(x, branch, "Encabezado");
  const idDoc = enc < 0 ? -1 : child(x, enc, "IdDoc");
  const emisor = enc < 0 ? -1 : child(x, enc, "Emisor");
  const receptor = enc < 0 ? -1 : child(x, enc, "Receptor");
  const totales = enc < 0 ? -1 : child(x, enc, "Totales");
  const id = attr(x, branch, "ID");
  const report: InboundDteReport = {
    ok: false,
    id,
    documentType: num(textIn(x, idDoc, "TipoDTE")),
    folio: num(textIn(x, idDoc, "Folio")),
    issuerRut: textIn(x, emisor, "RUTEmisor") ?? null,
    receiverRut: textIn(x, receptor, "RUTRecep") ?? null,
    issueDate: textIn(x, idDoc, "FchEmis") ?? null,
    total: textIn(x, totales, "MntTotal") ?? null,
    signature: { ok: false },
    ted: { ok: false },
    schemaErrors: [],
  };
  const signature = await signatureOf(x);
  // Signature wrapping, as verifyDteElement: the signed element is this DTE's own branch, its ID once.
  if (!signature || !id || signature.reference !== `#${id}` || x.ids.get(id)!.length !== 1) return null;
  report.signature = signature;
  const ted = await stampOf(x, branch, opts);
  if (!ted) return null;
  report.ted = ted;
  const detalle = child(x, branch, "Detalle");
  const firstItem = childTextOf(x, detalle < 0 ? branch : detalle, "NmbItem") ?? "";
  if (stampDisagreements(report, textIn(x, receptor, "RznSocRecep") ?? "", firstItem).length) return null;
  report.ok = true;
  return report;
}

/** The DTE's XMLDSig when it verifies in the SII profile with its content canonical as written; null otherwise. */
function signatureOf(x: FlatIndex): Promise<SignatureCheck | null> {
  let sig = -1;
  for (let c = x.first[0]!; c >= 0; c = x.next[c]!) if (x.local[c] === "Signature" && x.ns[c] === NS_DSIG) sig = c;
  // The referenced element: the first with that ID below the DTE (findById from the Signature's parent).
  return signatureAt(x, sig, (id) => {
    const withId = x.ids.get(id);
    const target = withId === undefined ? undefined : withId[0] !== 0 ? withId[0] : withId[1];
    return target === undefined ? null : flatCanonicalUtf8(x, target, true);
  });
}

/**
 * The envelope's own XMLDSig (`sig`, the root's OPAQUE Signature of an envelope parsed with its
 * parts, fastxml.ts fastParseEnvelope) over its flat index, when it verifies in the SII profile with
 * the SetDTE (`set`, every DTE seen) canonical as written; null otherwise. The Signature is
 * recorded as seen either way (the SetDTE's canonical form from the source needs it).
 */
export async function envelopeSignatureFlat(sig: FElement, set: FElement, scratch: { index?: FlatIndex }): Promise<SignatureCheck | null> {
  const x = indexElement(sig, scratch.index);
  if (!x) return null;
  scratch.index = x;
  commitIndex(x);
  const setId = set.getAttribute("ID");
  return signatureAt(x, 0, (id) => (id === setId ? sourceCanonicalUtf8(set as unknown as XElement, true) : null));
}

const CARATULA_FIELDS = ["RutEmisor", "RutEnvia", "RutReceptor", "FchResol", "NroResol", "TmstFirmaEnv"] as const;

/** The envelope's Caratula (an OPAQUE element of an envelope parsed with its parts) read from its source when plain (flatxml.ts plainChildTexts), else over its flat index, recorded as seen; null outside the subset. */
export function caratulaFlat(car: FElement, scratch: { index?: FlatIndex }): NonNullable<InboundReport["caratula"]> | null {
  const plain = plainChildTexts(car, CARATULA_FIELDS);
  if (plain) return { rutEmisor: plain[0], rutEnvia: plain[1], rutReceptor: plain[2], fchResol: plain[3], nroResol: plain[4], tmstFirmaEnv: plain[5] };
  const x = indexElement(car, scratch.index);
  if (!x) return null;
  scratch.index = x;
  commitIndex(x);
  const t = (local: string) => childTextOf(x, 0, local);
  return { rutEmisor: t("RutEmisor"), rutEnvia: t("RutEnvia"), rutReceptor: t("RutReceptor"), fchResol: t("FchResol"), nroResol: t("NroResol"), tmstFirmaEnv: t("TmstFirmaEnv") };
}

/**
 * Signature element `sig` of the index verified in the SII profile (one Reference to an ID, C14N,
 * RSA-SHA1, SHA-1, the key in its certificate), `signed` giving the canonical form (UTF-8) of the
 * element with that ID as written (null: not so), possibly in the scratch buffer; null for anything else.
 */
async function signatureAt(x: FlatIndex, sig: number, signed: (id: string) => Uint8Array<ArrayBuffer> | null): Promise<SignatureCheck | null> {
  const si = sig < 0 ? -1 : child(x, sig, "SignedInfo");
  const sv = sig < 0 ? -1 : child(x, sig, "SignatureValue");
  if (si < 0 || sv < 0) return null;
  const ref = child(x, si, "Reference");
  let refs = 0;
  for (let c = x.first[si]!; c >= 0; c = x.next[c]!) if (x.local[c] === "Reference") refs++;
  const uri = attr(x, ref, "URI") ?? "";
  if (refs !== 1 || !uri.startsWith("#")) return null;
  if (algorithm(x, si, "CanonicalizationMethod") !== ALG.C14N || algorithm(x, si, "SignatureMethod") !== ALG.RSA_SHA1 || algorithm(x, ref, "DigestMethod") !== ALG.SHA1) return null;
  const transforms = child(x, ref, "Transforms");
  if (transforms >= 0) for (let c = x.first[transforms]!; c >= 0; c = x.next[c]!) if (x.local[c] === "Transform" && attr(x, c, "Algorithm") !== ALG.C14N) return null;
  // Where xmldsig.ts looks for them: KeyInfo's X509Data and KeyValue, each level falling back to the Signature.
  const keyInfo = orElse(child(x, sig, "KeyInfo"), sig);
  const certEl = child(x, orElse(child(x, keyInfo, "X509Data"), sig), "X509Certificate");
  const cert = certEl < 0 ? null : certificateOf(textOf(x, certEl));
  if (!cert) return null;
  const rsaKv = child(x, orElse(child(x, keyInfo, "KeyValue"), sig), "RSAKeyValue");
  if (rsaKv >= 0) {
    const modulus = child(x, rsaKv, "Modulus");
    const exponent = child(x, rsaKv, "Exponent");
    if (!keyValueMatchesCert(cert, modulus < 0 ? "" : textOf(x, modulus), exponent < 0 ? "" : textOf(x, exponent))) return null;
  }
  const signedInfo = flatCanonicalUtf8(x, si);
  if (signedInfo === null) return null;
  // The signed content in the scratch buffer (c14n.ts spanUtf8), handed to the digest at once (WebCrypto copies it).
  const content = signed(uri.slice(1));
  if (content === null) return null;
  const dvEl = child(x, ref, "DigestValue");
  return signatureChecks(cert, uri, content, dvEl < 0 ? "" : textOf(x, dvEl), textOf(x, sv), () => signedInfo);
}

/**
 * The last steps of an XMLDSig in the SII profile, whatever read its parts (this index, or
 * verify-pass.ts's one pass): the SHA-1 of the signed content (`content`, possibly the scratch
 * buffer: digested at the call) against the DigestValue as written, then the SignatureValue over the
 * canonical SignedInfo (made by `signedInfo` right before the verify, so possibly in the scratch
 * buffer too) under the certificate's key; the check, or null when either fails.
 */
export async function signatureChecks(cert: CertificateInfo, uri: string, content: Uint8Array<ArrayBuffer>, digestValue: string, signatureValue: string, signedInfo: () => Uint8Array<ArrayBuffer>): Promise<SignatureCheck | null> {
  const digest = b64encode(await crypto.subtle.digest("SHA-1", content));
  // (As written it is the digest most of the time: the white space removed only when they differ.)
  if (digest !== digestValue && digest !== digestValue.replace(/\s+/g, "")) return null;
  const key = await verifyKey(cert.modulus, cert.exponent, "SHA-1", cert);
  const signature = b64decode(signatureValue);
  // The algorithm by its name (a string): workerd reads an algorithm object as a dictionary at every call.
  if (!(await crypto.subtle.verify("RSASSA-PKCS1-v1_5", key, signature, signedInfo()))) return null;
  return { ok: true, reference: uri, digestMode: "context", digestValue: digest, signer: signerOf(cert) };
}

const orElse = (i: number, other: number) => (i < 0 ? other : i);
/** The text of `local` in element i (undefined when i is -1 or has no such child), as childText. */
const textIn = (x: FlatIndex, i: number, local: string) => (i < 0 ? undefined : childTextOf(x, i, local));

function algorithm(x: FlatIndex, parent: number, local: string): string | null {
  const c = child(x, parent, local);
  return c < 0 ? null : attr(x, c, "Algorithm");
}

const DD_FIELDS = ["RE", "TD", "F", "FE", "RR", "RSR", "MNT", "IT1", "TSTED"] as const;

/** The stamp's check when its FRMT verifies under a CAF this isolate already verified and the CAF covers it; null otherwise. */
async function stampOf(x: FlatIndex, branch: number, opts: InboundOptions): Promise<TedCheck | null> {
  const ted = child(x, branch, "TED");
  const dd = ted < 0 ? -1 : child(x, ted, "DD");
  const frmt = ted < 0 ? -1 : child(x, ted, "FRMT");
  const cafEl = dd < 0 ? -1 : child(x, dd, "CAF");
  if (frmt < 0 || cafEl < 0) return null;
  const cafText = flatCanonical(x, cafEl, true);
  const known = cafText === null ? undefined : knownCafVerdict(cafText, opts);
  const ddText = flatCanonical(x, dd, true);
  if (!known || ddText === null) return null;
  const fields = {} as DdFields;
  for (const k of DD_FIELDS) fields[k] = childTextOf(x, dd, k) ?? "";
  return stampChecks(known, textOf(x, frmt).trim(), () => encodeLatin1(flatten(ddText), "DD"), fields);
}

type DdFields = NonNullable<TedCheck["dd"]>;
/**
 * The last steps of a stamp's check, whatever read its parts (this index, or verify-pass.ts's one
 * pass): the CAF's verdict this isolate holds (`known`), the FRMT over the DD's signed bytes
 * (`signed`, built inside: an encoding that fails is a stamp that fails), and the CAF covering the
 * DD's issuer, type and folio; the check, or null.
 */
export async function stampChecks(known: Promise<CafElementCheck>, frmt: string, signed: () => Uint8Array<ArrayBuffer>, fields: DdFields): Promise<TedCheck | null> {
  let caf: CafElementCheck;
  try {
    caf = await known;
  } catch {
    return null;
  }
  try {
    if (!(await crypto.subtle.verify("RSASSA-PKCS1-v1_5", caf.publicKey, b64decode(frmt), signed()))) return null;
  } catch {
    return null;
  }
  if (fields.RE !== caf.issuerRut || Number(fields.TD) !== caf.documentType || Number(fields.F) < caf.from || Number(fields.F) > caf.to) return null;
  return { ok: true, dd: fields, cafEnvironment: caf.environment };
}
