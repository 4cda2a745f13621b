/**
 * Chile's side of issuing (the port's `documents` and `numberRanges.parse`): DTEs computed from an
 * invoice body, stamped with a CAF (TED) and signed; EnvioDTE/EnvioBOLETA envelopes to the SII and
 * EnvioDTE to a buyer. Refusals are EngineErrors; the bodies' own rules are ./issuing-rules.
 */
import type { Credentials, Documents, NumberRange, SignedDocument, StoredDocument } from "../port";
import { parseCaf, type Caf } from "./documents/caf";
import { DOCUMENT_TYPE_CODES, DOCUMENT_TYPES, findDocumentType } from "./documents/document-types";
import { buildSignedDte, XML_DECL, type SignedDte } from "./documents/dte";
import { computeDocument } from "./documents/invoice";
import { isEngineError } from "./errors";
import { buildEnvioBoleta, buildEnvioDte } from "./exchange/envelopes";
import type { SigningCredentials } from "./pki/certificate";
import { decodeLatin1, encodeLatin1 } from "./xml/xml";
import { chileanIssuingRules } from "./issuing-rules";

// Credentials, ranges and signed documents handed to the product are Chile's own; they come back here as such.
const signerOf = (c: Credentials) => c as SigningCredentials;
const dteOf = (d: SignedDocument) => d as SignedDte;

function envelopeOf(documentType: number): "EnvioDTE" | "EnvioBOLETA" {
  const type = findDocumentType(documentType);
  if (!type) throw new Error(`Document type ${documentType} is not a DTE type`);
  return type.envelope;
}

/** A signed DTE from its stored XML (its own bytes, pasted verbatim into envelopes). */
function stored(p: StoredDocument): SignedDte {
  const xmlString = decodeLatin1(p.xml);
  const element = xmlString.replace(/^<\?xml[^>]*\?>\s*/, "");
  return {
    id: /<(?:Documento|Exportaciones|Liquidacion) ID="([^"]+)"/.exec(element)?.[1] ?? `F${p.folio}T${p.documentType}`,
    documentType: p.documentType,
    folio: p.folio,
    issuerRut: p.issuerRut,
    receiverRut: p.receiverRut,
    issueDate: p.issueDate,
    total: p.total,
    element,
    xmlString,
    xml: p.xml,
    envelope: envelopeOf(p.documentType),
  } as unknown as SignedDte;
}

/**
 * The standalone signed DTE file (XML declaration, the `<DTE>` element exactly as signed, newline)
 * cut out of an envelope: the element is pasted verbatim into envelopes, so these are the bytes
 * the document was signed as.
 */
function fromEnvelope(envelope: Uint8Array, documentId: string): Uint8Array | null {
  const text = decodeLatin1(envelope);
  const at = text.indexOf(` ID="${documentId}"`);
  if (at < 0) return null;
  const start = text.lastIndexOf("<DTE ", at);
  const end = text.indexOf("</DTE>", at);
  if (start < 0 || end < 0) return null;
  return encodeLatin1(XML_DECL + text.slice(start, end + "</DTE>".length) + "\n");
}

export const chileanDocuments: Documents = {
  ...chileanIssuingRules,
  types: DOCUMENT_TYPE_CODES.map((c) => DOCUMENT_TYPES[c]),
  findType: findDocumentType,
  envelopeOf,
  sign: async ({ body, folio, range, signer, timestamp }) => buildSignedDte({ document: computeDocument(body), folio, caf: ownRange(range), signer: signerOf(signer), timestamp }),
  fromEnvelope,
  stored,
  async envelope(p) {
    const signer = signerOf(p.signer);
    const params = {
      dtes: p.documents.map(dteOf),
      issuerRut: p.issuerRut,
      // RutEnvia is the certificate holder's RUT.
      senderRut: signer.rut ?? p.issuerRut,
      receiverRut: p.recipientRut,
      resolution: p.resolution,
      timestamp: p.timestamp,
      signer,
      setId: p.id ?? "SetDoc",
    };
    const toBoletas = p.recipientRut === undefined && p.documents.length > 0 && dteOf(p.documents[0]!).envelope === "EnvioBOLETA";
    return (toBoletas ? await buildEnvioBoleta(params) : await buildEnvioDte(params)).xml;
  },
  isRefusal: isEngineError,
};

/** A CAF file read as the SII's (or, when simulated, as the simulated SII's). */
/** The CAF behind a range the product hands back: ranges come only from parseRange. */
const ownRange = (r: NumberRange): Caf => r as unknown as Caf;

export const parseRange = async (file: Uint8Array, opts: { simulated: boolean }): Promise<NumberRange> => {
  const caf = await parseCaf(file, { mode: opts.simulated ? "simulator" : "sii" });
  return { ...caf, keyId: caf.idk };
};
