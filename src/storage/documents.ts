import { XML_DECL } from "../countries/cl/dte";
import { decodeLatin1, encodeLatin1 } from "../countries/cl/xml";

/**
 * Where a signed document's XML lives. Documents signed together are stored once, inside the
 * envelope that carries them (one R2 object per envelope instead of one per document): their
 * `xml_key` is `<envelope key>#<document ID>`. A key without `#` is a standalone object (documents
 * signed one at a time).
 */
export function inEnvelope(envelopeKey: string, documentId: string): string {
  return `${envelopeKey}#${documentId}`;
}

/**
 * The standalone signed DTE file (XML declaration, the `<DTE>` element exactly as signed, newline)
 * cut out of an envelope: the element is pasted verbatim into envelopes, so these are the bytes
 * the document was signed as. Null when the envelope does not hold that document.
 */
export function dteFromEnvelope(envelope: Uint8Array, documentId: string): Uint8Array | null {
  const text = decodeLatin1(envelope);
  const at = text.indexOf(` ID="${documentId}"`);
  if (at < 0) return null;
  const start = text.lastIndexOf("<DTE ", at);
  const end = text.indexOf("</DTE>", at);
  if (start < 0 || end < 0) return null;
  return encodeLatin1(XML_DECL + text.slice(start, end + "</DTE>".length) + "\n");
}

/** The signed XML of a document, from either kind of key; null when it is not (yet) stored. */
export async function readDocumentXml(files: R2Bucket, xmlKey: string | null): Promise<Uint8Array | null> {
  if (!xmlKey) return null;
  const hash = xmlKey.indexOf("#");
  const object = await files.get(hash < 0 ? xmlKey : xmlKey.slice(0, hash));
  if (!object) return null;
  const bytes = new Uint8Array(await object.arrayBuffer());
  return hash < 0 ? bytes : dteFromEnvelope(bytes, xmlKey.slice(hash + 1));
}
