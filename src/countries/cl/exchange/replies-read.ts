/**
 * Reads a buyer's reply to documents a company issued (sii-formats.md §5), the other side of
 * ./responses.ts: a RespuestaDTE with RecepcionEnvio (the buyer's system received the envelope; per
 * DTE its EstadoRecepDTE) or with ResultadoDTE (the buyer accepts or rejects the contents: EstadoDTE),
 * or an EnvioRecibos (Ley 19.983 receipt of the goods or services, each Recibo signed, then the set).
 *
 * Every signature is verified, and an entry only counts as signed when the signature covers the
 * element it was read from (its Reference names that element's ID, held by no other element): a
 * signed Resultado pasted beside forged entries does not sign them. A reply never changes the legal
 * state of a document (the SII's register does, see src/invoices/buyer-response.ts): it is
 * what the buyer told the issuer directly.
 */
import { EngineError } from "../errors";
import { isValidRut, normalizeRut } from "../documents/rut";
import { childElements, childText, countById, decodeXmlBytes, descendants, firstChild, NS_SII, parseXml, type XDocument, type XElement, type XNode } from "../xml/xml";
import { verifyChildSignature, type SignatureCheck } from "../xml/xmldsig";
import { canonicalize } from "../xml/c14n";
import { unsignedParts } from "./verified-form";

export type ReplyRoot = "RespuestaDTE" | "EnvioRecibos";
/** RECEPTION: RecepcionEnvio's RecepcionDTE; RESULT: ResultadoDTE; RECEIPT: EnvioRecibos' Recibo. */
export type ReplyEntryKind = "RECEPTION" | "RESULT" | "RECEIPT";

/** At most this many entries are read from one reply (a reply answers one envelope or a few). */
export const MAX_REPLY_ENTRIES = 2000;

export interface ReplyEntry {
  kind: ReplyEntryKind;
  /**
   * EnvioDTEID of a RecepcionEnvio that names no document (the buyer's verdict on a whole envelope:
   * RECEPTION, `code` its EstadoRecepEnv, type, folio, date and total null); null for an entry about a document.
   */
  envelopeId: string | null;
  documentType: number | null;
  folio: number | null;
  issueDate: string | null;
  /** RUTEmisor: who issued the document answered (the company reading the reply, when it is ours). */
  issuerRut: string | null;
  receiverRut: string | null;
  /** MntTotal as written. */
  total: string | null;
  /** EstadoRecepDTE (RECEPTION), EstadoDTE (RESULT); null for a RECEIPT. */
  code: number | null;
  /** RecepDTEGlosa / EstadoDTEGlosa. */
  text: string | null;
  /** CodRchDsc (RESULT). */
  rejectionCode: number | null;
  /** Recinto, RutFirma and TmstFirmaRecibo (RECEIPT). */
  place: string | null;
  signerRut: string | null;
  signedAt: string | null;
  /** The signature that covers the entry: the Resultado's, or the Recibo's own. */
  signature: SignatureCheck;
}

export interface BuyerReply {
  root: ReplyRoot;
  /** Caratula: RutResponde (the buyer), RutRecibe (the issuer), TmstFirmaResp / TmstFirmaEnv. */
  responderRut: string | null;
  recipientRut: string | null;
  timestamp: string | null;
  /** The signature of the whole reply (RespuestaDTE's over Resultado, EnvioRecibos' over SetRecibos). */
  signature: SignatureCheck;
  entries: ReplyEntry[];
  /**
   * The reply as kept and served: the canonical form of its root with its signed content
   * (Resultado, SetRecibos) and signatures only (verified-form.ts), from the same parse.
   */
  xml: string;
}

const short = (v: string | undefined, max: number): string | null => (v === undefined || v === "" ? null : v.slice(0, max));
const integer = (v: string | undefined): number | null => (v !== undefined && /^-?\d{1,18}$/.test(v) ? Number(v) : null);
const rut = (v: string | undefined): string | null => (v === undefined ? null : isValidRut(v) ? normalizeRut(v) : v.slice(0, 20));

/** Whether `check` is a valid signature over `el` itself: its Reference is el's ID and no other element has it. */
function covering(doc: XDocument, check: SignatureCheck, el: XElement, omit: ReadonlySet<XNode>): SignatureCheck {
  if (!check.ok) return check;
  const id = el.getAttribute("ID");
  if (check.reference === "") return check;
  if (!id || check.reference !== `#${id}`) return { ok: false, failure: "SIGNATURE_INVALID", message: `The signature covers ${check.reference}, not the <${el.localName}> read`, reference: check.reference, signer: check.signer };
  if (countById(doc, id, omit) !== 1) return { ok: false, failure: "SIGNATURE_INVALID", message: `The ID "${id}" is held by more than one element`, reference: check.reference, signer: check.signer };
  return check;
}


function documentKey(d: XElement, typeTag: "TipoDTE" | "TipoDoc") {
  return {
    documentType: integer(childText(d, typeTag)),
    folio: integer(childText(d, "Folio")),
    issueDate: short(childText(d, "FchEmis"), 10),
    issuerRut: rut(childText(d, "RUTEmisor")),
    receiverRut: rut(childText(d, "RUTRecep")),
    total: short(childText(d, "MntTotal"), 20),
  };
}

const noReceipt = { rejectionCode: null, place: null, signerRut: null, signedAt: null };

/** The reply's signature over its content, verified as the reply is kept (`omit`: what is not kept, not looked into). */
async function contentSignature(doc: XDocument, root: XElement, content: XElement, omit: ReadonlySet<XNode>): Promise<SignatureCheck> {
  return covering(doc, await verifyChildSignature(doc, root, { fallbacks: true, skip: omit }), content, omit);
}

async function readRespuesta(doc: XDocument, root: XElement, resultado: XElement, omit: ReadonlySet<XNode>): Promise<Omit<BuyerReply, "xml">> {
  const car = firstChild(resultado, "Caratula");
  const signature = await contentSignature(doc, root, resultado, omit);
  const entries: ReplyEntry[] = [];
  for (const env of childElements(resultado, "RecepcionEnvio")) {
    const envelope = { envelopeId: short(childText(env, "EnvioDTEID"), 80), code: integer(childText(env, "EstadoRecepEnv")), text: short(childText(env, "RecepEnvGlosa"), 256) };
    const perDocument = childElements(env, "RecepcionDTE");
    for (const d of perDocument) {
      entries.push({ kind: "RECEPTION", envelopeId: null, ...documentKey(d, "TipoDTE"), code: integer(childText(d, "EstadoRecepDTE")), text: short(childText(d, "RecepDTEGlosa"), 256), ...noReceipt, signature });
    }
    if (perDocument.length === 0) {
      // The verdict on the whole envelope: read onto the document whose envelope it names (src/invoices/buyer-replies.ts).
      const about = { documentType: null, folio: null, issueDate: null, issuerRut: rut(childText(env, "RutEmisor")), receiverRut: rut(childText(env, "RutReceptor")), total: null };
      entries.push({ kind: "RECEPTION", envelopeId: envelope.envelopeId, ...about, code: envelope.code, text: envelope.text, ...noReceipt, signature });
    }
  }
  for (const d of childElements(resultado, "ResultadoDTE")) {
    entries.push({ kind: "RESULT", envelopeId: null, ...documentKey(d, "TipoDTE"), code: integer(childText(d, "EstadoDTE")), text: short(childText(d, "EstadoDTEGlosa"), 256), ...noReceipt, rejectionCode: integer(childText(d, "CodRchDsc")), signature });
  }
  return { root: "RespuestaDTE", responderRut: car ? rut(childText(car, "RutResponde")) : null, recipientRut: car ? rut(childText(car, "RutRecibe")) : null, timestamp: car ? short(childText(car, "TmstFirmaResp"), 30) : null, signature, entries };
}

async function readRecibos(doc: XDocument, root: XElement, set: XElement, omit: ReadonlySet<XNode>): Promise<Omit<BuyerReply, "xml">> {
  const car = firstChild(set, "Caratula");
  const signature = await contentSignature(doc, root, set, omit);
  const entries: ReplyEntry[] = [];
  for (const recibo of childElements(set, "Recibo")) {
    const d = firstChild(recibo, "DocumentoRecibo");
    if (!d) continue;
    const own = await contentSignature(doc, recibo, d, omit);
    entries.push({
      kind: "RECEIPT", envelopeId: null, ...documentKey(d, "TipoDoc"), code: null, text: null, rejectionCode: null,
      place: short(childText(d, "Recinto"), 80), signerRut: rut(childText(d, "RutFirma")), signedAt: short(childText(d, "TmstFirmaRecibo"), 30), signature: own,
    });
  }
  return { root: "EnvioRecibos", responderRut: car ? rut(childText(car, "RutResponde")) : null, recipientRut: car ? rut(childText(car, "RutRecibe")) : null, timestamp: car ? short(childText(car, "TmstFirmaEnv"), 30) : null, signature, entries };
}

/** The reply in `input`, or why it cannot be read (not XML, another root, no entry, too many). Never throws. */
export async function readBuyerReply(input: Uint8Array | string): Promise<BuyerReply | { problem: string }> {
  try {
    const doc = parseXml(decodeXmlBytes(input), "The reply");
    const root = doc.documentElement as XElement | null;
    if (!root || root.namespaceURI !== NS_SII || (root.localName !== "RespuestaDTE" && root.localName !== "EnvioRecibos")) {
      return { problem: `Not a RespuestaDTE or EnvioRecibos of the SII's namespace (root <${root?.localName ?? "?"}>).` };
    }
    if (descendants(root, "Recibo").length + descendants(root, "RecepcionDTE").length + descendants(root, "ResultadoDTE").length > MAX_REPLY_ENTRIES) {
      return { problem: `The reply holds more than ${MAX_REPLY_ENTRIES} entries.` };
    }
    const respuesta = root.localName === "RespuestaDTE";
    const content = firstChild(root, respuesta ? "Resultado" : "SetRecibos");
    if (!content) throw new EngineError("XML_MALFORMED", `The ${root.localName} has no ${respuesta ? "Resultado" : "SetRecibos"}`);
    // Read, verified and kept alike: the signed content and the signatures, nothing beside them.
    const omit = unsignedParts(root, new Set([content]));
    const read = respuesta ? await readRespuesta(doc, root, content, omit) : await readRecibos(doc, root, content, omit);
    if (read.entries.length === 0) return { problem: `The ${read.root} names no document.` };
    return { ...read, xml: canonicalize(root, { omit }) };
  } catch (e) {
    return { problem: e instanceof EngineError ? e.message : `The reply cannot be read: ${(e as Error).message}` };
  }
}
