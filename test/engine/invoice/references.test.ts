/** Golden tests of the Referencia builder (references.ts). */
import { describe, expect, it } from "vitest";
import { doc, fails, plain } from "./helpers";

const ref = { number: 7, invoice_type: "33", invoice_date: "2026-11-01" };

describe("references", () => {
  it("per-reference CodRef, IndGlobal, RUTOtr, and the document reason on the first modifiable reference", () => {
    const d = doc({
      invoice_type: "61", reason_code: "ANU",
      billing_reference: [{ number: "4500012", invoice_type: "801", invoice_date: "2026-10-01", other_issuer: "77.879.240-0" }, ref, { number: 0, invoice_type: "33", invoice_date: "2026-11-01", global: true, reason_code: "COM", reason: "Corrige montos en 25 facturas" }],
    });
    expect(plain(d.references)).toEqual([
      { lineNo: 1, type: "801", folio: "4500012", date: "2026-10-01", otherIssuer: "77879240-0" },
      { lineNo: 2, type: "33", folio: "7", date: "2026-11-01", codRef: 1, reason: "ANULA DOCUMENTO DE REFERENCIA" },
      { lineNo: 3, type: "33", folio: "0", date: "2026-11-01", global: true, codRef: 3, reason: "Corrige montos en 25 facturas" },
    ]);
    expect(doc({ billing_reference: [{ number: "HES-1", invoice_type: "HES", invoice_date: "2026-11-01", reason_code: "1" }] }).references[0]!.codRef).toBe(1);
  });
  it("precise errors", () => {
    expect(fails({ billing_reference: [{ ...ref, global: true }] })).toEqual({ code: "REFERENCE_INVALID", field: "billing_reference[0].number", expected: "0" });
    expect(fails({ billing_reference: [{ ...ref, other_issuer: "1-1" }] })).toMatchObject({ code: "INVALID_RUT", field: "billing_reference[0].other_issuer" });
    expect(fails({ billing_reference: [{ ...ref, reason_code: "XYZ" }] })).toMatchObject({ code: "REASON_CODE_UNKNOWN", field: "billing_reference[0].reason_code" });
    // A text correction on any one reference makes the note a text correction: zero amounts (SII ref §1.2 b).
    expect(fails({ invoice_type: "61", reason_code: "COM", billing_reference: [ref, { number: 9, invoice_type: "52", invoice_date: "2026-11-02", reason_code: "COT" }] })).toMatchObject({ code: "TOTALS_MISMATCH", field: "items" });
  });
});
