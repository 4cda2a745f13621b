/**
 * The document model the routes describe and validate with: the invoice body schema and the
 * document-type table of the country adapter (Chile is the only country today; a second one adds
 * its adapter behind src/countries and is chosen here by the company's country).
 */
export { DOCUMENT_TYPES, findDocumentType, invoiceSchema } from "../countries/cl";
