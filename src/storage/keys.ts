/** R2 object keys: the only place that knows bucket paths. Keys are immutable once written. */
export const r2Keys: {
  logo: (companyId: string, logoId: string, ext: "png" | "jpg") => string;
  logoFile: (companyId: string, fileName: string) => string;
  certificate: (companyId: string, certificateId: string) => string;
  caf: (companyId: string, documentType: number, cafId: string) => string;
} = {
  logo: (companyId: string, logoId: string, ext: "png" | "jpg") => r2Keys.logoFile(companyId, `${logoId}.${ext}`),
  /** A logo by its public file name (`lgo_….png`, validated by the route). */
  logoFile: (companyId: string, fileName: string) => `companies/${companyId}/logos/${fileName}`,
  /** AES-GCM sealed .pfx. */
  certificate: (companyId: string, certificateId: string) => `companies/${companyId}/certificates/${certificateId}.pfx.sealed`,
  /** The CAF file as received (ISO-8859-1), AES-GCM sealed: it holds the RSASK stamping key. */
  caf: (companyId: string, documentType: number, cafId: string) => `companies/${companyId}/cafs/${documentType}/${cafId}.xml.sealed`,
};

export type ImageKind = { ext: "png"; contentType: "image/png" } | { ext: "jpg"; contentType: "image/jpeg" };

/** PNG or JPEG, decided from the bytes (magic numbers), never from the declared type. */
export function detectImage(bytes: Uint8Array): ImageKind | null {
  const png = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  if (bytes.length > 8 && png.every((b, i) => bytes[i] === b)) return { ext: "png", contentType: "image/png" };
  if (bytes.length > 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return { ext: "jpg", contentType: "image/jpeg" };
  return null;
}

export const documentKeys = {
  /** The signed DTE, standalone, ISO-8859-1. */
  invoiceXml: (companyId: string, invoiceId: string) => `companies/${companyId}/invoices/${invoiceId}/dte.xml`,
  /** The envelope as uploaded to the tax authority. */
  envelopeXml: (companyId: string, envelopeId: string) => `companies/${companyId}/envelopes/${envelopeId}.xml`,
  /** A rendered PDF, per format and logo (a logo change makes new renders). */
  invoicePdf: (companyId: string, invoiceId: string, format: string, logoTag: string) => `companies/${companyId}/invoices/${invoiceId}/pdf/${format}-${logoTag}.pdf`,
};
