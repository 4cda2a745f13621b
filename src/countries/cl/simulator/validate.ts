/**
 * What the simulated SII checks on an uploaded envelope, in the SII's order:
 * 1. upload time (DTEUpload STATUS 7): ISO-8859-1 (LATIN1), no line over 4096 chars, well-formed
 *    XML, the right root;
 * 2. schema (RSC): first the structure with the simulator's own messages (namespace, version, SetDTE
 *    ID, Carátula fields and formats, 1..2000 DTEs (500 on boletas), each with Documento ID, IdDoc,
 *    Emisor, Receptor, Totales, TED and Signature, types allowed in that envelope, RUT check
 *    digits), then the whole XSD (EnvioDTE_v10 with DTE_v10, or EnvioBOLETA_v11) through the
 *    Worker's schema checker (dte-schema.ts): every element, its order and count, every value;
 * 3. envelope signature (RFR): XMLDSig over SetDTE, signer certificate in force;
 * 4. Carátula (RCT): RutEnvia = certificate holder (DECISIONS 19: any well-formed certificate is
 *    accepted), RutEmisor = the uploading company, RutReceptor = SII, SubTotDTE = actual counts;
 * 5. each document (RCH with reasons): issuer, DTE signature and certificate dates, CAF signed by a
 *    trusted SII key (simulator key IDK 999 or certification IDK 100), TED signature (FRMT), TED
 *    data = document data, folio inside the CAF range, folio not already accepted (repeated);
 * 6. each document's content (document-rules.ts): dates against the CAF and today, references and
 *    their codes, despatch indicators; reparos (RLV) for TED-1-646 and TED-3-640.
 * Every rule, its SII code and its test: docs/simulator-fidelity.md.
 *
 * Reason codes of rejected documents (simulator's own, shown in the REST detail and DB):
 * DTE-EMISOR, DTE-FIRMA, DTE-CERT, TED-FALTA, CAF-FIRMA, TED-FRMT, TED-DATOS, CAF-RANGO,
 * CAF-EMISOR, DTE-REPETIDO, CAF-DATE, CAF-EXPIRED, DATE-FUTURE, REF-FOLIO-0, NOTE-REF, COT-AMOUNT,
 * GUIA-ZERO-SALE; reparos TED-1-646, TED-3-640; scenarios add SIM-RECHAZO and SIM-REPARO.
 */
import type { CafTrustOptions } from "../documents/caf";
import { normalizeRut, SII_RUT } from "../documents/rut";
import { verifyTed } from "../documents/ted";
import { envelopeSchemaProblems } from "../documents/dte-schema";
import { childElements, childText, firstChild, NS_SII, parseXml, type XDocument, type XElement } from "../xml/xml";
import { verifyChildSignature } from "../xml/xmldsig";
import { cardinalityErrors, documentContentRules, fechaTypeOk } from "./document-rules";

export type EnvelopeKind = "EnvioDTE" | "EnvioBOLETA";

export interface DocumentVerdict {
  type: number;
  folio: number;
  issuerRut: string;
  receiverRut: string;
  issueDate: string;
  total: string;
  status: "DOK" | "RLV" | "RCH";
  errors: string[];
}

export interface EnvioVerdict {
  kind: EnvelopeKind;
  /** EPR (processed: read the documents) or an envelope rejection. */
  finalStatus: "EPR" | "RSC" | "RFR" | "RCT";
  glosa: string;
  errors: string[];
  documents: DocumentVerdict[];
}

export const ENVIO_GLOSA: Record<string, string> = {
  REC: "Envio Recibido",
  SOK: "Schema Validado",
  FOK: "Firma de Envio Validada",
  EPR: "Envio Procesado",
  RSC: "Rechazado por Error en Schema",
  RFR: "Rechazado por Error en Firma",
  RCT: "Rechazado por Error en Caratula",
};

const BOLETA_TYPES = new Set([39, 41]);
const DTE_TYPES = new Set([33, 34, 43, 46, 52, 56, 61, 110, 111, 112]);

/** Whether some stretch between line feeds is longer than `max` (a cheap pre-test of the line check). */
function hasRunOver(text: string, max: number): boolean {
  let from = 0;
  for (;;) {
    const nl = text.indexOf("\n", from);
    const end = nl < 0 ? text.length : nl;
    if (end - from > max) return true;
    if (nl < 0) return false;
    from = nl + 1;
  }
}

const XML_ENCODING = /^<\?xml[^>]*?\sencoding\s*=\s*["']([^"']*)["']/;
/** WHATWG "latin1" is Windows-1252: bytes 0x00-0x7E and 0xA0-0xFF decode to themselves, 0x7F-0x9F never do or are controls. */
const W1252 = new TextDecoder("latin1");
const NOT_LATIN1_TEXT = /[^\x00-\x7e\xa0-\xff]/;
const NON_ASCII = /[^\x00-\x7f]/;

/**
 * LATIN1 (docs/simulator-fidelity.md): the file is ISO-8859-1 as the SII requires. Refused: a BOM,
 * a declared encoding other than ISO-8859-1, non-ASCII bytes without a declaration (XML then means
 * UTF-8), and DEL/C1 control bytes (0x7F-0x9F), which is how the UTF-8 bytes of ’ “ ” – … € and
 * most other characters outside Latin-1 arrive when read as ISO-8859-1. The SII's answer is not
 * published; STATUS 7 is the closest published code (the upload's "invalid file/schema").
 * Returns the file's text (ISO-8859-1) or the problem.
 */
export function latin1Text(b: Uint8Array): { text: string } | { problem: string } {
  if (b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) return { problem: "LATIN1: el archivo trae BOM UTF-8; debe ser ISO-8859-1" };
  const head = String.fromCharCode(...b.subarray(0, Math.min(b.length, 200)));
  const declared = XML_ENCODING.exec(head)?.[1];
  if (declared !== undefined && declared.toUpperCase() !== "ISO-8859-1") return { problem: `LATIN1: encoding declarado '${declared}'; debe ser ISO-8859-1` };
  const text = W1252.decode(b);
  if (declared === undefined && NON_ASCII.test(text)) return { problem: "LATIN1: el archivo no declara encoding ISO-8859-1 y trae bytes no ASCII (sin declaracion es UTF-8)" };
  const at = text.search(NOT_LATIN1_TEXT);
  if (at >= 0) return { problem: `LATIN1: byte 0x${b[at]!.toString(16).toUpperCase()} en la posicion ${at} no es un caracter ISO-8859-1 (texto UTF-8 leido como ISO-8859-1)` };
  return { text };
}

/** The DTEUpload-time checks of the uploaded bytes: LATIN1, then those of precheckUpload. */
export function precheckFile(file: Uint8Array, expected: EnvelopeKind): ReturnType<typeof precheckUpload> {
  const r = latin1Text(file);
  return "problem" in r ? { ok: false, errors: [r.problem] } : precheckUpload(r.text, expected);
}

/** DTEUpload-time check (STATUS 7 on failure). Returns the parsed document or the error lines. */
export function precheckUpload(text: string, expected: EnvelopeKind): { ok: true; doc: XDocument } | { ok: false; errors: string[] } {
  const long = hasRunOver(text, 4096) ? text.split(/\r?\n/).findIndex((l) => l.length > 4096) : -1;
  if (long >= 0) return { ok: false, errors: [`CHR-00002: Line too long (line ${long + 1} exceeds 4096 characters)`] };
  let doc: XDocument;
  try {
    doc = parseXml(text, "The uploaded file");
  } catch (e) {
    return { ok: false, errors: [`LPX-00000: ${(e as Error).message}`] };
  }
  const root = doc.documentElement as XElement;
  if (root.localName !== expected) {
    const hint = root.localName === "EnvioBOLETA" ? " (boletas go through the boleta REST API)" : root.localName === "EnvioDTE" && expected === "EnvioBOLETA" ? " (this API takes EnvioBOLETA only)" : "";
    return { ok: false, errors: [`Raiz del documento <${root.localName}> no corresponde; se esperaba <${expected}>${hint}`] };
  }
  return { ok: true, doc };
}

function rutOk(s: string | undefined): string | null {
  if (!s) return null;
  try {
    const n = normalizeRut(s);
    return n === s.trim().toUpperCase() ? n : null;
  } catch {
    return null;
  }
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/;

function documentElement(dte: XElement): XElement | undefined {
  return childElements(dte).find((c) => c.localName === "Documento" || c.localName === "Exportaciones" || c.localName === "Liquidacion");
}

/** Structural (schema-level) checks; returns RSC error lines. */
function schemaErrors(root: XElement, kind: EnvelopeKind): string[] {
  const errs: string[] = [];
  if (root.namespaceURI !== NS_SII) errs.push(`<${kind}> debe estar en el namespace ${NS_SII}`);
  if (root.getAttribute("version") !== "1.0") errs.push(`<${kind}> version debe ser 1.0`);
  const set = firstChild(root, "SetDTE");
  if (!set) return [...errs, "Falta SetDTE"];
  if (!set.getAttribute("ID")) errs.push("SetDTE sin atributo ID");
  const sigs = childElements(root, "Signature");
  if (sigs.length !== 1) errs.push(`<${kind}> debe tener exactamente una Signature (tiene ${sigs.length})`);
  const car = firstChild(set, "Caratula");
  if (!car) return [...errs, "Falta Caratula"];
  for (const f of ["RutEmisor", "RutEnvia", "RutReceptor"]) if (!rutOk(childText(car, f))) errs.push(`Caratula/${f} no es un RUT valido`);
  if (!DATE.test(childText(car, "FchResol") ?? "")) errs.push("Caratula/FchResol debe ser AAAA-MM-DD");
  if (!/^\d{1,6}$/.test(childText(car, "NroResol") ?? "")) errs.push("Caratula/NroResol debe ser numerico");
  if (!DATETIME.test(childText(car, "TmstFirmaEnv") ?? "")) errs.push("Caratula/TmstFirmaEnv debe ser AAAA-MM-DDTHH:MM:SS");
  const subs = childElements(car, "SubTotDTE");
  if (subs.length < 1 || subs.length > (kind === "EnvioDTE" ? 20 : 2)) errs.push("Caratula/SubTotDTE fuera de cardinalidad");
  for (const s of subs) if (!/^\d+$/.test(childText(s, "TpoDTE") ?? "") || !/^\d+$/.test(childText(s, "NroDTE") ?? "")) errs.push("SubTotDTE con TpoDTE/NroDTE no numericos");
  const dtes = childElements(set, "DTE");
  const max = kind === "EnvioDTE" ? 2000 : 500;
  if (dtes.length < 1 || dtes.length > max) errs.push(`SetDTE debe tener entre 1 y ${max} DTE (tiene ${dtes.length})`);
  dtes.forEach((dte, i) => {
    const where = `DTE[${i + 1}]`;
    if (dte.getAttribute("version") !== "1.0") errs.push(`${where} version debe ser 1.0`);
    const d = documentElement(dte);
    if (!d) return void errs.push(`${where} sin Documento`);
    if (!d.getAttribute("ID")) errs.push(`${where}/Documento sin ID`);
    if (childElements(dte, "Signature").length !== 1) errs.push(`${where} debe tener una Signature`);
    const enc = firstChild(d, "Encabezado");
    const id = enc && firstChild(enc, "IdDoc");
    if (!enc || !id) return void errs.push(`${where} sin Encabezado/IdDoc`);
    const tipo = Number(childText(id, "TipoDTE"));
    if (!/^\d+$/.test(childText(id, "TipoDTE") ?? "")) errs.push(`${where} TipoDTE no numerico`);
    else if (kind === "EnvioDTE" ? !DTE_TYPES.has(tipo) : !BOLETA_TYPES.has(tipo)) errs.push(`${where} TipoDTE ${tipo} no permitido en ${kind}`);
    if (!/^[1-9]\d{0,9}$/.test(childText(id, "Folio") ?? "")) errs.push(`${where} Folio invalido`);
    if (!DATE.test(childText(id, "FchEmis") ?? "")) errs.push(`${where} FchEmis debe ser AAAA-MM-DD`);
    else if (!fechaTypeOk(childText(id, "FchEmis")!)) errs.push(`${where} FchEmis fuera de rango (2000-01-01 a 2050-12-31)`);
    errs.push(...cardinalityErrors(d, kind === "EnvioBOLETA", where));
    if (kind === "EnvioBOLETA" && !/^[1-4]$/.test(childText(id, "IndServicio") ?? "")) errs.push(`${where} IndServicio obligatorio (1-4) en boletas`);
    const em = firstChild(enc, "Emisor");
    if (!em || !rutOk(childText(em, "RUTEmisor"))) errs.push(`${where} Emisor/RUTEmisor invalido`);
    const re = firstChild(enc, "Receptor");
    if (!re || !rutOk(childText(re, "RUTRecep"))) errs.push(`${where} Receptor/RUTRecep invalido`);
    const tot = firstChild(enc, "Totales");
    if (!tot || !/^-?\d+(\.\d{1,4})?$/.test(childText(tot, "MntTotal") ?? "")) errs.push(`${where} Totales/MntTotal invalido`);
    if (!firstChild(d, "TED")) errs.push(`${where} sin TED`);
    if (childElements(d, "Detalle").length < 1 && kind === "EnvioDTE" && tipo !== 56 && tipo !== 61) errs.push(`${where} sin Detalle`);
  });
  return errs;
}

function inForce(signer: { notBefore: Date; notAfter: Date } | undefined, now: Date): boolean {
  return !!signer && signer.notBefore.getTime() <= now.getTime() && now.getTime() <= signer.notAfter.getTime();
}

/** Issuer + type + folio of a document. */
export interface DocumentKey {
  issuerRut: string;
  type: number;
  folio: number;
}

export function documentKeyText(k: DocumentKey): string {
  return `${k.issuerRut}|${k.type}|${k.folio}`;
}

export interface ValidateContext {
  /** The company given in the upload form (rutCompany-dvCompany), canonical. */
  companyRut: string;
  now: Date;
  /**
   * Which of these documents were already accepted (DOK/RLV) in an earlier envelope, as a set of
   * documentKeyText. Called once per envelope with every document that reaches the document checks.
   */
  acceptedAmong: (keys: DocumentKey[]) => Promise<Set<string>>;
  /**
   * The day documents may not be dated after (DATE-FUTURE); default `now`. The reception injector
   * backdates `now` as a test device and passes the real day here.
   */
  latestIssueDay?: Date;
  /** Which SII keys sign acceptable CAFs; default the simulator's (999 and 100). */
  cafTrust?: CafTrustOptions;
}

function keyOf(dte: XElement): DocumentKey {
  const enc = firstChild(documentElement(dte)!, "Encabezado")!;
  const id = firstChild(enc, "IdDoc")!;
  return { issuerRut: normalizeRut(childText(firstChild(enc, "Emisor")!, "RUTEmisor")!), type: Number(childText(id, "TipoDTE")), folio: Number(childText(id, "Folio")) };
}

/**
 * The (issuer, type, folio) of every DTE of a parsed envelope, read as validateEnvio reads them, for
 * fetching the duplicate check ahead of the validation; DTEs too broken to have one are left out
 * (validateEnvio rejects their envelope before the document checks anyway).
 */
export function envelopeDocumentKeys(doc: XDocument): DocumentKey[] {
  const set = firstChild(doc.documentElement as XElement, "SetDTE");
  if (!set) return [];
  const out: DocumentKey[] = [];
  for (const dte of childElements(set, "DTE")) {
    try {
      out.push(keyOf(dte));
    } catch {
      // missing structure or an invalid RUT: the schema checks reject the envelope
    }
  }
  return out;
}

/** Full verdict of a parsed envelope (the upload precheck already passed). */
export async function validateEnvio(doc: XDocument, kind: EnvelopeKind, ctx: ValidateContext): Promise<EnvioVerdict> {
  const root = doc.documentElement as XElement;
  const reject = (finalStatus: "RSC" | "RFR" | "RCT", errors: string[]): EnvioVerdict => ({ kind, finalStatus, glosa: ENVIO_GLOSA[finalStatus]!, errors, documents: [] });

  const schema = schemaErrors(root, kind);
  if (schema.length) return reject("RSC", schema);
  // Then the whole schema (EnvioDTE_v10 + DTE_v10, or EnvioBOLETA_v11): every element and value.
  const xsd = envelopeSchemaProblems(root, kind);
  if (xsd.length) return reject("RSC", xsd);
  const set = firstChild(root, "SetDTE")!;
  const car = firstChild(set, "Caratula")!;

  // Envelope signature
  const envSig = await verifyChildSignature(doc, root, { fallbacks: true });
  if (!envSig.ok) return reject("RFR", [`Firma del envio: ${envSig.message ?? envSig.failure}`]);
  if (envSig.reference !== `#${set.getAttribute("ID")}`) return reject("RFR", [`La firma del envio referencia ${envSig.reference}, no el SetDTE`]);
  if (!envSig.signer) return reject("RFR", ["La firma del envio no trae certificado X509"]);
  if (!inForce(envSig.signer, ctx.now)) return reject("RFR", ["Certificado de la firma del envio no vigente"]);

  const dtes = childElements(set, "DTE");
  const carErr = caratulaErrors(car, dtes, envSig.signer.rut, ctx.companyRut);
  if (carErr.length) return reject("RCT", carErr);
  const rutEmisor = normalizeRut(childText(car, "RutEmisor")!);

  // Documents
  const documents: DocumentVerdict[] = [];
  const seen = new Set<string>();
  const keys = dtes.map(keyOf);
  const accepted = await ctx.acceptedAmong(keys);
  for (const [i, dte] of dtes.entries()) {
    const { verdict, errors, reparos } = await documentProblems(doc, dte, keys[i]!, rutEmisor, ctx);
    const key = documentKeyText(keys[i]!);
    if (seen.has(key) || accepted.has(key)) errors.push(`DTE-REPETIDO Folio ${verdict.folio} tipo ${verdict.type} ya fue recibido (documento repetido)`);
    seen.add(key);
    documents.push({ ...verdict, status: errors.length ? "RCH" : reparos.length ? "RLV" : "DOK", errors: [...errors, ...reparos] });
  }
  return { kind, finalStatus: "EPR", glosa: ENVIO_GLOSA.EPR!, errors: [], documents };
}

/** What is wrong with the Carátula: the sender is not the certificate's holder, another issuer or receiver, SubTotDTE that does not count the DTEs. */
function caratulaErrors(car: XElement, dtes: XElement[], signerRut: string | null | undefined, companyRut: string): string[] {
  const rutEnvia = normalizeRut(childText(car, "RutEnvia")!);
  const rutEmisor = normalizeRut(childText(car, "RutEmisor")!);
  const carErr: string[] = [];
  if (!signerRut) carErr.push("El certificado no trae el RUT del titular");
  else if (signerRut !== rutEnvia) carErr.push(`RUT no autorizado a firmar: RutEnvia ${rutEnvia} no es el titular del certificado (${signerRut})`);
  if (rutEmisor !== companyRut) carErr.push(`RutEmisor ${rutEmisor} distinto de la empresa del envio (${companyRut})`);
  if (normalizeRut(childText(car, "RutReceptor")!) !== SII_RUT) carErr.push(`RutReceptor debe ser el SII (${SII_RUT})`);
  const actual = new Map<number, number>();
  for (const dte of dtes) {
    const t = Number(childText(firstChild(firstChild(documentElement(dte)!, "Encabezado")!, "IdDoc")!, "TipoDTE"));
    actual.set(t, (actual.get(t) ?? 0) + 1);
  }
  const declared = new Map<number, number>();
  for (const s of childElements(car, "SubTotDTE")) declared.set(Number(childText(s, "TpoDTE")), Number(childText(s, "NroDTE")));
  const same = actual.size === declared.size && [...actual].every(([t, n]) => declared.get(t) === n);
  if (!same) carErr.push("SubTotDTE no coincide con los DTE del envio");
  return carErr;
}

/** One DTE of the envelope: its data, and its rejections (errors) and objections (reparos) before the duplicate check. */
async function documentProblems(doc: XDocument, dte: XElement, k: DocumentKey, rutEmisor: string, ctx: ValidateContext): Promise<{ verdict: Omit<DocumentVerdict, "status" | "errors">; errors: string[]; reparos: string[] }> {
  const d = documentElement(dte)!;
  const enc = firstChild(d, "Encabezado")!;
  const id = firstChild(enc, "IdDoc")!;
  const { type, folio, issuerRut } = k;
  const receiverRut = normalizeRut(childText(firstChild(enc, "Receptor")!, "RUTRecep")!);
  const issueDate = childText(id, "FchEmis")!;
  const total = childText(firstChild(enc, "Totales")!, "MntTotal")!;
  const errors: string[] = [];
  const reparos: string[] = [];
  if (issuerRut !== rutEmisor) errors.push(`DTE-EMISOR RUTEmisor ${issuerRut} distinto de la Caratula (${rutEmisor})`);
  const sig = await verifyChildSignature(doc, dte, { fallbacks: true });
  if (!sig.ok) errors.push(`DTE-FIRMA Firma del DTE incorrecta: ${sig.message ?? sig.failure}`);
  else if (sig.reference !== `#${d.getAttribute("ID")}`) errors.push(`DTE-FIRMA La firma referencia ${sig.reference}, no el Documento`);
  else if (!inForce(sig.signer, ctx.now)) errors.push("DTE-CERT Certificado de la firma del DTE no vigente");
  const tedEl = firstChild(d, "TED")!;
  const ted = await verifyTed(tedEl, ctx.cafTrust ?? { mode: "simulator" });
  if (!ted.ok) {
    if (ted.failure === "CAF_BAD_SIGNATURE" || ted.failure === "CAF_UNKNOWN_IDK") errors.push(`CAF-FIRMA CAF no autorizado por el SII: ${ted.message}`);
    else if (ted.failure === "TED_INVALID" && /not covered/.test(ted.message ?? "")) {
      /* range/issuer reported below with specific codes */
    } else errors.push(`TED-FRMT Timbre electronico invalido: ${ted.message}`);
  }
  const dd = firstChild(tedEl, "DD");
  const da = dd && firstChild(firstChild(dd, "CAF") ?? dd, "DA");
  const verdict = { type, folio, issuerRut, receiverRut, issueDate, total };
  tedDataProblems(verdict, dd, da, errors, reparos);
  const content = documentContentRules({ type, doc: d, idDoc: id, issueDate, total, dd, da, now: ctx.latestIssueDay ?? ctx.now });
  errors.push(...content.fatal);
  reparos.push(...content.reparos);
  return { verdict, errors, reparos };
}

/** The TED's CAF range and issuer, and its data against the document's (the amount alone is a reparo). */
function tedDataProblems(v: Omit<DocumentVerdict, "status" | "errors">, dd: XElement | undefined, da: XElement | undefined, errors: string[], reparos: string[]): void {
  const { type, folio, issuerRut } = v;
  const rng = da && firstChild(da, "RNG");
  if (da && rng) {
    const from = Number(childText(rng, "D"));
    const to = Number(childText(rng, "H"));
    if (!(folio >= from && folio <= to)) errors.push(`CAF-RANGO Folio ${folio} fuera del rango autorizado ${from}-${to}`);
    if (childText(da, "RE") !== issuerRut || Number(childText(da, "TD")) !== type) errors.push(`CAF-EMISOR El CAF autoriza ${childText(da, "RE")} tipo ${childText(da, "TD")}, no ${issuerRut} tipo ${type}`);
  }
  if (dd) {
    const mism: string[] = [];
    const chk = (k: string, val: string) => {
      if ((childText(dd, k) ?? "") !== val) mism.push(`${k}=${childText(dd, k)} (documento: ${val})`);
    };
    chk("RE", issuerRut);
    chk("TD", String(type));
    chk("F", String(folio));
    chk("FE", v.issueDate);
    chk("RR", v.receiverRut);
    if (mism.length) errors.push(`TED-DATOS Datos del timbre no coinciden con el documento: ${mism.join(", ")}`);
    // The amount alone is a reparo (TED-3-640), not a rejection (reference §3.2).
    if ((childText(dd, "MNT") ?? "") !== v.total) reparos.push(`TED-3-640 Monto del timbre (MNT=${childText(dd, "MNT")}) distinto del MntTotal ${v.total}`);
  }
}

export interface TypeStats {
  type: number;
  informed: number;
  accepted: number;
  rejected: number;
  objected: number;
}

/** Per-type counts: accepted includes documents with objections (reparos), as the SII counts them. */
export function statsOf(docs: DocumentVerdict[]): TypeStats[] {
  const m = new Map<number, TypeStats>();
  for (const d of docs) {
    const s = m.get(d.type) ?? { type: d.type, informed: 0, accepted: 0, rejected: 0, objected: 0 };
    s.informed++;
    if (d.status === "RCH") s.rejected++;
    else s.accepted++;
    if (d.status === "RLV") s.objected++;
    m.set(d.type, s);
  }
  return [...m.values()].sort((a, b) => a.type - b.type);
}
