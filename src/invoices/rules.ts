/**
 * Rules on dates checked at POST, before a folio is reserved, so that a document the authority would
 * reject is refused with a precise error instead of consuming a folio and failing later. Each rule
 * names its entry in docs/simulator-fidelity.md (the `[rule id]` in the message), where the SII code
 * it mirrors and the test that proves it are listed. The country's own rules on a body (amounts,
 * references, notes, the issuer's resolution) are its port's `documents` (src/countries/port.ts).
 */
import { AppError } from "../lib/errors";

/**
 * [CERT-DATE] The issue date lies within the signing certificate's validity (its dates as the
 * calendar days of the certificate's UTC instants).
 */
export function assertIssueDateInCertificate(cert: { validFrom: string; validTo: string } | undefined, issueDate: string) {
  if (!cert) return; // no certificate: the POST's D1 check (assertIssuable) answers CERTIFICATE_REQUIRED
  const from = cert.validFrom.slice(0, 10);
  const to = cert.validTo.slice(0, 10);
  if (issueDate < from || issueDate > to) {
    const message = `invoice_date ${issueDate} is outside the validity of the signing certificate (${from} to ${to}) [CERT-DATE]`;
    throw new AppError("INVOICE_INVALID_DATE", message, [{ field: "invoice_date", message }]);
  }
}

/** [CAF-DATE] The issue date is not before the authorisation date (FA) of the CAF its folio comes from. */
export function refuseBeforeAuthorization(issueDate: string, authorizedAt: string): never {
  const message = `invoice_date ${issueDate} is before ${authorizedAt}, the date the SII authorised the folios (CAF) this document would use [CAF-DATE]`;
  throw new AppError("INVOICE_INVALID_DATE", message, [{ field: "invoice_date", message }]);
}
