/**
 * The document model the routes describe and validate with, from the issuing country's port: the
 * invoice body schema (its OpenAPI request schema) and its document types.
 */
import { issuingCountry } from "../countries";

const { documents } = issuingCountry();

/** The body POST /invoices accepts. */
export const invoiceSchema = documents.bodySchema;

/** A document type by its code or short name (any case), or undefined. */
export const findDocumentType = (input: string | number) => documents.findType(input);

/** A document type's name, or its code when the country does not issue it. */
export const documentTypeName = (code: number) => documents.findType(code)?.name ?? String(code);
