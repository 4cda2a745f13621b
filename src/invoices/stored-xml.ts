import { issuingCountry } from "../countries";

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
 * The standalone signed file of document `documentId` cut out of its envelope (the bytes it was
 * signed as), as its country does it; null when the envelope does not hold that document.
 */
export function dteFromEnvelope(envelope: Uint8Array, documentId: string): Uint8Array | null {
  return issuingCountry().documents.fromEnvelope(envelope, documentId);
}

/**
 * The signed XML of a document, from either kind of key; null when it is not (yet) stored. Pass
 * `objects` to read each R2 object once when reading several documents of one envelope.
 */
export async function readDocumentXml(files: R2Bucket, xmlKey: string | null, objects = new Map<string, Promise<Uint8Array | null>>()): Promise<Uint8Array | null> {
  if (!xmlKey) return null;
  const hash = xmlKey.indexOf("#");
  const objectKey = hash < 0 ? xmlKey : xmlKey.slice(0, hash);
  let bytes = objects.get(objectKey);
  if (!bytes) objects.set(objectKey, (bytes = files.get(objectKey).then(async (o) => (o ? new Uint8Array(await o.arrayBuffer()) : null))));
  const whole = await bytes;
  if (!whole) return null;
  return hash < 0 ? whole : dteFromEnvelope(whole, xmlKey.slice(hash + 1));
}
