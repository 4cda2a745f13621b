/** Examples of the certificate operations (checked by test/api/examples.test.ts). */
import { EX, examplePage } from "../../openapi/example-ids";

export const certificateUploadExample = { certificate: "(binary: firma.pfx, at most 64 KiB)", password: "clave-del-pfx" };

export const certificateExample = {
  id: EX.certificate,
  id_company: EX.company,
  subject_name: "JUAN PEREZ SOTO",
  holder_rut: EX.holderRut,
  issuer_name: "E-CERTCHILE CA FIRMA ELECTRONICA AVANZADA",
  serial_number: "5f2a91c03b7e4d18",
  fingerprint_sha1: "2729ffd7b8e1ca3d89795da8be1734ede0251d1d",
  valid_from: "2026-03-02T14:05:11.000Z",
  valid_to: "2029-03-02T14:05:11.000Z",
  validity: "VALID",
  active: true,
  created_at: "2026-11-27T13:31:05.000Z",
};

export const certificatePageExample = examplePage([certificateExample]);

export const certificateDeletedExample = { ...certificateExample, active: false };
