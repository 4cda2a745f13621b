/**
 * Envelopes: EnvioDTE (to the SII, RutReceptor 60803000-K, or to the buyer) and EnvioBOLETA.
 * Signed DTEs are pasted verbatim; the SetDTE signature is computed over the final text in context.
 */
import { EngineError } from "../errors";
import { normalizeRut, SII_RUT } from "../documents/rut";
import type { SignedDte } from "../documents/dte";
import { XML_DECL } from "../documents/dte";
import { encodeLatin1, escText, NS_SII, NS_XSI } from "../xml/xml";
import { signXml, type XmlSigner } from "../xml/xmldsig";

export interface EnvelopeParams {
  dtes: SignedDte[];
  /** RutEmisor of the documents. */
  issuerRut: string;
  /** RutEnvia: the certificate holder's RUT (the SII refuses others). */
  senderRut: string;
  /** RutReceptor: 60803000-K (default) for the SII, the buyer's RUT for an exchange envelope. */
  receiverRut?: string;
  /** SII resolution authorising the issuer (certification: number 0 and the certification date). */
  resolution: { date: string; number: string | number };
  /** TmstFirmaEnv, local YYYY-MM-DDTHH:MM:SS. */
  timestamp: string;
  signer: XmlSigner;
  /** SetDTE ID; default "SetDoc". */
  setId?: string;
}

export interface SignedEnvelope {
  kind: "EnvioDTE" | "EnvioBOLETA";
  setId: string;
  xmlString: string;
  /** ISO-8859-1 bytes, the file to upload. */
  xml: Uint8Array;
  /** Counts per type (SubTotDTE). */
  subtotals: { type: number; count: number }[];
}

async function buildEnvelope(kind: "EnvioDTE" | "EnvioBOLETA", p: EnvelopeParams): Promise<SignedEnvelope> {
  if (p.dtes.length === 0) throw new EngineError("ENVELOPE_INVALID", "An envelope needs at least one DTE");
  const max = kind === "EnvioDTE" ? 2000 : 500;
  if (p.dtes.length > max) throw new EngineError("ENVELOPE_INVALID", `${kind} holds at most ${max} documents`, { expected: `≤ ${max}` });
  const issuer = normalizeRut(p.issuerRut);
  for (const d of p.dtes) {
    if (d.envelope !== kind) throw new EngineError("ENVELOPE_INVALID", `Type ${d.documentType} travels in ${d.envelope}, not ${kind}`);
    if (d.issuerRut !== issuer) throw new EngineError("ENVELOPE_INVALID", `DTE ${d.id} belongs to ${d.issuerRut}, not ${issuer}`);
  }
  if (p.signer.rut && normalizeRut(p.senderRut) !== p.signer.rut) {
    throw new EngineError("ENVELOPE_INVALID", `RutEnvia ${normalizeRut(p.senderRut)} is not the certificate holder (${p.signer.rut}); the SII refuses envelopes sent on behalf of another RUT`, { field: "senderRut", expected: p.signer.rut });
  }
  const ids = new Set(p.dtes.map((d) => d.id));
  if (ids.size !== p.dtes.length) throw new EngineError("ENVELOPE_INVALID", "The same document appears twice in the envelope");
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/.test(p.timestamp)) throw new EngineError("INVALID_DATE", "timestamp must be YYYY-MM-DDTHH:MM:SS", { field: "timestamp" });
  if (!/^\d{4}-\d{2}-\d{2}$/.test(p.resolution.date)) throw new EngineError("INVALID_DATE", "resolution.date must be YYYY-MM-DD", { field: "resolution.date" });
  if (!/^\d{1,6}$/.test(String(p.resolution.number))) throw new EngineError("INVALID_INPUT", "resolution.number is a number of up to 6 digits", { field: "resolution.number" });
  const counts = new Map<number, number>();
  for (const d of p.dtes) counts.set(d.documentType, (counts.get(d.documentType) ?? 0) + 1);
  const subtotals = [...counts.entries()].sort((a, b) => a[0] - b[0]).map(([type, count]) => ({ type, count }));
  return signEnvelopeAsGiven(kind, p, subtotals);
}

/**
 * Writes and signs an envelope exactly as given: none of buildEnvelope's checks (number of DTEs,
 * their types and issuer, RutEnvia, duplicates), and the SubTotDTE as passed. The engine itself
 * only reaches it through buildEnvioDte/buildEnvioBoleta; tests use it to make what the SII refuses
 * (an envelope over its limit, a carátula whose counts are wrong).
 */
export async function signEnvelopeAsGiven(kind: "EnvioDTE" | "EnvioBOLETA", p: EnvelopeParams, subtotals: { type: number; count: number }[]): Promise<SignedEnvelope> {
  const issuer = normalizeRut(p.issuerRut);
  const setId = p.setId ?? "SetDoc";
  const schema = kind === "EnvioDTE" ? "EnvioDTE_v10.xsd" : "EnvioBOLETA_v11.xsd";
  const caratula =
    `<Caratula version="1.0">\n<RutEmisor>${issuer}</RutEmisor>\n<RutEnvia>${normalizeRut(p.senderRut)}</RutEnvia>\n` +
    `<RutReceptor>${normalizeRut(p.receiverRut ?? SII_RUT)}</RutReceptor>\n<FchResol>${p.resolution.date}</FchResol>\n<NroResol>${escText(String(p.resolution.number))}</NroResol>\n` +
    `<TmstFirmaEnv>${p.timestamp}</TmstFirmaEnv>\n` +
    subtotals.map((s) => `<SubTotDTE>\n<TpoDTE>${s.type}</TpoDTE>\n<NroDTE>${s.count}</NroDTE>\n</SubTotDTE>\n`).join("") +
    `</Caratula>`;
  const body =
    `<${kind} xmlns="${NS_SII}" xmlns:xsi="${NS_XSI}" version="1.0" xsi:schemaLocation="${NS_SII} ${schema}">\n` +
    `<SetDTE ID="${setId}">\n${caratula}\n${p.dtes.map((d) => d.element).join("\n")}\n</SetDTE>\n</${kind}>`;
  const signed = await signXml(body, setId, p.signer);
  const xmlString = XML_DECL + signed + "\n";
  return { kind, setId, xmlString, xml: encodeLatin1(xmlString), subtotals };
}

/** EnvioDTE for every type except boletas. receiverRut defaults to the SII (60803000-K). */
export function buildEnvioDte(p: EnvelopeParams): Promise<SignedEnvelope> {
  return buildEnvelope("EnvioDTE", p);
}

/** EnvioBOLETA (39/41), schema EnvioBOLETA_v11.xsd. */
export function buildEnvioBoleta(p: EnvelopeParams): Promise<SignedEnvelope> {
  return buildEnvelope("EnvioBOLETA", p);
}
