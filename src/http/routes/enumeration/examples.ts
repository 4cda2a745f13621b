/** Examples of the folio (CAF) operations (checked by test/api/examples.test.ts). */
import { EX, examplePage } from "../../openapi/example-ids";

const range = {
  id: EX.caf,
  enumeration_from: 1001,
  enumeration_end: 1100,
  active: true,
  authorized_at: "2026-11-25",
  expires_at: "2027-05-25",
  expired: false,
  available: 58,
  next_folio: 1043,
  annulled: 0,
  source: "UPLOAD",
  created_at: "2026-11-25T15:02:40.000Z",
};

export const cafUploadExample = { file: "(binary: FoliosSII7608642833100120261125.xml, the CAF as downloaded from the SII)" };

export const rangeLoadedExample = { ...range, available: 100, next_folio: 1001, id_document_type: "33", document_type_name: "FACTURA ELECTRÓNICA" };

export const refetchExample = { document_type: "33", quantity: 100 };

export const refetchedExample = {
  ...rangeLoadedExample,
  id: "caf_01M8EK5TSG1BK4JFK2BK6ZGSPK",
  enumeration_from: 1101,
  enumeration_end: 1200,
  next_folio: 1101,
  source: "AUTHORITY",
  authorized_at: "2026-11-27",
  expires_at: "2027-05-27",
  created_at: "2026-11-27T13:31:40.000Z",
};

export const enumerationPageExample = examplePage([
  {
    id_document_type: "33",
    document_type_name: "FACTURA ELECTRÓNICA",
    folios_available: 58,
    next_folio: 1043,
    alert_threshold: 10,
    alert_threshold_is_default: true,
    expired_unused: 0,
    ranges: [range],
  },
]);

export const nextFolioExample = { next_folio_number: 1050 };

export const nextFolioResultExample = { id_document_type: "33", folios_updated: 7, next_number_to_use: 1050, message: "next folio set to 1050; 7 lower folios marked as used" };

export const thresholdExample = { alert_threshold: 20 };

export const thresholdResultExample = { id_document_type: "33", alert_threshold: 20, alert_threshold_is_default: false };
