/**
 * Hostile received files built from genuine signed documents: a forged copy of the genuine element
 * (another issuer name, MntTotal 9999999; for a buyer's reply another verdict or document) hidden
 * where an XML parser does not see it but a search of the raw text does: a processing instruction,
 * a comment, a CDATA section, an entity declaration without a DOCTYPE, a second root element, an
 * Object inside the Signature, the unsigned KeyInfo. The "-swallow" variants hide only the forged
 * element's start (up to its KeyInfo) and open a comment or CDATA section there that runs over the
 * start of the genuine element and ends inside the genuine (unsigned) KeyInfo: a text search that
 * takes the first "<DTE" to the first "</DTE>" gets a well-formed forged DTE whose tail is the
 * genuine one's, while the parsed tree holds the genuine DTE only.
 */
import { XML_DECL, type SignedDte } from "../../src/countries/cl/documents/dte";
import type { SigningCredentials } from "../../src/countries/cl/pki/certificate";
import { encodeLatin1 } from "../../src/countries/cl/xml/xml";
import { envelope } from "../sii/helpers";

export const FORGED_NAME = "PROVEEDOR FALSIFICADO LIMITADA";
export const FORGED_TOTAL = "9999999";
/** How the PDF prints the forged total. */
export const FORGED_PRINTED = "9.999.999";

export const HIDINGS = ["pi", "pi-swallow", "comment", "comment-swallow", "cdata", "cdata-swallow", "entity", "second-root", "object", "keyinfo"] as const;
export type Hiding = (typeof HIDINGS)[number];

/** Where a hidden copy goes: `inside` replaces the genuine element in its parent; `prolog` follows the XML declaration; `epilog` follows the root element. */
export interface Placed {
  inside: string;
  prolog: string;
  epilog: string;
}

/** The genuine DTE element with another issuer name and total (its signature does not cover them any more). */
export function forgedDte(element: string): string {
  const out = element.replace(/<RznSoc>[^<]*<\/RznSoc>/, `<RznSoc>${FORGED_NAME}</RznSoc>`).replace(/<MntTotal>\d+<\/MntTotal>/, `<MntTotal>${FORGED_TOTAL}</MntTotal>`);
  if (!out.includes(FORGED_NAME) || !out.includes(FORGED_TOTAL)) throw new Error("the genuine DTE has no RznSoc or MntTotal to forge");
  return out;
}

/** Text put at the start of the element's first KeyInfo (the DTE's signature's: the Reference names the Documento only). */
function intoKeyInfo(element: string, text: string): string {
  if (!element.includes("<KeyInfo>")) throw new Error("no KeyInfo");
  return element.replace("<KeyInfo>", `<KeyInfo>${text}`);
}

/** Text put at the end of the element's last Signature (an Object there is signed by no Reference). */
function intoSignatureEnd(element: string, text: string): string {
  const at = element.lastIndexOf("</Signature>");
  if (at < 0) throw new Error("no Signature");
  return element.slice(0, at) + text + element.slice(at);
}

/** The container must hold the forged text as it is: none of its own end markers in it. */
function fits(text: string, forbidden: string[]): string {
  for (const f of forbidden) if (text.includes(f)) throw new Error(`the forged text holds ${f}`);
  return text;
}

/**
 * The genuine `element` with `forged` (a forged copy of it) hidden as `how` says. `inRoot`: the
 * element is the document's root (a standalone file, a reply), so what goes "before it" goes in the
 * prolog, where no CDATA section may stand (a CDATA then goes inside the root, after its start tag).
 */
export function hide(element: string, forged: string, how: Hiding, inRoot = false): Placed {
  const head = forged.slice(0, forged.indexOf("<KeyInfo>") + "<KeyInfo>".length);
  const none = { prolog: "", epilog: "" };
  switch (how) {
    case "pi":
      return { ...none, inside: `<?forged ${fits(forged, ["?>"])}?>\n${element}` };
    case "pi-swallow":
      return { ...none, inside: `<?forged ${fits(head, ["?>"])}<!--?>\n${intoKeyInfo(element, "-->")}` };
    case "comment":
      return { ...none, inside: `<!--${fits(forged, ["--"])}-->\n${element}` };
    case "comment-swallow":
      return { ...none, inside: `<!--${fits(head, ["--"])}<![CDATA[-->\n${intoKeyInfo(element, "<![CDATA[]]>")}` };
    case "cdata":
      if (inRoot) return { ...none, inside: element.replace(/^(<[^>]*>)/, `$1<![CDATA[${fits(forged, ["]]>"])}]]>`) };
      return { ...none, inside: `<![CDATA[${fits(forged, ["]]>"])}]]>\n${element}` };
    case "cdata-swallow":
      if (inRoot) throw new Error("a CDATA section cannot stand before the root element");
      return { ...none, inside: `<![CDATA[${fits(head, ["]]>"])}<!--]]>\n${intoKeyInfo(element, "-->")}` };
    case "entity":
      return { inside: element, prolog: `<!ENTITY forged '${fits(forged, ["'"])}'>\n`, epilog: "" };
    case "second-root":
      return { inside: element, prolog: "", epilog: `\n${forged}` };
    case "object":
      return { ...none, inside: intoSignatureEnd(element, `<Object>${forged}</Object>`) };
    case "keyinfo":
      return { ...none, inside: intoKeyInfo(element, forged) };
  }
}

/** A file's text with a prolog after its XML declaration and an epilog after its root element. */
function framed(xml: string, p: Placed): string {
  const decl = xml.indexOf("?>") + 2;
  const body = xml.slice(decl).trimEnd();
  return `${xml.slice(0, decl)}\n${p.prolog}${body.trimStart()}${p.epilog}\n`;
}

/**
 * An EnvioDTE holding `dte` with its forged copy hidden as `how` says, signed anew by the sender
 * (anyone can sign an envelope: what is hidden inside the SetDTE is then covered by a valid envelope
 * signature, as a hostile sender would make it).
 */
export async function hostileEnvelope(dte: SignedDte, how: Hiding, signer: SigningCredentials): Promise<Uint8Array> {
  const p = hide(dte.element, forgedDte(dte.element), how);
  const e = await envelope([{ ...dte, element: p.inside }], signer);
  return encodeLatin1(framed(e.xmlString, p));
}

/** A standalone DTE file with its forged copy hidden as `how` says (the DTE's own signature is untouched). */
export function hostileDte(dte: SignedDte, how: Exclude<Hiding, "cdata-swallow">): Uint8Array {
  const p = hide(dte.element, forgedDte(dte.element), how, true);
  return encodeLatin1(framed(XML_DECL + p.inside + "\n", p));
}

/**
 * A buyer's signed reply (RespuestaDTE or EnvioRecibos) with a forged copy hidden as `how` says;
 * `forge` makes the copy (another verdict, another document). The reply's root is the element.
 */
export function hostileReply(xmlString: string, how: Exclude<Hiding, "pi-swallow" | "comment-swallow" | "cdata-swallow">, forge: (root: string) => string): Uint8Array {
  const decl = xmlString.indexOf("?>") + 2;
  const root = xmlString.slice(decl).trim();
  const forged = forge(root);
  if (forged === root) throw new Error("the forged reply is the genuine one");
  const p = hide(root, forged, how, true);
  return encodeLatin1(framed(xmlString.slice(0, decl) + "\n" + p.inside + "\n", p));
}
