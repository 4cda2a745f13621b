/**
 * TED ("timbre electrónico"): DD built as the SII expects (RE TD F FE RR RSR IT1 MNT CAF TSTED),
 * signed with the CAF key: FRMT = RSA-SHA1 over the flattened DD, no namespace, ISO-8859-1 bytes.
 * The TED is written flattened, so the signed bytes are exactly the bytes in the document, and the
 * flattened TED is the PDF417 payload.
 */
import { b64decode, b64encode, buf } from "../pki/asn1";
import { canonicalize } from "../xml/c14n";
import { type Caf, type CafTrustOptions, RSA_SHA1, verifyCafElement } from "./caf";
import { EngineError } from "../errors";
import { childText, encodeLatin1, escText, firstChild, flatten, parseXml, type XElement } from "../xml/xml";

export interface TedParams {
  issuerRut: string;
  documentType: number;
  folio: number;
  /** FchEmis, YYYY-MM-DD. */
  issueDate: string;
  receiverRut: string;
  receiverName: string;
  /** MntTotal, exactly the string written in Totales. */
  total: string;
  firstItemName: string;
  caf: Pick<Caf, "cafXml" | "privateKey">;
  /** TSTED, local time YYYY-MM-DDTHH:MM:SS. */
  timestamp: string;
}

export interface Ted {
  /** The <TED version="1.0">…</TED> element, flattened (no namespace declaration). */
  xml: string;
  /** Same text: the PDF417 payload (encode it as ISO-8859-1 bytes). */
  flattened: string;
  /** The PDF417 payload as ISO-8859-1 bytes. */
  bytes: Uint8Array;
  frmt: string;
}

/**
 * RSR and IT1: first 40 characters, with ' and " removed (LibreDTE writes them as entities in the
 * signed bytes, other implementations raw; leaving them out gives the same bytes under both).
 */
export function tedText(s: string): string {
  // (Most texts have neither: no new string then.)
  if (s.indexOf("'") < 0 && s.indexOf('"') < 0) return s.length > 40 ? s.slice(0, 40) : s;
  return s.replace(/['"]/g, "").slice(0, 40);
}

export function buildDd(p: Omit<TedParams, "caf"> & { cafXml: string }): string {
  return (
    `<DD><RE>${p.issuerRut}</RE><TD>${p.documentType}</TD><F>${p.folio}</F><FE>${p.issueDate}</FE>` +
    `<RR>${p.receiverRut}</RR><RSR>${escText(tedText(p.receiverName))}</RSR><MNT>${p.total}</MNT>` +
    `<IT1>${escText(tedText(p.firstItemName))}</IT1>${flatten(p.cafXml)}<TSTED>${p.timestamp}</TSTED></DD>`
  );
}

export async function stampTed(p: TedParams): Promise<Ted> {
  const dd = buildDd({ ...p, cafXml: p.caf.cafXml });
  const sig = await crypto.subtle.sign(RSA_SHA1, p.caf.privateKey, buf(encodeLatin1(dd, "TED")));
  const frmt = b64encode(sig);
  const xml = `<TED version="1.0">${dd}<FRMT algoritmo="SHA1withRSA">${frmt}</FRMT></TED>`;
  return { xml, flattened: xml, bytes: encodeLatin1(xml), frmt };
}

export interface TedCheck {
  ok: boolean;
  /** Which check failed first, as an engine error code. */
  failure?: "TED_MISSING" | "TED_INVALID" | "CAF_BAD_SIGNATURE" | "CAF_UNKNOWN_IDK" | "CAF_MALFORMED";
  message?: string;
  /** DD fields read from the stamp. */
  dd?: { RE: string; TD: string; F: string; FE: string; RR: string; RSR: string; MNT: string; IT1: string; TSTED: string };
  cafEnvironment?: string;
}

/**
 * Verifies a TED element (or its text): FRMT with the CAF public key in DD/CAF, and the CAF's FRMA
 * with the trusted SII key. Never throws for bad input; reports the first failure.
 */
async function verifyTedUnsafe(ted: XElement | string, opts: CafTrustOptions = {}): Promise<TedCheck> {
  let el: XElement;
  try {
    el = typeof ted === "string" ? (parseXml(ted, "TED").documentElement as XElement) : ted;
  } catch (e) {
    return { ok: false, failure: "TED_INVALID", message: (e as Error).message };
  }
  const dd = firstChild(el, "DD");
  const frmtEl = firstChild(el, "FRMT");
  if (!dd || !frmtEl) return { ok: false, failure: "TED_MISSING", message: "The TED lacks DD or FRMT" };
  const cafEl = firstChild(dd, "CAF");
  if (!cafEl) return { ok: false, failure: "CAF_MALFORMED", message: "The TED's DD has no CAF" };
  const fields = Object.fromEntries(["RE", "TD", "F", "FE", "RR", "RSR", "MNT", "IT1", "TSTED"].map((k) => [k, childText(dd, k) ?? ""])) as NonNullable<TedCheck["dd"]>;
  let caf;
  try {
    caf = await verifyCafElement(cafEl, opts);
  } catch (e) {
    if (e instanceof EngineError) return { ok: false, failure: e.code as TedCheck["failure"], message: e.message, dd: fields };
    throw e;
  }
  const data = encodeLatin1(flatten(canonicalize(dd, { stripNamespaces: true })), "DD");
  let ok = false;
  try {
    ok = await crypto.subtle.verify(RSA_SHA1, caf.publicKey, buf(b64decode((frmtEl.textContent ?? "").trim())), buf(data));
  } catch {
    ok = false;
  }
  if (!ok) return { ok: false, failure: "TED_INVALID", message: "The stamp signature (FRMT) does not verify with the CAF public key", dd: fields, cafEnvironment: caf.environment };
  if (fields.RE !== caf.issuerRut || Number(fields.TD) !== caf.documentType || Number(fields.F) < caf.from || Number(fields.F) > caf.to) {
    return { ok: false, failure: "TED_INVALID", message: "The stamp's RE/TD/F are not covered by its CAF", dd: fields, cafEnvironment: caf.environment };
  }
  return { ok: true, dd: fields, cafEnvironment: caf.environment };
}

/** verifyTed: the documented behaviour is on verifyTedUnsafe above; this entry point guarantees that only
 * typed results or EngineErrors come out, whatever the input (fuzz-tested). */
export async function verifyTed(ted: XElement | string, opts: CafTrustOptions = {}): Promise<TedCheck> {
  try {
    return await verifyTedUnsafe(ted, opts);
  } catch (e) {
    return { ok: false, failure: "TED_INVALID", message: `The TED cannot be checked: ${(e as Error).message}` };
  }
}
