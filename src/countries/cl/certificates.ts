/**
 * Companies' certificates as the product sees them (the country port's CertificateRules): a
 * PKCS#12 file whose certificate carries its holder's RUT (SAN otherName 1.3.6.1.4.1.8321.1), the
 * identity the SII authenticates senders by.
 */
import { CertificateRefusal, type CertificateRefusalReason, type CertificateRules } from "../port";
import { isEngineError, type EngineErrorCode } from "./errors";
import { credentialsFromParts, openPfxNative, type OpenedPfx } from "./pki/certificate";

const REASONS: Partial<Record<EngineErrorCode, CertificateRefusalReason>> = {
  CERT_NOT_PFX: "NOT_PFX",
  CERT_WRONG_PASSWORD: "WRONG_PASSWORD",
  CERT_PFX_TOO_COSTLY: "TOO_COSTLY",
  CERT_NO_PRIVATE_KEY: "NO_PRIVATE_KEY",
  CERT_UNSUPPORTED_KEY: "NO_PRIVATE_KEY",
  CERT_NO_CERTIFICATE: "NO_CERTIFICATE",
  CERT_KEY_MISMATCH: "KEY_MISMATCH",
  CERT_NO_RUT: "NO_TAX_ID",
};

async function opened(file: Uint8Array, password: string): Promise<OpenedPfx> {
  try {
    return await openPfxNative(file, password);
  } catch (e) {
    if (isEngineError(e)) throw new CertificateRefusal(REASONS[e.code] ?? "NOT_PFX", e.message);
    throw e;
  }
}

export const chileanCertificates: CertificateRules = {
  async read(file, password) {
    const c = await opened(file, password);
    return {
      holderTaxId: c.rut,
      holderTaxIdText: c.rutText,
      subjectName: c.subjectCN,
      issuerName: c.issuerCN ?? c.issuer,
      serialNumber: c.serialNumber,
      fingerprintSha1: c.fingerprintSha1,
      notBefore: c.notBefore,
      notAfter: c.notAfter,
    };
  },
  async open(file, password) {
    const c = await opened(file, password);
    return credentialsFromParts(c.certificateDer, c.privateKeyPkcs8);
  },
};
