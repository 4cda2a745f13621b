/**
 * The country port's printing (re-exported by ./port.ts, which the product imports): the printed
 * representation of issued and received documents.
 */

// ---- printing ------------------------------------------------------------------------------------

/** A company's settings for its printed documents (number formatting and language). */
export interface PrintSettings {
  decimal_places: number;
  thousand_separator: "." | ",";
  decimal_separator: "." | ",";
  /** BCP 47. */
  language: string;
}

/** The authority's authorisation of an issuer (its number and date), as the printed legend states it. */
export interface Resolution {
  number: number;
  date: string;
}

/** The issuer's resolution as the envelope of a received document stated it. */
export interface IssuerResolution extends Resolution {
  issuerRut: string;
}

/** The printed representation of documents: the country's layout, legends and printed stamp. */
export interface Printing {
  /** The paper formats in the API's spelling (a page format and receipt rolls). */
  readonly formats: readonly string[];
  /** The file name of the printed document `folio` of `documentType` issued by `issuerTaxId`. */
  fileName(p: { issuerTaxId: string; documentType: number; folio: number }, format: string): string;
  /** An issued document, from the body it was issued with and its signed file. */
  issued(p: { body: unknown; folio: number; signedXml: Uint8Array; resolution: Resolution; settings?: PrintSettings; logo?: Uint8Array; format: string }): Promise<Uint8Array>;
  /** A received document from its signed file; null when it is not a document the country can print. */
  received(p: { xml: Uint8Array; resolution?: IssuerResolution | null }): Promise<Uint8Array | null>;
  /** Why an image cannot be printed as a company's logo, or undefined when it can. */
  logoProblem(bytes: Uint8Array): Promise<string | undefined>;
}
