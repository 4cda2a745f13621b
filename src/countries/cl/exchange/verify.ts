/**
 * Inbound verification of third parties' DTEs (a standalone DTE, an EnvioDTE or an EnvioBOLETA):
 * XMLDSig of each DTE (with the namespace-context fallbacks of sii-formats.md §3.3) and of the
 * envelope, TED FRMT against the CAF public key, CAF FRMA against the SII key, and the stamp's DD
 * against the document's own fields. Reports which check failed; never throws for bad input.
 */
import type { CafTrustOptions } from "../documents/caf";
import { b64decode } from "../pki/asn1";
import { EngineError } from "../errors";
import { SII_CAF_KEYS } from "../pki/sii-keys";
import { tedText, verifyTed, type TedCheck } from "../documents/ted";
import { dteSchemaProblems } from "../documents/dte-schema";
import { BRANCH_NAMES } from "../documents/document-types";
import { childElements, childText, countById, decodeXmlBytes, firstChild, NS_DSIG, NS_SII, parseXml, type XDocument, type XElement } from "../xml/xml";
import { verifyChildSignature, verifySignatureElement, type SignatureCheck } from "../xml/xmldsig";
import { dteContentOf, type DteContent } from "./content";
import { dteOmissions, verifiedDteForm, type Omissions } from "./verified-form";
import type { SignerCheck } from "../pki/trust";
import type { TotalsCheck } from "../documents/totals-check";
import { addContentChecks } from "./content-checks";

export type InboundFailure =
  | "XML_MALFORMED"
  | "SIGNATURE_MISSING"
  | "SIGNATURE_INVALID"
  | "SIGNATURE_UNSUPPORTED"
  | "TED_MISSING"
  | "TED_INVALID"
  | "CAF_BAD_SIGNATURE"
  | "CAF_UNKNOWN_IDK"
  | "CAF_MALFORMED"
  | "ENVELOPE_INVALID";

export interface InboundDteReport {
  ok: boolean;
  /** First failed check, in the order signature, stamp, CAF, stamp/document agreement. */
  failure?: InboundFailure;
  message?: string;
  id: string | null;
  documentType: number | null;
  folio: number | null;
  issuerRut: string | null;
  receiverRut: string | null;
  issueDate: string | null;
  total: string | null;
  signature: SignatureCheck;
  ted: TedCheck;
  /** Where the DTE departs from the SII's schema (empty: valid), see documents/dte-schema.ts. */
  schemaErrors: string[];
  /**
   * The DTE as verified: the canonical form (C14N) of the parsed <DTE> element with its signed
   * branch and its Signature, in the namespace context its signature verified in (re-verified, it
   * gives the same verdict). What is stored and served: never a slice of the received text.
   */
  xml: string;
  /** What its signed branch says (names, amounts, lines), read from the same element. */
  content: DteContent;
  /** Who signed it and whether a trusted CA vouches for them; whether its amounts agree (content-checks.ts). Neither changes `ok`. */
  signer?: SignerCheck;
  totals?: TotalsCheck;
}

export interface InboundReport {
  ok: boolean;
  kind: "DTE" | "EnvioDTE" | "EnvioBOLETA" | "unknown";
  failure?: InboundFailure;
  message?: string;
  /** The root element's local name of a well-formed file that is none of the kinds (RespuestaDTE, …). */
  root?: string;
  /** Envelope signature (absent for a standalone DTE). */
  envelopeSignature?: SignatureCheck;
  setId?: string;
  caratula?: { rutEmisor?: string; rutEnvia?: string; rutReceptor?: string; fchResol?: string; nroResol?: string; tmstFirmaEnv?: string };
  documents: InboundDteReport[];
}

export interface InboundOptions extends CafTrustOptions {
  /** Try the namespace variants the SII accepts (default true). */
  fallbacks?: boolean;
}

const DIGITS = /^\d+$/;
/** A report's TipoDTE or Folio: the text's number when it is all digits, else null (every path reads them so). */
export const num = (v: string | undefined) => (v && DIGITS.test(v) ? Number(v) : null);



/** Verifies one <DTE> element of a parsed document. */
export async function verifyDteElement(doc: XDocument, dte: XElement, opts: InboundOptions = {}, memo?: WeakMap<object, string>): Promise<InboundDteReport> {
  const branch = childElements(dte).find((c) => BRANCH_NAMES.includes(c.localName ?? ""));
  const enc = branch && firstChild(branch, "Encabezado");
  const idDoc = enc && firstChild(enc, "IdDoc");
  const emisor = enc && firstChild(enc, "Emisor");
  const receptor = enc && firstChild(enc, "Receptor");
  const totales = enc && firstChild(enc, "Totales");
  const report: InboundDteReport = {
    ok: false,
    id: branch?.getAttribute("ID") ?? null,
    documentType: num(idDoc && childText(idDoc, "TipoDTE")),
    folio: num(idDoc && childText(idDoc, "Folio")),
    issuerRut: (emisor && childText(emisor, "RUTEmisor")) ?? null,
    receiverRut: (receptor && childText(receptor, "RUTRecep")) ?? null,
    issueDate: (idDoc && childText(idDoc, "FchEmis")) ?? null,
    total: (totales && childText(totales, "MntTotal")) ?? null,
    signature: { ok: false },
    ted: { ok: false },
    schemaErrors: dteSchemaProblems(dte, { unqualified: NS_SII, issuerExtras: true }),
    xml: "",
    content: dteContentOf(branch),
  };
  // Verified as it is kept: what is not kept (unsigned additions, verified-form.ts) is not looked into.
  const omit = dteOmissions(dte, branch);
  const { signature, restored } = await verifyDteSignature(doc, dte, omit, opts, memo);
  report.signature = signature;
  if (report.signature.ok) {
    // Signature wrapping: the signed element must be this DTE's own Documento, and its ID unique.
    const wrapped = !report.id || report.signature.reference !== `#${report.id}` || countById(dte, report.id, omit) !== 1;
    if (wrapped) report.signature = { ...report.signature, ok: false, failure: "SIGNATURE_INVALID", message: `The signature does not cover this DTE's ${branch?.localName ?? "Documento"} (reference ${report.signature.reference}, ID ${report.id})` };
  }
  report.xml = verifiedDteForm(dte, omit, !report.signature.digestMode || report.signature.digestMode === "context", restored);
  const tedEl = branch && firstChild(branch, "TED");
  report.ted = tedEl ? await verifyTed(tedEl, opts) : { ok: false, failure: "TED_MISSING", message: "The document has no TED" };
  if (report.ted.ok) {
    // A stamp that verifies is held to the document's own fields whatever the signature's verdict, so
    // that a document altered after signing (its total, say) shows the stamp's check failing too.
    const name = (receptor && childText(receptor, "RznSocRecep")) ?? "";
    const firstItem = branch ? childText(firstChild(branch, "Detalle") ?? branch, "NmbItem") ?? "" : "";
    const mismatches = stampDisagreements(report, name, firstItem);
    if (mismatches.length) report.ted = { ...report.ted, ok: false, failure: "TED_INVALID", message: `The stamp disagrees with the document: ${mismatches.join("; ")}` };
  }
  await addContentChecks(report, dte, branch, opts);
  if (!report.signature.ok) {
    report.failure = report.signature.failure ?? "SIGNATURE_INVALID";
    report.message = report.signature.message;
    return report;
  }
  if (!report.ted.ok) {
    report.failure = report.ted.failure ?? "TED_INVALID";
    report.message = report.ted.message;
    return report;
  }
  report.ok = true;
  return report;
}

/**
 * A DTE's signature, checked as the DTE stands (with the namespace fallbacks) and, when that fails
 * on a DTE that declares no namespace, as its signer signed it with the SII's namespace in scope
 * (`<DTE xmlns="http://www.sii.cl/SiiDte">`, the declaration dropped since): the SII reads such a
 * DTE in its namespace. `restored`: the namespace the signature verified with, which the kept form
 * then declares. The messages say which form verified, or which forms were tried.
 */
async function verifyDteSignature(doc: XDocument, dte: XElement, omit: Omissions, opts: InboundOptions, memo?: WeakMap<object, string>): Promise<{ signature: SignatureCheck; restored?: string }> {
  const fallbacks = opts.fallbacks ?? true;
  const signature = await verifyChildSignature(doc, dte, { fallbacks, skip: omit, ...(memo ? { memo } : {}) });
  if (signature.ok || !fallbacks || dte.namespaceURI !== null || signature.failure === "SIGNATURE_MISSING") return { signature };
  const restored = await verifyChildSignature(doc, dte, { skip: omit, defaultNamespace: NS_SII });
  if (restored.ok) {
    const message = `Verified with the SII namespace (${NS_SII}) restored on <DTE>: the file's DTE declares no namespace, and it was signed in the SII's.`;
    return { signature: { ...restored, message, restoredNamespace: NS_SII }, restored: NS_SII };
  }
  // Where the restored form got further (its digest matched), its own failure is the one to tell.
  if (restored.digestMode) return { signature: { ...restored, message: `With the SII namespace restored on <DTE>: ${restored.message}` } };
  return { signature: { ...signature, message: `${signature.message} (tried as received and, the file's DTE declaring no namespace, with the SII's restored)` } };
}

/** Where a verified stamp's DD disagrees with the document's own fields (RznSocRecep `name`, the first NmbItem `firstItem`). */
export function stampDisagreements(report: InboundDteReport, name: string, firstItem: string): string[] {
  const dd = report.ted.dd!;
  const mismatches: string[] = [];
  if (dd.RE !== report.issuerRut) mismatches.push(`RE ${dd.RE} ≠ RUTEmisor ${report.issuerRut}`);
  if (Number(dd.TD) !== report.documentType) mismatches.push(`TD ${dd.TD} ≠ TipoDTE ${report.documentType}`);
  if (Number(dd.F) !== report.folio) mismatches.push(`F ${dd.F} ≠ Folio ${report.folio}`);
  if (dd.FE !== report.issueDate) mismatches.push(`FE ${dd.FE} ≠ FchEmis ${report.issueDate}`);
  if (dd.RR !== report.receiverRut) mismatches.push(`RR ${dd.RR} ≠ RUTRecep ${report.receiverRut}`);
  if (dd.MNT !== report.total) mismatches.push(`MNT ${dd.MNT} ≠ MntTotal ${report.total}`);
  if (!stampAgrees(dd.RSR, name)) mismatches.push("RSR differs from RznSocRecep");
  if (!stampAgrees(dd.IT1, firstItem)) mismatches.push("IT1 differs from the first NmbItem");
  return mismatches;
}

const loose = (s: string) => s.replace(/['"\s]/g, "").slice(0, 36);
/** Whether a stamped text (RSR, IT1) agrees with the document's: the stamp's own form of it first (what the engine and most issuers write: equal, it is loosely equal too), else loosely. */
function stampAgrees(stamped: string, text: string): boolean {
  const t = tedText(text);
  return stamped === t || loose(stamped) === loose(t) || loose(stamped) === loose(text.slice(0, 40));
}

/** Verifies an inbound file (bytes as received, ISO-8859-1 or UTF-8): one parse, and every report read from its tree. */
async function verifyInboundUnsafe(input: Uint8Array | ArrayBuffer | string, opts: InboundOptions = {}): Promise<InboundReport> {
  let doc: XDocument;
  try {
    // (A DTD, declared entities even unused, is refused by the parser: xml/limits.ts.)
    doc = parseXml(decodeXmlBytes(input), "The received file");
  } catch (e) {
    return { ok: false, kind: "unknown", failure: "XML_MALFORMED", message: e instanceof EngineError ? e.message : String(e), documents: [] };
  }
  const root = doc.documentElement as XElement;
  const kind = root.localName;
  if (kind === "DTE") {
    const d = await verifyDteElement(doc, root, opts);
    return { ok: d.ok, kind: "DTE", ...(d.failure ? { failure: d.failure, message: d.message } : {}), documents: [d] };
  }
  if (kind !== "EnvioDTE" && kind !== "EnvioBOLETA") {
    return { ok: false, kind: "unknown", ...(kind ? { root: kind } : {}), failure: "ENVELOPE_INVALID", message: `Unexpected root element <${kind}>`, documents: [] };
  }
  return verifyEnvelope(doc, root, kind, opts);
}

/** An EnvioDTE or EnvioBOLETA: its signature over SetDTE, then each DTE of SetDTE. */
async function verifyEnvelope(doc: XDocument, root: XElement, kind: "EnvioDTE" | "EnvioBOLETA", opts: InboundOptions): Promise<InboundReport> {
  const set = firstChild(root, "SetDTE");
  if (!set) return { ok: false, kind, failure: "ENVELOPE_INVALID", message: "The envelope has no SetDTE", documents: [] };
  const car = firstChild(set, "Caratula");
  const report: InboundReport = { ok: false, kind, setId: set.getAttribute("ID") ?? undefined, ...(car ? { caratula: caratulaOf(car) } : {}), documents: [] };
  // The tree does not change from here on: canonical forms are shared between the envelope's digest and each DTE's.
  const memo = new WeakMap<object, string>();
  const dtes = childElements(set, "DTE");
  // The schemas' bound (EnvioDTE_v10.xsd, EnvioBOLETA_v11.xsd), before any DTE is verified: a file of many empty DTEs would cost a verification each.
  const maxDtes = kind === "EnvioDTE" ? 2000 : 500;
  if (dtes.length > maxDtes) return { ...report, failure: "ENVELOPE_INVALID", message: `The envelope holds ${dtes.length} DTEs; an ${kind} holds at most ${maxDtes}` };
  report.envelopeSignature = await verifyChildSignature(doc, root, { fallbacks: opts.fallbacks ?? true, memo });
  if (report.envelopeSignature.ok && (!report.setId || report.envelopeSignature.reference !== `#${report.setId}` || countById(root, report.setId) !== 1)) {
    report.envelopeSignature = { ...report.envelopeSignature, ok: false, failure: "SIGNATURE_INVALID", message: `The envelope signature does not cover its SetDTE (reference ${report.envelopeSignature.reference})` };
  }
  for (const dte of dtes) report.documents.push(await verifyDteElement(doc, dte, opts, memo));
  if (!report.envelopeSignature.ok) {
    report.failure = report.envelopeSignature.failure;
    report.message = `Envelope: ${report.envelopeSignature.message}`;
  } else if (report.documents.length === 0) {
    report.failure = "ENVELOPE_INVALID";
    report.message = "The envelope holds no DTE";
  } else {
    const bad = report.documents.find((d) => !d.ok);
    if (bad) {
      report.failure = bad.failure;
      report.message = `${bad.id ?? "DTE"}: ${bad.message}`;
    } else report.ok = true;
  }
  return report;
}

function caratulaOf(car: XElement): NonNullable<InboundReport["caratula"]> {
  return { rutEmisor: childText(car, "RutEmisor"), rutEnvia: childText(car, "RutEnvia"), rutReceptor: childText(car, "RutReceptor"), fchResol: childText(car, "FchResol"), nroResol: childText(car, "NroResol"), tmstFirmaEnv: childText(car, "TmstFirmaEnv") };
}

export interface SignedXmlReport {
  ok: boolean;
  /** Root element's local name (RespuestaDTE, EnvioRecibos, getToken, …). */
  root: string | null;
  failure?: InboundFailure;
  message?: string;
  /** One entry per XMLDSig Signature, document order. */
  signatures: SignatureCheck[];
}

/**
 * Verifies every XMLDSig signature of any signed SII file (acknowledgments received from buyers:
 * RespuestaDTE, EnvioRecibos with its per-Recibo signatures; token requests). No TED/CAF checks.
 */
async function verifySignedXmlUnsafe(input: Uint8Array | ArrayBuffer | string, opts: { fallbacks?: boolean } = {}): Promise<SignedXmlReport> {
  let doc: XDocument;
  try {
    doc = parseXml(decodeXmlBytes(input), "The signed file");
  } catch (e) {
    return { ok: false, root: null, failure: "XML_MALFORMED", message: e instanceof EngineError ? e.message : String(e), signatures: [] };
  }
  const root = doc.documentElement as XElement;
  const sigs: XElement[] = [];
  const walk = (n: XElement) => {
    for (const c of childElements(n)) {
      if (c.localName === "Signature" && c.namespaceURI === NS_DSIG) sigs.push(c);
      else walk(c);
    }
  };
  walk(root);
  if (sigs.length === 0) return { ok: false, root: root.localName, failure: "SIGNATURE_MISSING", message: "The file carries no signature", signatures: [] };
  const signatures: SignatureCheck[] = [];
  for (const s of sigs) signatures.push(await verifySignatureElement(doc, s, { fallbacks: opts.fallbacks ?? true }));
  const bad = signatures.find((s) => !s.ok);
  return bad ? { ok: false, root: root.localName, failure: bad.failure, message: bad.message, signatures } : { ok: true, root: root.localName, signatures };
}

/** verifyInbound: the documented behaviour is on verifyInboundUnsafe above; this entry point guarantees that only
 * typed results or EngineErrors come out, whatever the input (fuzz-tested). */
export async function verifyInbound(input: Uint8Array | ArrayBuffer | string, opts: InboundOptions = {}): Promise<InboundReport> {
  try {
    return await verifyInboundUnsafe(input, opts);
  } catch (e) {
    return { ok: false, kind: "unknown", failure: "XML_MALFORMED", message: `The file cannot be checked: ${(e as Error).message}`, documents: [] };
  }
}

/** verifySignedXml: the documented behaviour is on verifySignedXmlUnsafe above; this entry point guarantees that only
 * typed results or EngineErrors come out, whatever the input (fuzz-tested). */
export async function verifySignedXml(input: Uint8Array | ArrayBuffer | string, opts: { fallbacks?: boolean } = {}): Promise<SignedXmlReport> {
  try {
    return await verifySignedXmlUnsafe(input, opts);
  } catch (e) {
    return { ok: false, root: null, failure: "XML_MALFORMED", message: `The file cannot be checked: ${(e as Error).message}`, signatures: [] };
  }
}

/**
 * CAF trust for documents a company receives: the real SII keys (IDK 100 certification,
 * 300 production) are trusted in every mode, since real suppliers' documents carry them; the
 * simulator's key only when the SII mode is the simulator.
 */
export function receptionCafTrust(siiMode: string): InboundOptions {
  if (siiMode !== "simulator") return { mode: "sii" };
  // One object for the isolate: the CAF verdict cache knows its extra keys by identity.
  return (simulatorReceptionTrust ??= Object.freeze({ mode: "simulator" as const, extraKeys: Object.freeze({ 300: b64decode(SII_CAF_KEYS[300]!.spki) }) }));
}
let simulatorReceptionTrust: InboundOptions | undefined;
