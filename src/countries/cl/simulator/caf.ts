/**
 * Simulator CAF issuance (DECISIONS 18): a fresh RSA-512 e=3 stamping key pair per CAF, signed by the
 * simulator's fake SII key (IDK 999). The output looks like an SII-portal CAF file (ISO-8859-1).
 * Also usable in tests with another signing key (e.g. a test "SII" key with another IDK).
 */
import { b64encode, buf, pemDecode, pemEncode, pkcs8ToPkcs1, rsaFromSpki } from "../pki/asn1";
import { RSA_SHA1 } from "../documents/caf";
import { EngineError } from "../errors";
import { normalizeRut } from "../documents/rut";
import { encodeLatin1, escText, flatten } from "../xml/xml";
import { SIMULATOR_IDK, SIMULATOR_SII_PRIVATE_KEY_PKCS8_PEM } from "../pki/sii-simulator-key";

export interface IssueCafParams {
  rut: string;
  legalName: string;
  documentType: number;
  from: number;
  to: number;
  /** FA, YYYY-MM-DD. */
  authorizedOn: string;
  /** Signing "SII" key; defaults to the simulator key (IDK 999). */
  signer?: { idk: number; privateKey: CryptoKey };
}

export interface IssuedCaf {
  /** ISO-8859-1 bytes, as the SII portal serves the file. */
  xml: Uint8Array;
  xmlString: string;
}

let simKey: Promise<CryptoKey> | undefined;
export function simulatorSiiPrivateKey(): Promise<CryptoKey> {
  simKey ??= crypto.subtle.importKey("pkcs8", buf(pemDecode(SIMULATOR_SII_PRIVATE_KEY_PKCS8_PEM, "PRIVATE KEY")!), RSA_SHA1, false, ["sign"]);
  return simKey;
}

export async function issueSimulatorCaf(p: IssueCafParams): Promise<IssuedCaf> {
  const rut = normalizeRut(p.rut);
  if (!Number.isInteger(p.from) || !Number.isInteger(p.to) || p.from < 1 || p.to < p.from || p.to > 9_999_999_999) {
    throw new EngineError("CAF_MALFORMED", `Invalid folio range ${p.from}..${p.to}`, { field: "from" });
  }
  if (!/^\d{4}-\d{2}-\d{2}$/.test(p.authorizedOn)) throw new EngineError("INVALID_DATE", "authorizedOn must be YYYY-MM-DD", { field: "authorizedOn" });
  const signer = p.signer ?? { idk: SIMULATOR_IDK, privateKey: await simulatorSiiPrivateKey() };
  const pair = (await crypto.subtle.generateKey(
    { name: "RSASSA-PKCS1-v1_5", modulusLength: 512, publicExponent: new Uint8Array([3]), hash: "SHA-1" },
    true,
    ["sign", "verify"],
  )) as CryptoKeyPair;
  const pkcs8 = new Uint8Array((await crypto.subtle.exportKey("pkcs8", pair.privateKey)) as ArrayBuffer);
  const spki = new Uint8Array((await crypto.subtle.exportKey("spki", pair.publicKey)) as ArrayBuffer);
  const { modulus, exponent } = rsaFromSpki(spki);
  const rs = p.legalName.slice(0, 40);
  const da =
    `<DA>\n<RE>${rut}</RE>\n<RS>${escText(rs)}</RS>\n<TD>${p.documentType}</TD>\n<RNG><D>${p.from}</D><H>${p.to}</H></RNG>\n` +
    `<FA>${p.authorizedOn}</FA>\n<RSAPK><M>${b64encode(modulus)}</M><E>${b64encode(exponent)}</E></RSAPK>\n<IDK>${signer.idk}</IDK>\n</DA>`;
  const sig = await crypto.subtle.sign(RSA_SHA1, signer.privateKey, buf(encodeLatin1(flatten(da), "legalName")));
  const xmlString =
    `<?xml version="1.0" encoding="ISO-8859-1"?>\n<AUTORIZACION>\n<CAF version="1.0">\n${da}\n` +
    `<FRMA algoritmo="SHA1withRSA">${b64encode(sig)}</FRMA>\n</CAF>\n` +
    `<RSASK>${pemEncode(pkcs8ToPkcs1(pkcs8), "RSA PRIVATE KEY")}</RSASK>\n` +
    `<RSAPUBK>${pemEncode(spki, "PUBLIC KEY")}</RSAPUBK>\n</AUTORIZACION>\n`;
  return { xml: encodeLatin1(xmlString, "legalName"), xmlString };
}

