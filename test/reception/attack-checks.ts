/**
 * What a received document must show when its file hid a forged copy of it (attack-files.ts): the
 * genuine document only, through every read of the API (the document, the list, the XML download,
 * the PDF), with the checks of what verified; the downloaded XML, uploaded again to another company,
 * verifies the same (the stored document is the document verified). A refused file stores nothing.
 */
import { expect } from "vitest";
import { childElements, childText, decodeXmlBytes, firstChild, parseXml, type XElement } from "../../src/countries/cl";
import type { SignedDte } from "../../src/countries/cl/documents/dte";
import { call } from "../helpers/api";
import { loadPdf } from "../pdf/helpers";
import { FORGED_NAME, FORGED_PRINTED, FORGED_TOTAL } from "./attack-files";
import { upload, type Receiver } from "./helpers";

export const GENUINE_NAME = "EMPRESA DE PRUEBA SPA";

export const checksOf = (doc: any): Record<string, string> => Object.fromEntries(doc.verification.checks.map((c: any) => [c.name, c.result]));

/** The checks that belong to the DTE itself (not to the file it came in, nor to what was received before). */
const dteChecks = (doc: any) => {
  const { envelope_signature, duplicate, ...own } = checksOf(doc);
  void envelope_signature, void duplicate;
  return own;
};

/** Nothing of the forged copy in `text`. */
export function expectNothingForged(text: string, what: string): void {
  expect(text, `${what} holds the forged total`).not.toContain(FORGED_TOTAL);
  expect(text, `${what} holds the forged issuer name`).not.toContain(FORGED_NAME);
}

/** The company's documents of `folio` (the list view). */
export async function listed(r: Receiver, folio: number): Promise<any[]> {
  const list = await call("GET", `/api/reception/invoices/list?company_id=${r.companyId}&folio=${folio}`, { key: r.owner.key });
  expect(list.status).toBe(200);
  return list.body.data;
}

const download = (r: Receiver, id: string, type: "xml" | "pdf") => call("POST", `/api/reception/invoices/${id}/download/${type}?company_id=${r.companyId}`, { key: r.owner.key });

/** The DTE's fields as the downloaded XML carries them. */
function fieldsOf(xml: Uint8Array): { root: string; folio: string | undefined; name: string | undefined; total: string | undefined } {
  const root = parseXml(decodeXmlBytes(xml), "The downloaded DTE").documentElement as XElement;
  const enc = firstChild(childElements(root).find((c) => c.localName === "Documento")!, "Encabezado")!;
  return { root: root.localName ?? "", folio: childText(firstChild(enc, "IdDoc")!, "Folio"), name: childText(firstChild(enc, "Emisor")!, "RznSoc"), total: childText(firstChild(enc, "Totales")!, "MntTotal") };
}

/**
 * The document `id` of `r` is `genuine` through every read, and its downloaded XML verifies the same
 * when `again` (another company receiving at the same RUT) takes it in. Returns the document.
 */
export async function expectGenuine(r: Receiver, id: string, genuine: SignedDte, again: Receiver): Promise<any> {
  const got = await call("GET", `/api/reception/invoices/${id}?company_id=${r.companyId}`, { key: r.owner.key });
  expect(got.status).toBe(200);
  const doc = got.body;
  expect(doc).toMatchObject({ folio: genuine.folio, issuer: { legal_name: GENUINE_NAME }, totals: { total: genuine.total }, xml_status: "RECEIVED" });
  expectNothingForged(JSON.stringify(doc), "the document");
  const rows = (await listed(r, genuine.folio)).filter((d) => d.id === id);
  expect(rows).toHaveLength(1);
  expect(rows[0]).toMatchObject({ issuer: { legal_name: GENUINE_NAME }, totals: { total: genuine.total } });
  expectNothingForged(JSON.stringify(rows), "the list");

  const xml = await download(r, id, "xml");
  expect(xml.status, "the XML download").toBe(200);
  const bytes = new Uint8Array(await xml.raw.arrayBuffer());
  expectNothingForged(decodeXmlBytes(bytes), "the downloaded XML");
  expect(fieldsOf(bytes)).toEqual({ root: "DTE", folio: String(genuine.folio), name: GENUINE_NAME, total: genuine.total });

  const pdf = await download(r, id, "pdf");
  expect(pdf.status, "the PDF download").toBe(200);
  const printed = (await loadPdf(new Uint8Array(await pdf.raw.arrayBuffer()))).pages.flatMap((p) => p.texts).join(" ");
  expect(printed, "the PDF prints the forged total").not.toContain(FORGED_PRINTED);
  expect(printed, "the PDF prints the forged issuer").not.toContain(FORGED_NAME);
  expect(printed).toContain(GENUINE_NAME);

  // The stored DTE is the DTE verified: taken in again on its own, it verifies the same.
  const re = await upload(again, bytes, "downloaded.xml");
  expect(re.status, JSON.stringify(re.body)).toBe(201);
  const copy = re.body.documents[0];
  expect(copy).toMatchObject({ folio: genuine.folio, issuer: { legal_name: GENUINE_NAME }, totals: { total: genuine.total } });
  expect(dteChecks(copy), "the checks of the downloaded XML taken in again").toEqual(dteChecks(doc));
  return doc;
}

/** An upload refused with the project's error, nothing stored for `folio`. */
export async function expectRefusedUpload(res: { status: number; body: any }, r: Receiver, folio: number): Promise<void> {
  expect(res.status, JSON.stringify(res.body)).toBe(422);
  expect(res.body.error.code).toBe("RECEPTION_FILE_INVALID");
  expect(res.body.error.message).toMatch(/^The file was not taken in: .{10,}/);
  expectNothingForged(res.body.error.message, "the error");
  expect(await listed(r, folio)).toEqual([]);
}
