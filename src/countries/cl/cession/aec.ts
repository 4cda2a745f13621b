/**
 * The AEC file (Archivo Electrónico de Cesión, AEC_v10.xsd with Cesion_v10 and DTECedido_v10): one
 * cession of a signed DTE, built and signed in the order the SII's format sets (cesion.md §2.4):
 *
 *   1. DTECedido standalone: the issuer's signed DTE pasted verbatim, TmstFirma; signed over
 *      DocumentoDTECedido by the assignor;
 *   2. Cesion standalone: SeqCesion 1, IdDTE copied from the DTE, Cedente (with its authorised signer
 *      and the sworn declaration), Cesionario, amount, last due date; signed over DocumentoCesion by
 *      the RUTAutorizado (the certificate holder);
 *   3. both pasted as text into <Cesiones>, the Carátula written, DocumentoAEC signed last.
 *
 * Each piece's root declares the same namespaces as the AEC root (SiiDte and xsi), so every digest
 * reproduces in place exactly as it was computed standalone. Nothing is re-serialised after signing.
 * The file is ISO-8859-1 with its XML declaration.
 */
import { XML_DECL } from "../documents/dte";
import { normalizeRut } from "../documents/rut";
import { EngineError } from "../errors";
import { childElements, childText, countById, decodeXmlBytes, encodeLatin1, escText, firstChild, NS_SII, NS_XSI, parseXml, type XElement } from "../xml/xml";
import { signXml, type XmlSigner } from "../xml/xmldsig";
import { aecFieldProblems, type CessionParty } from "./fields";

/** The document types the register takes (DTEFacturasType). */
export const CEDIBLE_TYPES: ReadonlySet<number> = new Set([33, 34, 43, 46]);

/** The data of the ceded DTE as its IdDTE repeats it. */
export interface CededDte {
  documentType: number;
  issuerRut: string;
  receiverRut: string;
  folio: number;
  issueDate: string;
  total: string;
  /** The debtor's (receiver's) legal name, for the sworn declaration. */
  receiverName: string;
}

export interface AecParams {
  /** The issuer's signed DTE, as stored (a standalone file). */
  dte: Uint8Array;
  cedent: CessionParty;
  assignee: CessionParty;
  /** MontoCesion, an integer amount. */
  amount: string;
  /** UltimoVencimiento, YYYY-MM-DD. */
  lastDueDate: string;
  debtorEmail?: string;
  otherConditions?: string;
  /** Chilean local time YYYY-MM-DDTHH:MM:SS (TmstFirma, TmstCesion, TmstFirmaEnvio). */
  timestamp: string;
  /** The person who signs the cession (RUTAutorizado): the certificate holder. */
  authorized: { rut: string; name: string };
  signer: XmlSigner;
}

export interface SignedAec {
  xml: Uint8Array;
  xmlString: string;
  dte: CededDte;
  ids: { aec: string; dteCedido: string; cesion: string };
  declaration: string;
}

const NS_ATTRS = `xmlns="${NS_SII}" xmlns:xsi="${NS_XSI}"`;

/** The declaration the FMT template sets (field 14 of the cession area), cut to the XSD's 512 characters. */
export function swornDeclaration(cedent: CessionParty, assignee: CessionParty, debtor: { name: string; rut: string }): string {
  const text = (n: number) =>
    `Se declara bajo juramento que ${cedent.name.slice(0, n)}, RUT ${cedent.rut} ha puesto a disposición del cesionario ${assignee.name.slice(0, n)}, RUT ${assignee.rut}, ` +
    `el o los documentos donde constan los recibos de las mercaderías entregadas o servicios prestados, entregados por parte del deudor de la factura ${debtor.name.slice(0, n)}, RUT ${debtor.rut}, de acuerdo a lo establecido en la Ley N° 19.983.`;
  for (let n = 100; n > 0; n -= 5) if (text(n).length <= 512) return text(n);
  return text(0).slice(0, 512);
}

/** The data a DTE element's IdDTE repeats; throws EngineError when it is not a signed DTE. */
export function cededDteOf(root: XElement): CededDte {
  const doc = root.localName === "DTE" ? firstChild(root, "Documento") : undefined;
  const enc = doc && firstChild(doc, "Encabezado");
  const idDoc = enc && firstChild(enc, "IdDoc");
  const emisor = enc && firstChild(enc, "Emisor");
  const receptor = enc && firstChild(enc, "Receptor");
  const totales = enc && firstChild(enc, "Totales");
  if (!idDoc || !emisor || !receptor || !totales || !firstChild(root, "Signature")) throw new EngineError("INVALID_INPUT", "The file is not a signed DTE");
  return {
    documentType: Number(childText(idDoc, "TipoDTE")),
    folio: Number(childText(idDoc, "Folio")),
    issueDate: (childText(idDoc, "FchEmis") ?? "").trim(),
    issuerRut: normalizeRut(childText(emisor, "RUTEmisor") ?? ""),
    receiverRut: normalizeRut(childText(receptor, "RUTRecep") ?? ""),
    total: (childText(totales, "MntTotal") ?? "").trim(),
    receiverName: (childText(receptor, "RznSocRecep") ?? "").trim(),
  };
}

/** The signed DTE as a text to paste (no XML declaration) and the data its IdDTE repeats. */
export function readCededDte(bytes: Uint8Array): { text: string; dte: CededDte } {
  const text = decodeXmlBytes(bytes).replace(/^\uFEFF?\s*<\?xml[^>]*\?>\s*/, "").trim();
  let root: XElement;
  try {
    root = parseXml(text, "The signed DTE").documentElement as XElement;
  } catch (e) {
    throw new EngineError("INVALID_INPUT", `The stored DTE cannot be read: ${(e as Error).message}`);
  }
  return { text, dte: cededDteOf(root) };
}

const leaf = (name: string, value: string | number) => `<${name}>${escText(String(value))}</${name}>`;
const party = (name: string, p: CessionParty, extra = "") => `<${name}>\n${leaf("RUT", p.rut)}\n${leaf("RazonSocial", p.name)}\n${leaf("Direccion", p.address)}\n${leaf("eMail", p.email)}\n${extra}</${name}>`;

/** Builds and signs the AEC of one cession (SeqCesion 1) of `p.dte`. Throws EngineError on a field the register would refuse. */
export async function buildAec(p: AecParams): Promise<SignedAec> {
  const { dte } = readCededDte(p.dte);
  if (!CEDIBLE_TYPES.has(dte.documentType)) throw new EngineError("INVALID_INPUT", `Type ${dte.documentType} cannot be ceded: the register takes 33, 34, 43 and 46 only`);
  const problems = aecFieldProblems({ cedent: p.cedent, assignee: p.assignee, amount: p.amount, total: dte.total, lastDueDate: p.lastDueDate, issueDate: dte.issueDate, authorized: p.authorized, debtorEmail: p.debtorEmail, otherConditions: p.otherConditions, timestamp: p.timestamp });
  if (problems.length) throw new EngineError("INVALID_INPUT", problems.join("; "), { field: problems[0]!.split(":")[0] });
  return signAecAsGiven(p);
}

/**
 * Writes and signs an AEC exactly as given: none of buildAec's checks. The engine reaches it only
 * through buildAec; tests use it to make what the register refuses (an amount over the total…).
 */
export async function signAecAsGiven(p: AecParams): Promise<SignedAec> {
  const { text: dteText, dte } = readCededDte(p.dte);
  const tag = `T${dte.documentType}F${dte.folio}`;
  const ids = { aec: `AEC_${tag}`, dteCedido: `DTECed_${tag}`, cesion: `CES_${tag}_1` };
  const declaration = swornDeclaration(p.cedent, p.assignee, { name: dte.receiverName || dte.receiverRut, rut: dte.receiverRut });

  const dteCedido = `<DTECedido ${NS_ATTRS} version="1.0">\n<DocumentoDTECedido ID="${ids.dteCedido}">\n${dteText}\n${leaf("TmstFirma", p.timestamp)}\n</DocumentoDTECedido>\n</DTECedido>`;
  const signedDteCedido = await signXml(dteCedido, ids.dteCedido, p.signer);

  const idDte = `<IdDTE>\n${leaf("TipoDTE", dte.documentType)}\n${leaf("RUTEmisor", dte.issuerRut)}\n${leaf("RUTReceptor", dte.receiverRut)}\n${leaf("Folio", dte.folio)}\n${leaf("FchEmis", dte.issueDate)}\n${leaf("MntTotal", dte.total)}\n</IdDTE>`;
  const authorized = `<RUTAutorizado>\n${leaf("RUT", normalizeRut(p.authorized.rut))}\n${leaf("Nombre", p.authorized.name)}\n</RUTAutorizado>\n${leaf("DeclaracionJurada", declaration)}\n`;
  const cesion =
    `<Cesion ${NS_ATTRS} version="1.0">\n<DocumentoCesion ID="${ids.cesion}">\n${leaf("SeqCesion", 1)}\n${idDte}\n${party("Cedente", p.cedent, authorized)}\n${party("Cesionario", p.assignee)}\n` +
    `${leaf("MontoCesion", p.amount)}\n${leaf("UltimoVencimiento", p.lastDueDate)}\n${p.otherConditions ? leaf("OtrasCondiciones", p.otherConditions) + "\n" : ""}${p.debtorEmail ? leaf("eMailDeudor", p.debtorEmail) + "\n" : ""}` +
    `${leaf("TmstCesion", p.timestamp)}\n</DocumentoCesion>\n</Cesion>`;
  const signedCesion = await signXml(cesion, ids.cesion, p.signer);

  const caratula = `<Caratula version="1.0">\n${leaf("RutCedente", p.cedent.rut)}\n${leaf("RutCesionario", p.assignee.rut)}\n${leaf("MailContacto", p.cedent.email)}\n${leaf("TmstFirmaEnvio", p.timestamp)}\n</Caratula>`;
  const aec = `<AEC ${NS_ATTRS} version="1.0" xsi:schemaLocation="${NS_SII} AEC_v10.xsd">\n<DocumentoAEC ID="${ids.aec}">\n${caratula}\n<Cesiones>\n${signedDteCedido}\n${signedCesion}\n</Cesiones>\n</DocumentoAEC>\n</AEC>`;
  const signed = await signXml(aec, ids.aec, p.signer);
  const xmlString = XML_DECL + signed + "\n";
  const parsed = parseXml(signed, "The AEC");
  for (const id of Object.values(ids)) if (countById(parsed, id) !== 1) throw new EngineError("INVALID_INPUT", `The ID ${id} is not unique in the AEC (the DTE uses it too)`);
  if (childElements(parsed.documentElement as XElement).length !== 2) throw new EngineError("INTERNAL", "The AEC root does not hold DocumentoAEC and its Signature");
  return { xml: encodeLatin1(xmlString), xmlString, dte, ids, declaration };
}
