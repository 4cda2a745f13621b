/**
 * The signed seed (`<getToken><item><Semilla>N</Semilla></item></getToken>`) for GetTokenFromSeed and
 * boleta.electronica.token: enveloped XMLDSig, Reference URI="" (whole document), SII profile
 * (C14N 1.0, RSA-SHA1, SHA-1, KeyValue + X509Certificate), unprefixed Signature as the root's last
 * child.
 *
 * Why not the engine's buildTokenRequest: its signXml appends a newline after the Signature inside the
 * root. With URI="" the enveloped-signature transform removes only the Signature element, so that
 * newline stays in what a verifier digests and the signature does not verify (a strict verifier,
 * such as the SII's or our simulator's, answers 05). Here the Signature is inserted with no
 * surrounding whitespace, so the digested document is exactly the unsigned one.
 * (Reported to the engine owner; switch back when signXml handles URI="".)
 */
import { b64encode, uintValue, wrap64 } from "../asn1";
import { canonicalize } from "../c14n";
import { childElements, firstChild, NS_DSIG, parseXml, type XElement } from "../xml";
import { ALG, type XmlSigner } from "../xmldsig";

export async function signedTokenRequest(seed: string, signer: XmlSigner): Promise<string> {
  const s = seed.trim();
  if (!/^\d+$/.test(s)) throw new Error("The seed is a number");
  const unsigned = `<getToken><item><Semilla>${s}</Semilla></item></getToken>`;
  const digest = b64encode(await crypto.subtle.digest("SHA-1", new TextEncoder().encode(canonicalize(parseXml(unsigned)))));
  const signedInfo =
    `<SignedInfo><CanonicalizationMethod Algorithm="${ALG.C14N}"></CanonicalizationMethod>` +
    `<SignatureMethod Algorithm="${ALG.RSA_SHA1}"></SignatureMethod>` +
    `<Reference URI=""><Transforms><Transform Algorithm="${ALG.ENVELOPED}"></Transform></Transforms>` +
    `<DigestMethod Algorithm="${ALG.SHA1}"></DigestMethod><DigestValue>${digest}</DigestValue></Reference></SignedInfo>`;
  const keyInfo =
    `<KeyInfo><KeyValue><RSAKeyValue><Modulus>${wrap64(b64encode(uintValue(signer.modulus)))}</Modulus>` +
    `<Exponent>${b64encode(uintValue(signer.exponent))}</Exponent></RSAKeyValue></KeyValue>` +
    `<X509Data><X509Certificate>${wrap64(signer.certificateBase64.replace(/\s+/g, ""))}</X509Certificate></X509Data></KeyInfo>`;
  const placeholder = "@@SIGNATURE_VALUE@@";
  const withSig = unsigned.replace("</getToken>", `<Signature xmlns="${NS_DSIG}">${signedInfo}<SignatureValue>${placeholder}</SignatureValue>${keyInfo}</Signature></getToken>`);
  const doc = parseXml(withSig);
  const sig = childElements(doc.documentElement as XElement, "Signature")[0]!;
  const c14nSi = canonicalize(firstChild(sig, "SignedInfo")!);
  const value = await crypto.subtle.sign({ name: "RSASSA-PKCS1-v1_5" }, signer.privateKey, new TextEncoder().encode(c14nSi));
  return `<?xml version="1.0"?>\n` + withSig.replace(placeholder, wrap64(b64encode(value)));
}
