/**
 * Golden and bad-path tests of IdDoc's payment status (MedioPago, FchCancel, MntCancel, SaldoInsol,
 * TpoCtaPago, NumCtaPago, BcoPago), RUTMandante (document and boleta line) and IndNoRebaja
 * (settlement.ts, line-extras.ts), and the parties' phones, seller and SII branch codes, postal address (parties.ts).
 */
import { describe, expect, it } from "vitest";
import { doc, fails, issuer, plain, recipient } from "./helpers";

const line = { quantity: 1, unit_price: 1000, description: "a" };
const note = { invoice_type: "61", reason_code: "COM", billing_reference: [{ number: 1, invoice_type: "33", invoice_date: "2026-11-01" }] };
const usd = { invoice_type: "110", currency: { code: "USD" }, recipient: { legal_name: "ACME INC", document_number: "US-1" } };

describe("payment status (MedioPago, FchCancel, MntCancel, SaldoInsol, account)", () => {
  it("paid and unpaid parts of the total (1,190), with the means, the date and the account", () => {
    const d = doc({ items: [line], payment_method: { code: "2", means: "CH", paid_date: "2026-11-20", paid_amount: 190, balance: 1000, account: { type: "CORRIENTE", number: "123", bank: "Banco" } } });
    expect(plain(d.settlement)).toEqual({ means: "CH", paidDate: "2026-11-20", paidAmount: 190, balance: 1000, account: { type: "CORRIENTE", number: "123", bank: "Banco" } });
    expect(d.paymentForm).toBe(2);
  });
  it("each field alone, a zero balance, and nothing when only the payment form is sent", () => {
    expect(plain(doc({ payment_method: { code: "1", means: "EF" } }).settlement)).toEqual({ means: "EF" });
    expect(plain(doc({ payment_method: { code: "1", paid_amount: 1190, balance: 0 } }).settlement)).toEqual({ paidAmount: 1190, balance: 0 });
    expect(doc({ payment_method: { code: "1" } }).settlement).toBeUndefined();
  });
  it("the paid date without a payment form (FchCancel without FmaPago), as on an export paid in advance", () => {
    const d = doc({ ...usd, items: [line], customs: { payment_form: "1" }, payment_method: { paid_date: "2026-11-20" } });
    expect(plain(d.settlement)).toEqual({ paidDate: "2026-11-20" });
    expect(d.paymentForm).toBeUndefined();
    expect(doc({ payment_method: { means: "PE" } }).paymentForm).toBeUndefined();
  });
  it("export totals with decimals: the whole units are the total rounded half away from zero (1,233.5 → 1,234)", () => {
    const d = doc({ ...usd, items: [{ ...line, unit_price: 1233.5 }], payment_method: { code: "1", paid_amount: 1234, balance: 0 } });
    expect(plain(d.settlement)).toEqual({ paidAmount: 1234, balance: 0 });
  });
  it("amounts that do not add up to the total are refused with the expected value", () => {
    expect(fails({ payment_method: { code: "2", paid_amount: 200, balance: 1000 } })).toEqual({ code: "TOTALS_MISMATCH", field: "payment_method.balance", expected: "990" });
    expect(fails({ payment_method: { code: "2", paid_amount: 1191 } })).toEqual({ code: "TOTALS_MISMATCH", field: "payment_method.paid_amount", expected: "≤ 1190" });
    expect(fails({ payment_method: { code: "2", balance: 2000 } })).toEqual({ code: "TOTALS_MISMATCH", field: "payment_method.balance", expected: "≤ 1190" });
  });
  it("decimals, negatives, bad dates, unknown means and account types are refused naming the field", () => {
    expect(fails({ payment_method: { code: "1", paid_amount: 10.5 } }).field).toBe("payment_method.paid_amount");
    expect(fails({ payment_method: { code: "1", balance: -1 } }).field).toBe("payment_method.balance");
    expect(fails({ payment_method: { code: "1", paid_date: "2026-02-30" } })).toEqual({ code: "INVALID_DATE", field: "payment_method.paid_date" });
    expect(fails({ payment_method: { code: "1", means: "XX" as never } }).field).toBe("payment_method.means");
    expect(fails({ payment_method: { code: "1", account: { type: "PLAZO" as never } } }).field).toBe("payment_method.account.type");
    expect(fails({ payment_method: { code: "1", account: { bank: "B".repeat(41) } } }).field).toBe("payment_method.account.bank");
  });
  it("refused on boletas", () => {
    expect(fails({ invoice_type: "39", payment_method: { code: "1", means: "TC" } })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "payment_method.means" });
  });
});

describe("RUTMandante and IndNoRebaja", () => {
  it("the principal's RUT in the SII's form, on facturas, guías and notes", () => {
    expect(doc({ principal_rut: "11.111.111-1" }).principalRut).toBe("11111111-1");
    expect(doc({ invoice_type: "52", principal_rut: "77879240-0" }).principalRut).toBe("77879240-0");
  });
  it("per line on boletas", () => {
    const d = doc({ invoice_type: "39", recipient: undefined, items: [{ ...line, principal_rut: "77.879.240-0" }, line] });
    expect(d.lines.map((l) => l.principalRut)).toEqual(["77879240-0", undefined]);
  });
  it("a bad check digit, the wrong place or a type without it is refused naming the field", () => {
    expect(fails({ principal_rut: "11111111-2" })).toEqual({ code: "INVALID_RUT", field: "principal_rut" });
    expect(fails({ invoice_type: "39", recipient: undefined, principal_rut: "11111111-1" })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "principal_rut" });
    expect(fails({ ...usd, principal_rut: "11111111-1" })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "principal_rut" });
    expect(fails({ invoice_type: "43", items: [{ ...line, settled_type: "33" }], principal_rut: "11111111-1" })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "principal_rut" });
    expect(fails({ items: [{ ...line, principal_rut: "11111111-1" }] })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "items[0].principal_rut" });
    expect(fails({ invoice_type: "39", recipient: undefined, items: [{ ...line, principal_rut: "1-2" }] })).toEqual({ code: "INVALID_RUT", field: "items[0].principal_rut" });
  });
  it("RUTSolicita and TpoImpresion on the Documento types only, the RUT checked", () => {
    expect([doc({ requester_rut: "77.879.240-0", print_format: "TICKET" }).requesterRut, doc({ print_format: "NORMAL" }).printFormat]).toEqual(["77879240-0", "N"]);
    expect(fails({ requester_rut: "77879240-1" })).toEqual({ code: "INVALID_RUT", field: "requester_rut" });
    expect(fails({ invoice_type: "39", recipient: undefined, requester_rut: "11111111-1" })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "requester_rut" });
    expect(fails({ ...usd, print_format: "TICKET" })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "print_format" });
    expect(fails({ print_format: "PDF" as never }).field).toBe("print_format");
  });
  it("IndNoRebaja on credit notes only", () => {
    expect(doc({ ...note, no_debit_reduction: true }).noDebitReduction).toBe(true);
    expect(doc({ ...note, no_debit_reduction: false }).noDebitReduction).toBeUndefined();
    expect(fails({ no_debit_reduction: true })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "no_debit_reduction" });
    expect(fails({ ...note, invoice_type: "56", no_debit_reduction: true })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "no_debit_reduction" });
  });
});

describe("the issuer's phones, seller code and SII branch code; the recipient's postal address", () => {
  it("kept as sent", () => {
    const d = doc({ issuer: { ...issuer, phones: ["+56 2 1"], seller_code: "V1", sii_branch_code: 123 }, recipient: { ...recipient, postal_address: { address: "Casilla 1", city: "Santiago" } } });
    expect([d.issuer.phones, d.issuer.sellerCode, d.issuer.siiBranchCode, d.receiver.postal]).toEqual([["+56 2 1"], "V1", 123, { address: "Casilla 1", city: "Santiago" }]);
    expect(doc({ invoice_type: "39", recipient: undefined, issuer: { ...issuer, sii_branch_code: 9 } }).issuer.siiBranchCode).toBe(9);
  });
  it("on the wrong party, on boletas, too many or too long: refused naming the field", () => {
    expect(fails({ recipient: { ...recipient, phones: ["1"] } })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "recipient.phones" });
    expect(fails({ recipient: { ...recipient, sii_branch_code: 1 } })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "recipient.sii_branch_code" });
    expect(fails({ issuer: { ...issuer, postal_address: { address: "x" } } })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "issuer.postal_address" });
    expect(fails({ invoice_type: "39", recipient: undefined, issuer: { ...issuer, seller_code: "V1" } })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "issuer.seller_code" });
    expect(fails({ issuer: { ...issuer, phones: ["1", "2", "3"] } }).field).toBe("issuer.phones");
    expect(fails({ issuer: { ...issuer, seller_code: "V".repeat(61) } }).field).toBe("issuer.seller_code");
    expect(fails({ issuer: { ...issuer, sii_branch_code: 1_000_000_000 } }).field).toBe("issuer.sii_branch_code");
    expect(fails({ recipient: { ...recipient, postal_address: { commune: "C".repeat(21) } } }).field).toBe("recipient.postal_address.commune");
  });
});
