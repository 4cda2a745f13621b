import { beforeAll, describe, expect, it } from "vitest";
import { call, expectError } from "../helpers/api";
import { readyIssuer, type Issuer } from "../helpers/issuer";
import { csvLine, csvText, latin1, postCsv, untilCompleted } from "./helpers";

/**
 * CSV batches: the template, both encodings and separators, decimal comma and point, the hostile
 * cases, and a 1,000-document file with a few bad documents through to the simulated SII.
 */
let issuer: Issuer;

beforeAll(async () => {
  issuer = await readyIssuer(["33", "39"], 1100);
});

describe("the layout", () => {
  it("serves a template that, with the company's RUT, is a batch that issues", async () => {
    const res = await call("GET", "/api/invoice-batches/csv-template", { key: issuer.owner.key });
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toContain("text/csv");
    const text = (res.body as string).replaceAll("76086428-5", issuer.rut);
    expect(text.split("\r\n")[0]).toMatch(/^document_key;invoice_type;invoice_date;/);
    const now = new Date().toLocaleString("sv-SE", { timeZone: "America/Santiago" }).slice(0, 19);
    const batch = await postCsv(issuer, text.replaceAll("2026-11-27 10:30:00", now).replace(/2026-12-27/, new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10)).replace("ERP-1001", `ERP-${crypto.randomUUID()}`).replace("POS-0001", `POS-${crypto.randomUUID()}`));
    expect(batch.status, JSON.stringify(batch.body)).toBe(202);
    expect(batch.body, JSON.stringify(batch.body.results)).toMatchObject({ source: "CSV", rows: 2, documents: 2, refused: 0, file_name: "lote.csv" });
    expect(batch.body.results.map((r: any) => r.lines)).toEqual([[2, 3], [4]]);
    expect((await untilCompleted(issuer, batch.body.id)).counts).toMatchObject({ ACCEPTED: 2 });
    const boleta = await call("GET", `${issuer.base}/invoices/${batch.body.results[0].invoice_id}`, { key: issuer.owner.key });
    expect(boleta.body.total).toBe(String(Math.round(1.5 * 1990) + 450));
  });

  it("reads UTF-8 with a BOM and ISO-8859-1, semicolons and commas, decimal comma and point", async () => {
    const lines = (k: string, price: string) => [csvLine(issuer, k, { item_description: "Ñandú de peluche", item_quantity: "2", item_unit_price: price })];
    const utf8 = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode(csvText(lines("u", "1.234,5"), ";"))]);
    const iso = latin1(csvText(lines("i", "1234.5"), ","));
    const points = latin1(csvText(lines("p", "1234.5"), ";"));
    const [a, b, c] = await Promise.all([postCsv(issuer, utf8), postCsv(issuer, iso), postCsv(issuer, points, { decimal_separator: "." })]);
    for (const r of [a, b, c]) {
      expect(r.status, JSON.stringify(r.body)).toBe(202);
      expect(r.body.results[0].status, JSON.stringify(r.body.results[0])).toBe("RECEIVED");
    }
    expect(a.body.layout).toBe('dte-batch-csv/1 (UTF-8, separator ";", decimal ",")');
    expect(b.body.layout).toBe('dte-batch-csv/1 (ISO-8859-1, separator ",", decimal ".")');
    for (const r of [a, b, c]) {
      const doc = await call("GET", `${issuer.base}/invoices/${r.body.results[0].invoice_id}`, { key: issuer.owner.key });
      expect(doc.body.total).toBe("2469");
    }
    const xml = await untilCompleted(issuer, b.body.id);
    expect(xml.counts.ACCEPTED).toBe(1);
  });
});

describe("hostile files", () => {
  it("refuse the bad document with the line and column, and issue the others", async () => {
    const lines = [
      csvLine(issuer, "ok"),
      csvLine(issuer, "newline", { item_description: "Pan\namasado" }),
      csvLine(issuer, "formula", { item_description: "=cmd|' /C calc'!A0" }),
      csvLine(issuer, "number", { item_quantity: "1,2,3" }),
      csvLine(issuer, "price", { item_unit_price: "abc" }),
      csvLine(issuer, "ok2"),
    ];
    const text = csvText(lines).replace(/\r\n(wide;[^\r]*)/, "") + "wide;39;x;y\r\n";
    const res = await postCsv(issuer, text);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const byKey = res.body.results;
    expect(byKey.map((r: any) => r.status)).toEqual(["RECEIVED", "REFUSED", "REFUSED", "REFUSED", "REFUSED", "RECEIVED", "REFUSED"]);
    expect(byKey[1].error).toMatchObject({ code: "BATCH_ROW_INVALID" });
    expect(byKey[1].error.details[0].message).toMatch(/^line 3, column item_description: holds a line break/);
    expect(byKey[2].error.details[0]).toMatchObject({ field: "rows[2].items[0].description" });
    expect(byKey[2].error.details[0].message).toMatch(/^line 5, column item_description: starts with "=" like a spreadsheet formula/);
    expect(byKey[3].error.details[0].message).toMatch(/line 6, column item_quantity: "1,2,3" is not a number with a decimal comma/);
    expect(byKey[4].error.details[0].message).toMatch(/line 7, column item_unit_price/);
    expect(byKey[6].error.message).toMatch(/line 9 has 4 columns where the header has 27/);
    expect(byKey[6].lines).toEqual([9]);
  });

  it("a field the body refuses is named by its line and column", async () => {
    const res = await postCsv(issuer, csvText([csvLine(issuer, "a"), csvLine(issuer, "b", { invoice_type: "99" }), csvLine(issuer, "b", { item_description: "x".repeat(81), invoice_type: "", invoice_date: "", external_reference: "" })]));
    expect(res.body.results[1].error.code, JSON.stringify(res.body.results[1])).toBe("VALIDATION_FAILED");
    expect(res.body.results[1].error.details[0]).toMatchObject({ field: "rows[1].items[1].description" });
    expect(res.body.results[1].error.details[0].message).toMatch(/^line 4, column item_description: At most 80 characters/);
  });

  it("refuse the whole file when it cannot be read, and store nothing", async () => {
    expectError(await postCsv(issuer, ""), 400, "BATCH_FILE_INVALID");
    expectError(await postCsv(issuer, "a;b;c\r\n1;2;3\r\n"), 400, "BATCH_FILE_INVALID");
    expectError(await postCsv(issuer, new Uint8Array([0x50, 0x4b, 0x03, 0x04, 0, 0, 0])), 400, "BATCH_FILE_INVALID");
    const open = await postCsv(issuer, csvText([csvLine(issuer, "q")]) + 'x;"never closed\r\n');
    expectError(open, 400, "BATCH_FILE_INVALID");
    expect(open.body.error.message).toMatch(/Quote Not Closed|opening quote/i);
    const header = await postCsv(issuer, csvText([csvLine(issuer, "q")]).replace("item_unit_price", "precio"));
    expectError(header, 400, "BATCH_FILE_INVALID");
    expect(header.body.error.message).toContain("unknown column(s) precio; missing column(s) item_unit_price");
    const big = new Uint8Array(10 * 1024 * 1024 + 1).fill(0x41);
    expectError(await postCsv(issuer, big), 413, "BATCH_FILE_TOO_LARGE");
    const many = csvText(Array.from({ length: 1001 }, (_, i) => csvLine(issuer, `k${i}`)));
    expectError(await postCsv(issuer, many), 400, "BATCH_TOO_MANY_ROWS");
  });

  it("a retried upload with the same key replays, whatever its multipart boundary", async () => {
    const text = csvText([csvLine(issuer, "r")]);
    const key = { "Idempotency-Key": crypto.randomUUID() };
    const first = await postCsv(issuer, text, {}, key);
    const again = await postCsv(issuer, text, {}, key);
    expect(again.status).toBe(202);
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(again.body.id).toBe(first.body.id);
    expectError(await postCsv(issuer, csvText([csvLine(issuer, "other")]), {}, key), 409, "IDEMPOTENCY_KEY_REUSED");
  });
});

describe("a file of 1,000 documents with a few bad ones", () => {
  it("ends with every good document ACCEPTED and every bad one explained", async () => {
    const lines = Array.from({ length: 1000 }, (_, i) => csvLine(issuer, `d${i}`, { item_unit_price: String(1000 + i) }));
    lines[10] = { ...lines[10]!, item_unit_price: "=1+1" };
    lines[500] = { ...lines[500]!, issuer_rut: "76086428-5" };
    lines[998] = { ...lines[998]!, item_quantity: "-" };
    const res = await postCsv(issuer, latin1(csvText(lines)));
    expect(res.status, JSON.stringify(res.body).slice(0, 1000)).toBe(202);
    expect(res.body).toMatchObject({ rows: 1000, documents: 997, refused: 3 });
    expect(res.body.results.filter((r: any) => r.error).map((r: any) => [r.row, r.error.code])).toEqual([[10, "BATCH_ROW_INVALID"], [500, "INVOICE_ISSUER_MISMATCH"], [998, "BATCH_ROW_INVALID"]]);
    expect(res.body.results[500].error.details[0].message).toMatch(/^line 502, column issuer_rut: /);
    const done = await untilCompleted(issuer, res.body.id, 240_000);
    expect(done.counts).toMatchObject({ ACCEPTED: 997, REFUSED: 3 });
  }, 300_000);
});
