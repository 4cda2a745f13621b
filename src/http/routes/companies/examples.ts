/** Examples of the company operations (the reference shows them; test/api/examples.test.ts checks them). */
import { EX, examplePage } from "../../openapi/example-ids";

/** The issuer block's fields the company keeps (the invoice example's issuer without its name and RUT). */
export const issuerProfileExample = {
  address: { country: "CL", region: "13", city: "Santiago", commune: "Providencia", address: "Av. Providencia 1234, of. 501" },
  tax_information: { activity: "Venta al por mayor de computadores y equipo periférico", activity_codes: [465100] },
  email: "facturacion@losandes.cl",
};

export const companyCreateExample = {
  legal_name: "COMERCIAL LOS ANDES SPA",
  tax_identification_document_code: "RUT",
  tax_identification_document_number: EX.issuerRut,
  country: "CHL",
  start_activities_date: "2014-07-01",
  issuer_profile: issuerProfileExample,
};

export const companyCreatedExample = { id_company: EX.company, id: EX.company };

export const companyExample = {
  id: EX.company,
  legal_name: "COMERCIAL LOS ANDES SPA",
  tax_identifier: EX.issuerRut,
  tax_identification_document_code: "RUT",
  country_iso3: "CHL",
  country_name: "Chile",
  start_activities_date: "2014-07-01",
  status: "ACTIVE",
  created_at: "2026-11-27T10:30:00",
  issuer_profile: issuerProfileExample,
};

export const issuerProfilePatchExample = { issuer_profile: issuerProfileExample };

export const companyPageExample = examplePage([companyExample]);

export const companyDeletedExample = { id: EX.company, status: "DELETED", message: "Company deleted" };

export const settingsExample = {
  id: EX.settings,
  id_company: EX.company,
  decimal_places: 0,
  thousand_separator: ".",
  decimal_separator: ",",
  language: "es-CL",
  time_zone: "America/Santiago",
  logo: `https://dte.example.cl/files/logos/${EX.company}/${EX.logo}.png`,
  reception_email: "dte+k3q9x2m8v7c4b1n6@dte.example.cl",
  sii_resolution_number: 80,
  sii_resolution_date: "2014-08-22",
};

export const settingsPatchExample = { sii_resolution_number: 80, sii_resolution_date: "2014-08-22", time_zone: "America/Santiago" };

export const logoUploadExample = { logo: "(binary: logo.png, a PNG or JPEG of at most 1 MiB)" };

export const logoResultExample = { file_url: `https://dte.example.cl/files/logos/${EX.company}/${EX.logo}.png` };
