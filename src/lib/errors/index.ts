export { AppError, type ErrorDetail } from "./app-error";
export { ERROR_CODES, INVOICE_INPUT_CODES, isInvoiceInputCode, statusOf, type ErrorCode, type InvoiceInputCode } from "./codes";
