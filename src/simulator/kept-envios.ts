/**
 * The signed EnvioDTEs the simulated SII accepted, kept as they came (one R2 object per envelope,
 * under a key built from the track id only), so the register can hand out each document's signed
 * DTE to its recipient (GET /simulator/sii/reception/document). The real SII keeps them too but
 * hands them to nobody: there the XML reaches the recipient only by the issuer's e-mail (see
 * src/countries/cl/sii/reception.ts).
 */
import { decodeLatin1, encodeLatin1, XML_DECL } from "../countries/cl";

export const keptEnvioKey = (trackId: number) => `simulator/envios/${trackId}.xml`;

export async function keepEnvio(files: R2Bucket, trackId: number, bytes: Uint8Array): Promise<void> {
  await files.put(keptEnvioKey(trackId), bytes, { httpMetadata: { contentType: "application/xml" } });
}

const firstNumber = (text: string, tag: string): number | null => {
  const m = new RegExp(`<${tag}>\\s*(\\d+)\\s*</${tag}>`).exec(text);
  return m ? Number(m[1]) : null;
};

/**
 * The standalone signed DTE of type/folio cut out of an envelope, byte for byte (latin1 keeps bytes
 * as they are), behind the envelope's own XML declaration (so its encoding stays declared). The
 * DTE element carries its own xmlns, so its signature verifies standalone. One linear scan.
 */
export function dteOfEnvelope(envelope: Uint8Array, type: number, folio: number): Uint8Array | null {
  const text = decodeLatin1(envelope);
  const decl = /^\s*(<\?xml[^?]*\?>)/.exec(text)?.[1] ?? XML_DECL.trim();
  const open = /<DTE[\s>]/g;
  let m: RegExpExecArray | null;
  while ((m = open.exec(text))) {
    const end = text.indexOf("</DTE>", m.index);
    if (end < 0) return null;
    const dte = text.slice(m.index, end + 6);
    if (firstNumber(dte, "TipoDTE") === type && firstNumber(dte, "Folio") === folio) return encodeLatin1(`${decl}\n${dte}\n`);
    open.lastIndex = end + 6;
  }
  return null;
}
