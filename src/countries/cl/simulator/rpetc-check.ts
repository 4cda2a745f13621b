/**
 * What the simulated register of cessions (RPETC) checks on an uploaded AEC, in the register's order
 * (cesion.md §1.3, §3.2), each failure with the state getEstEnvio ends in:
 *
 *   RSC  the file: well-formed ISO-8859-1 XML, AEC/DocumentoAEC/Caratula/Cesiones in order, one
 *        DTECedido (DocumentoDTECedido with a DTE and TmstFirma), 1..40 Cesion, each field of the
 *        cession area (the stricter of XSD and format document: ../countries/cl/cession/fields.ts);
 *   RFS  the AEC's signature over DocumentoAEC (a certificate in force);
 *   RCR  the Carátula: RutCedente and RutCesionario are the last cession's parties, RutCedente is the
 *        uploading company;
 *   RDC  the document: the DTE's own signature, the DTECedido's signature over its area, the DTE in
 *        the register and accepted with the same data (type, issuer, receiver, folio, date, total),
 *        not claimed by its buyer (RCD, RFP, RFT);
 *   RCS  each cession: SeqCesion is its position; IdDTE repeats the DTE; the earlier ones are the
 *        register's, unchanged; the new one's assignor is the issuer (seq 1) or the last assignee;
 *        MontoCesion 1..MntTotal; UltimoVencimiento ≥ FchEmis; TmstCesion not after now; a sworn
 *        declaration when the file carries no Recibo, or when an earlier cession carried one; its
 *        signatures verify and their holders are the RUTAutorizado, in order.
 * Pure but for the register reads passed in.
 */
import { normalizeRut } from "../documents/rut";
import { aecFieldProblems, cededDteOf, type CededDte, type CessionParty } from "../cession";
import { childElements, childText, firstChild, NS_SII, parseXml, type XDocument, type XElement } from "../xml/xml";
import { verifyChildSignature, verifySignatureElement } from "../xml/xmldsig";
import { canonicalize } from "../xml/c14n";
import { sha256Hex } from "../../../lib/crypto";
import { chileLocalToIso } from "../sii/reception";

export type AecStatus = "EOK" | "RSC" | "RFS" | "RCR" | "RDC" | "RCS";

/** A cession as the register keeps it. */
export interface RegisteredCessionRow {
  seq: number;
  cedentRut: string;
  assigneeRut: string;
  declaration: boolean;
  areaSha256: string;
}

export interface RegisterView {
  /** The accepted document with this key, or null. */
  document(key: { issuerRut: string; type: number; folio: number }): Promise<{ receiverRut: string; issueDate: string; total: string } | null>;
  claimed(key: { issuerRut: string; type: number; folio: number }): Promise<boolean>;
  cessions(key: { issuerRut: string; type: number; folio: number }): Promise<RegisteredCessionRow[]>;
}

export interface NewCession {
  issuerRut: string;
  type: number;
  folio: number;
  seq: number;
  cedentRut: string;
  assigneeRut: string;
  amount: string;
  lastDueDate: string;
  declaration: boolean;
  areaSha256: string;
}

export type AecVerdict = { status: Exclude<AecStatus, "EOK">; errors: string[] } | { status: "EOK"; errors: []; cession: NewCession };

const reject = (status: Exclude<AecStatus, "EOK">, ...errors: string[]): AecVerdict => ({ status, errors });

interface Read {
  doc: XDocument;
  documentoAec: XElement;
  caratula: XElement;
  dteCedido: XElement;
  documentoDteCedido: XElement;
  cesiones: XElement[];
}

/** The file's structure (RSC), or the reason it fails. */
function readStructure(text: string): Read | string {
  let doc: XDocument;
  try {
    doc = parseXml(text, "The AEC");
  } catch (e) {
    return `XML mal formado: ${(e as Error).message}`;
  }
  const root = doc.documentElement as XElement;
  if (root.localName !== "AEC" || root.namespaceURI !== NS_SII || root.getAttribute("version") !== "1.0") return "La raiz debe ser <AEC version=\"1.0\"> del espacio http://www.sii.cl/SiiDte";
  const [documentoAec, ...rest] = childElements(root);
  if (documentoAec?.localName !== "DocumentoAEC" || !documentoAec.getAttribute("ID") || rest.length !== 1 || rest[0]!.localName !== "Signature") return "AEC debe contener DocumentoAEC (con ID) y su Signature";
  const [caratula, cesionesEl, ...more] = childElements(documentoAec);
  if (caratula?.localName !== "Caratula" || cesionesEl?.localName !== "Cesiones" || more.length) return "DocumentoAEC debe contener Caratula y Cesiones, en ese orden";
  const carNames = childElements(caratula).map((e) => e.localName);
  if (carNames[0] !== "RutCedente" || carNames[1] !== "RutCesionario" || carNames[carNames.length - 1] !== "TmstFirmaEnvio") return "Caratula: RutCedente, RutCesionario, [contacto], TmstFirmaEnvio";
  const [dteCedido, ...cesiones] = childElements(cesionesEl);
  if (dteCedido?.localName !== "DTECedido" || cesiones.length < 1 || cesiones.length > 40 || cesiones.some((c) => c.localName !== "Cesion")) return "Cesiones: un DTECedido y de 1 a 40 Cesion";
  const documentoDteCedido = firstChild(dteCedido, "DocumentoDTECedido");
  const parts = documentoDteCedido ? childElements(documentoDteCedido).map((e) => e.localName) : [];
  if (!documentoDteCedido?.getAttribute("ID") || parts[0] !== "DTE" || parts[parts.length - 1] !== "TmstFirma") return "DocumentoDTECedido (con ID): DTE, [ImagenDTE], [Recibo], [ImagenAR], TmstFirma";
  if (parts.filter((n) => n === "Recibo").length > 40) return "A lo mas 40 Recibo";
  for (const c of cesiones) {
    const dc = firstChild(c, "DocumentoCesion");
    const names = dc ? childElements(dc).map((e) => e.localName) : [];
    const want = ["SeqCesion", "IdDTE", "Cedente", "Cesionario", "MontoCesion", "UltimoVencimiento"];
    if (!dc?.getAttribute("ID") || want.some((n, i) => names[i] !== n) || names[names.length - 1] !== "TmstCesion") return "DocumentoCesion (con ID): SeqCesion, IdDTE, Cedente, Cesionario, MontoCesion, UltimoVencimiento, [OtrasCondiciones], [eMailDeudor], TmstCesion";
  }
  return { doc, documentoAec, caratula, dteCedido, documentoDteCedido, cesiones };
}

const text = (el: XElement | undefined, name: string) => (el ? (childText(el, name) ?? "").trim() : "");
const partyOf = (el: XElement | undefined): CessionParty => ({ rut: text(el, "RUT"), name: text(el, "RazonSocial"), address: text(el, "Direccion"), email: text(el, "eMail") });
const rutOr = (s: string) => {
  try {
    return normalizeRut(s);
  } catch {
    return s;
  }
};

/** The register's verdict on an AEC uploaded by `companyRut` at `now`. */
export async function checkAec(text_: string, companyRut: string, now: Date, register: RegisterView): Promise<AecVerdict> {
  const read = readStructure(text_);
  if (typeof read === "string") return reject("RSC", read);
  const { doc, documentoAec, caratula, documentoDteCedido, cesiones } = read;
  const dteEl = firstChild(documentoDteCedido, "DTE")!;
  let dte: CededDte | null;
  try {
    dte = cededDteOf(dteEl);
  } catch {
    dte = null;
  }
  const last = firstChild(cesiones[cesiones.length - 1]!, "DocumentoCesion")!;
  const fieldErrors = cesiones.flatMap((c, i) => {
    const dc = firstChild(c, "DocumentoCesion")!;
    const ced = firstChild(dc, "Cedente");
    const auth = ced ? firstChild(ced, "RUTAutorizado") : undefined;
    const idDte = firstChild(dc, "IdDTE");
    return aecFieldProblems({
      cedent: partyOf(ced), assignee: partyOf(firstChild(dc, "Cesionario")), amount: text(dc, "MontoCesion"), total: text(idDte, "MntTotal"),
      lastDueDate: text(dc, "UltimoVencimiento"), issueDate: text(idDte, "FchEmis"), authorized: { rut: text(auth, "RUT"), name: text(auth, "Nombre") },
      timestamp: text(dc, "TmstCesion"),
    })
      // The amount against the total and the due date against the issue date are the cession's checks (RCS), not the schema's.
      .filter((p) => !/^(amount: at most|last_due_date: not before)/.test(p))
      .map((p) => `Cesion ${i + 1}: ${p}`);
  });
  if (fieldErrors.length) return reject("RSC", ...fieldErrors);

  const aecSig = await verifyChildSignature(doc, doc.documentElement as XElement, { fallbacks: true });
  if (!aecSig.ok || aecSig.reference !== `#${documentoAec.getAttribute("ID")}`) return reject("RFS", `Firma del AEC invalida: ${aecSig.message ?? "no cubre DocumentoAEC"}`);
  if (aecSig.signer && (aecSig.signer.notBefore > now || aecSig.signer.notAfter < now)) return reject("RFS", "Certificado de la firma del AEC no vigente");

  const lastCedent = rutOr(text(firstChild(last, "Cedente"), "RUT"));
  const lastAssignee = rutOr(text(firstChild(last, "Cesionario"), "RUT"));
  if (rutOr(text(caratula, "RutCedente")) !== lastCedent || rutOr(text(caratula, "RutCesionario")) !== lastAssignee) return reject("RCR", "RutCedente y RutCesionario de la Caratula deben ser los de la ultima cesion");
  if (lastCedent !== companyRut) return reject("RCR", `RutCedente ${lastCedent} no es la empresa que envia (${companyRut})`);
  return checkDocumentAndCessions(doc, read, dte, dteEl, companyRut, now, register);
}

async function checkDocumentAndCessions(doc: XDocument, read: Read, dte: CededDte | null, dteEl: XElement, companyRut: string, now: Date, register: RegisterView): Promise<AecVerdict> {
  const { dteCedido, documentoDteCedido, cesiones } = read;
  if (!dte) return reject("RDC", "El DTE cedido no se puede leer");
  const dteSig = await verifyChildSignature(doc, dteEl, { fallbacks: true });
  if (!dteSig.ok) return reject("RDC", `Firma del DTE invalida: ${dteSig.message ?? ""}`);
  const cededSig = await verifyChildSignature(doc, dteCedido, { fallbacks: true });
  if (!cededSig.ok || cededSig.reference !== `#${documentoDteCedido.getAttribute("ID")}`) return reject("RDC", `Firma del DTECedido invalida: ${cededSig.message ?? "no cubre DocumentoDTECedido"}`);
  const key = { issuerRut: dte.issuerRut, type: dte.documentType, folio: dte.folio };
  const held = await register.document(key);
  if (!held) return reject("RDC", `El DTE tipo ${dte.documentType} folio ${dte.folio} de ${dte.issuerRut} no esta recibido y aceptado por el SII`);
  if (normalizeRut(held.receiverRut) !== dte.receiverRut || held.issueDate !== dte.issueDate || held.total !== dte.total) return reject("RDC", "Los datos del DTE no corresponden a los registrados en el SII");
  if (await register.claimed(key)) return reject("RDC", "El DTE tiene un reclamo registrado por su receptor: no es cedible");

  const earlier = await register.cessions(key);
  const hasRecibo = childElements(documentoDteCedido, "Recibo").length > 0;
  for (const [i, c] of cesiones.entries()) {
    const dc = firstChild(c, "DocumentoCesion")!;
    const seq = Number(text(dc, "SeqCesion"));
    if (seq !== i + 1) return reject("RCS", `SeqCesion ${text(dc, "SeqCesion")} no corresponde a su posicion ${i + 1}`);
    const idDte = firstChild(dc, "IdDTE");
    const same = Number(text(idDte, "TipoDTE")) === dte.documentType && rutOr(text(idDte, "RUTEmisor")) === dte.issuerRut && rutOr(text(idDte, "RUTReceptor")) === dte.receiverRut && Number(text(idDte, "Folio")) === dte.folio && text(idDte, "FchEmis") === dte.issueDate && text(idDte, "MntTotal") === dte.total;
    if (!same) return reject("RCS", `Cesion ${seq}: IdDTE no corresponde al DTE cedido`);
  }
  if (cesiones.length !== earlier.length + 1) return reject("RCS", `El registro tiene ${earlier.length} cesiones de este documento: el archivo debe traerlas y agregar la ${earlier.length + 1}`);
  for (const [i, prev] of earlier.entries()) {
    if ((await areaDigest(cesiones[i]!)) !== prev.areaSha256) return reject("RCS", `Cesion ${i + 1} no corresponde a la registrada`);
  }
  const dc = firstChild(cesiones[cesiones.length - 1]!, "DocumentoCesion")!;
  const cedent = firstChild(dc, "Cedente")!;
  const cedentRut = rutOr(text(cedent, "RUT"));
  const previousHolder = earlier.length ? earlier[earlier.length - 1]!.assigneeRut : dte.issuerRut;
  if (cedentRut !== previousHolder) return reject("RCS", `El cedente ${cedentRut} no es ${earlier.length ? "el ultimo cesionario" : "el emisor"} (${previousHolder})`);
  if (cedentRut !== companyRut) return reject("RCS", "El cedente no es la empresa que envia");
  if (BigInt(text(dc, "MontoCesion")) > BigInt(dte.total)) return reject("RCS", "MontoCesion mayor que el monto total del documento");
  if (text(dc, "UltimoVencimiento") < dte.issueDate) return reject("RCS", "UltimoVencimiento anterior a la fecha de emision");
  const tmst = text(dc, "TmstCesion");
  const signedAt = chileLocalToIso(`${tmst.slice(8, 10)}-${tmst.slice(5, 7)}-${tmst.slice(0, 4)} ${tmst.slice(11, 19)}`);
  if (!signedAt || Date.parse(signedAt) > now.getTime() + 60_000) return reject("RCS", "TmstCesion posterior a la fecha actual");
  const declaration = !!text(cedent, "DeclaracionJurada");
  if (!declaration && (!hasRecibo || earlier.some((e) => e.declaration))) return reject("RCS", "Falta la declaracion jurada de recepcion de mercaderias (el archivo no trae Recibo, o una cesion anterior la trajo)");
  const signerProblem = await cessionSigners(doc, cesiones[cesiones.length - 1]!, now);
  if (signerProblem) return reject("RCS", signerProblem);
  const assigneeRut = rutOr(text(firstChild(dc, "Cesionario"), "RUT"));
  return {
    status: "EOK", errors: [],
    cession: { ...{ issuerRut: dte.issuerRut, type: dte.documentType, folio: dte.folio }, seq: cesiones.length, cedentRut, assigneeRut, amount: text(dc, "MontoCesion"), lastDueDate: text(dc, "UltimoVencimiento"), declaration, areaSha256: await areaDigest(cesiones[cesiones.length - 1]!) },
  };
}

/** The signatures of a cession verify over its area and are the RUTAutorizado's, in order; null when so. */
async function cessionSigners(doc: XDocument, cesion: XElement, now: Date): Promise<string | null> {
  const dc = firstChild(cesion, "DocumentoCesion")!;
  const authorized = childElements(firstChild(dc, "Cedente")!, "RUTAutorizado").map((a) => rutOr(text(a, "RUT")));
  const sigs = childElements(cesion, "Signature");
  if (sigs.length === 0 || sigs.length !== authorized.length) return `La cesion trae ${sigs.length} firmas para ${authorized.length} RUTAutorizado`;
  for (const [i, s] of sigs.entries()) {
    const v = await verifySignatureElement(doc, s, { fallbacks: true });
    if (!v.ok || v.reference !== `#${dc.getAttribute("ID")}`) return `Firma ${i + 1} de la cesion invalida: ${v.message ?? "no cubre DocumentoCesion"}`;
    if (!v.signer?.rut || normalizeRut(v.signer.rut) !== authorized[i]) return `El firmante ${v.signer?.rut ?? "(sin RUT)"} no es el RUTAutorizado ${authorized[i]}`;
    if (v.signer.notBefore > now || v.signer.notAfter < now) return `Certificado de la firma ${i + 1} de la cesion no vigente`;
  }
  return null;
}

/** A cession's signed area as the register keeps it (the digest of its canonical form). */
export function areaDigest(cesion: XElement): Promise<string> {
  return sha256Hex(canonicalize(firstChild(cesion, "DocumentoCesion")!));
}
