/** Emisor and Receptor: the issuer and the recipient (anonymous buyer on boletas without one). */
import type { z } from "zod";
import { EngineError } from "../../errors";
import type { DocumentTypeInfo } from "../document-types";
import { ANONYMOUS_BUYER_RUT, FOREIGN_RECEIVER_RUT, formatRut, parseRut, RutError } from "../rut";
import { checkDate, checkLength, LIMITS, notAllowed } from "./checks";
import type { Party } from "./model";
import type { InvoiceInput, partySchema } from "./schema";
import { isExportGuide } from "./transport";

export function rutOf(value: string, field: string): string {
  try {
    return formatRut(parseRut(value));
  } catch (e) {
    if (e instanceof RutError) throw new EngineError("INVALID_RUT", `${field}: ${e.message}`, { field });
    throw e;
  }
}

function party(p: z.infer<typeof partySchema>, path: string, role: "issuer" | "recipient", type: DocumentTypeInfo): Party {
  checkLength(p.legal_name, LIMITS.legalName, `${path}.legal_name`);
  const activity = p.tax_information?.activity;
  checkLength(activity, role === "issuer" ? LIMITS.issuerActivity : LIMITS.recipientActivity, `${path}.tax_information.activity`);
  checkLength(p.address?.address, LIMITS.address, `${path}.address.address`);
  checkLength(p.address?.city, LIMITS.commune, `${path}.address.city`);
  let rut: string;
  let foreignId: string | undefined;
  if (role === "recipient" && type.export) {
    try {
      rut = formatRut(parseRut(p.document_number));
    } catch {
      rut = FOREIGN_RECEIVER_RUT;
      foreignId = p.document_number;
    }
  } else {
    rut = rutOf(p.document_number, `${path}.document_number`);
  }
  const out: Party = { rut, legalName: p.legal_name, activityCodes: p.tax_information?.activity_codes ?? [] };
  if (activity) out.activity = activity;
  if (p.address?.address) out.address = p.address.address;
  checkLength(p.address?.commune, LIMITS.commune, `${path}.address.commune`);
  if (p.address?.city) out.city = p.address.city;
  const commune = p.address?.commune ?? p.address?.city;
  if (commune) out.commune = commune;
  contacts(p, path, role, type, out);
  if (p.foreign) {
    // Receptor/Extranjero is in the schema of every Documento and Exportaciones: a factura de compra
    // (46) to a foreign supplier states it as an export does. Boletas and the Liquidación have none.
    if (role !== "recipient" || type.boleta || type.xmlBranch === "Liquidacion") notAllowed(`${path}.foreign`, "the foreign-recipient block (Receptor/Extranjero) is for the recipient of a DTE; boletas and liquidaciones-factura (43) have none in their schema");
    if (p.foreign.additional_id && !type.export) notAllowed(`${path}.foreign.additional_id`, "IdAdicRecep is in the schema of export documents (110–112) only");
    if (p.foreign.id) foreignId = p.foreign.id;
    if (p.foreign.nationality) out.nationality = p.foreign.nationality;
    if (p.foreign.additional_id) out.additionalId = p.foreign.additional_id;
  }
  if (foreignId) out.foreignId = foreignId;
  if (p.tax_information?.resolution_date) out.resolutionDate = checkDate(p.tax_information.resolution_date, `${path}.tax_information.resolution_date`);
  if (p.tax_information?.resolution_number !== undefined) out.resolutionNumber = p.tax_information.resolution_number;
  if (role === "issuer" && !type.boleta) {
    if (!activity) throw new EngineError("INVALID_INPUT", `${path}.tax_information.activity (giro) is required for the issuer of a ${type.name}`, { field: `${path}.tax_information.activity` });
    if (out.activityCodes.length === 0) throw new EngineError("INVALID_INPUT", `${path}.tax_information.activity_codes needs 1 to 4 SII activity codes (Acteco)`, { field: `${path}.tax_information.activity_codes` });
  }
  return out;
}

/** E-mail, contact, internal code, the issuer's codes and the postal address, where the type's schema has them. */
function contacts(p: z.infer<typeof partySchema>, path: string, role: "issuer" | "recipient", type: DocumentTypeInfo, out: Party): void {
  if (p.email) {
    if (type.boleta) notAllowed(`${path}.email`, "boletas carry no e-mail of the parties");
    out.email = p.email;
  }
  if (role === "issuer" && (p.contact || p.internal_code)) notAllowed(`${path}.${p.contact ? "contact" : "internal_code"}`, "contact and internal_code belong to the recipient");
  if (p.contact) out.contact = p.contact;
  if (p.internal_code) out.internalCode = p.internal_code;
  issuerCodes(p, path, role, type, out);
  issuerExtras(p, path, role, type, out);
  if (p.postal_address) {
    if (role !== "recipient") notAllowed(`${path}.postal_address`, "the postal address (DirPostal) belongs to the recipient");
    out.postal = { ...p.postal_address };
  }
}

/** Telefono, CdgVendedor (not on boletas) and CdgSIISucur: the issuer's. */
function issuerCodes(p: z.infer<typeof partySchema>, path: string, role: "issuer" | "recipient", type: DocumentTypeInfo, out: Party): void {
  const sent = (["phones", "seller_code", "sii_branch_code"] as const).filter((k) => p[k] !== undefined);
  if (sent.length === 0) return;
  if (role !== "issuer") notAllowed(`${path}.${sent[0]}`, "phones, seller_code and sii_branch_code belong to the issuer");
  if (type.boleta && (p.phones || p.seller_code)) notAllowed(`${path}.${p.phones ? "phones" : "seller_code"}`, "a boleta's issuer carries no phones or seller code");
  if (p.phones) out.phones = p.phones;
  if (p.seller_code) out.sellerCode = p.seller_code;
  if (p.sii_branch_code !== undefined) out.siiBranchCode = p.sii_branch_code;
}

/** IdAdicEmisor (Documento and exports), CodAdicSucur (exports) and GuiaExport (guías for export). */
function issuerExtras(p: z.infer<typeof partySchema>, path: string, role: "issuer" | "recipient", type: DocumentTypeInfo, out: Party): void {
  const sent = (["additional_id", "additional_branch_code", "export_guide"] as const).filter((k) => p[k] !== undefined);
  if (sent.length === 0) return;
  if (role !== "issuer") notAllowed(`${path}.${sent[0]}`, "additional_id, additional_branch_code and export_guide belong to the issuer (a foreign recipient's additional id is foreign.additional_id)");
  if (p.additional_id !== undefined) {
    if (type.boleta || type.code === 43) notAllowed(`${path}.additional_id`, `IdAdicEmisor is not in the schema of ${type.name}`);
    out.additionalId = p.additional_id;
  }
  if (p.additional_branch_code !== undefined) {
    if (!type.export) notAllowed(`${path}.additional_branch_code`, "CodAdicSucur is for export documents (110, 111, 112)");
    out.additionalBranchCode = p.additional_branch_code;
  }
  if (p.export_guide) out.exportGuide = exportGuide(p.export_guide, `${path}.export_guide`, type);
}

/** GuiaExport ("Emisor de una Guía de despacho para Exportación"): a 52 that moves goods for export or returns them (IndTraslado 7, 8 or 9; transport.ts isExportGuide). */
function exportGuide(g: NonNullable<z.infer<typeof partySchema>["export_guide"]>, path: string, type: DocumentTypeInfo): NonNullable<Party["exportGuide"]> {
  if (type.code !== 52) notAllowed(path, "GuiaExport is for guías de despacho (52) for export");
  const out: NonNullable<Party["exportGuide"]> = {};
  if (g.transfer_code !== undefined) out.transferCode = g.transfer_code;
  if (g.authorization_number !== undefined) out.authorizationNumber = g.authorization_number;
  if (g.authorization_date !== undefined) out.authorizationDate = checkDate(g.authorization_date, `${path}.authorization_date`);
  if (Object.keys(out).length === 0) throw new EngineError("INVALID_INPUT", `${path} needs at least one of transfer_code, authorization_number and authorization_date`, { field: path });
  return out;
}

/** The document's two parties. */
export function buildParties(input: InvoiceInput, type: DocumentTypeInfo): { issuer: Party; receiver: Party } {
  if (!input.issuer) throw new EngineError("INVALID_INPUT", "issuer is required: send the issuer block, or give the company an issuer profile (PATCH /api/companies/{idCompany}, issuer_profile)", { field: "issuer" });
  const issuer = party(input.issuer, "issuer", "issuer", type);
  const transfer = input.transfer_kind ?? 1;
  if (issuer.exportGuide && !isExportGuide(input, type)) notAllowed("issuer.export_guide", `GuiaExport is for a guía that transfers goods for export or returns them (transfer_kind 7, 8 or 9), not transfer_kind ${transfer}`);
  let receiver: Party;
  if (input.recipient) receiver = party(input.recipient, "recipient", "recipient", type);
  else if (type.boleta) receiver = { rut: ANONYMOUS_BUYER_RUT, legalName: "CONSUMIDOR FINAL", activityCodes: [] };
  else throw new EngineError("INVALID_INPUT", `recipient is required on ${type.name}`, { field: "recipient" });
  return { issuer, receiver };
}
