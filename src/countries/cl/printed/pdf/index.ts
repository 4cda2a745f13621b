export * from "./model";
export { renderPdf, pdfFileName, PDF_FORMATS, type PdfFormat, type RenderOptions } from "./render";
export { PdfInputError, formatAmount, formatQuantity, formatDate, resolveSettings } from "./format";
export { encodePdf417, fitPdf417, latin1Bytes, Pdf417Error, type Pdf417Symbol, type Pdf417Options, type Pdf417Fit, type Pdf417Box } from "./pdf417";
