/**
 * IdDoc's payment status (MedioPago, FchCancel, MntCancel, SaldoInsol, TpoCtaPago, NumCtaPago,
 * BcoPago), the principal (RUTMandante), the requester (RUTSolicita), the print format (TpoImpresion)
 * and the credit note without debit reduction (IndNoRebaja).
 */
import { EngineError } from "../../errors";
import { divRound, formatScaled, parseScaled, pow10 } from "../decimal";
import type { DocumentTypeInfo } from "../document-types";
import { checkDate, notAllowed } from "./checks";
import type { ComputedDocument } from "./model";
import { rutOf } from "./parties";
import type { InvoiceInput } from "./schema";

type Settlement = NonNullable<ComputedDocument["settlement"]>;

/** MntCancel and SaldoInsol are whole numbers in the schema (no decimals, even on exports). */
function wholeAmount(value: unknown, field: string, whole: bigint): bigint {
  const v = parseScaled(value, 0, field);
  if (v > whole) throw new EngineError("TOTALS_MISMATCH", `${field} ${v} is more than the total ${whole}`, { field, expected: `≤ ${whole}` });
  return v;
}

function account(a: NonNullable<NonNullable<InvoiceInput["payment_method"]>["account"]>): Settlement["account"] {
  const out: NonNullable<Settlement["account"]> = {};
  if (a.type) out.type = a.type;
  if (a.number) out.number = a.number;
  if (a.bank) out.bank = a.bank;
  return out;
}

export function buildSettlement(input: InvoiceInput, type: DocumentTypeInfo, scale: number, total: bigint): Settlement | undefined {
  const p = input.payment_method;
  if (!p) return undefined;
  const keys = (["means", "paid_date", "paid_amount", "balance", "account"] as const).filter((k) => p[k] !== undefined);
  if (keys.length === 0) return undefined;
  if (type.boleta) notAllowed(`payment_method.${keys[0]}`, "boletas carry no payment status (MedioPago, FchCancel, MntCancel, SaldoInsol, account)");
  const s: Settlement = {};
  /** The total in whole units, rounded half away from zero when it has decimals (exports). */
  const whole = divRound(total, pow10(scale));
  if (p.means) s.means = p.means;
  if (p.paid_date) s.paidDate = checkDate(p.paid_date, "payment_method.paid_date");
  if (p.paid_amount !== undefined) s.paidAmount = wholeAmount(p.paid_amount, "payment_method.paid_amount", whole);
  if (p.balance !== undefined) s.balance = wholeAmount(p.balance, "payment_method.balance", whole);
  if (s.paidAmount !== undefined && s.balance !== undefined && s.paidAmount + s.balance !== whole) {
    throw new EngineError("TOTALS_MISMATCH", `payment_method.paid_amount ${s.paidAmount} + balance ${s.balance} is not the total ${whole}`, { field: "payment_method.balance", expected: String(whole - s.paidAmount) });
  }
  if (p.account) s.account = account(p.account);
  return s;
}

type Marks = Pick<ComputedDocument, "principalRut" | "requesterRut" | "printFormat" | "noDebitReduction">;

/** RUTMandante, RUTSolicita and TpoImpresion of the document (DTE_v10 Documento) and IndNoRebaja (credit notes 61). */
export function buildPrincipal(input: InvoiceInput, type: DocumentTypeInfo): Marks {
  const out: Marks = {};
  const documento = (field: string, what: string) => {
    if (type.boleta && field === "principal_rut") notAllowed(field, "on boletas the principal is per line: items[].principal_rut");
    if (type.boleta || type.xmlBranch !== "Documento") notAllowed(field, `${what} is not part of ${type.name}`);
  };
  if (input.principal_rut !== undefined) {
    documento("principal_rut", "RUTMandante");
    out.principalRut = rutOf(input.principal_rut, "principal_rut");
  }
  if (input.requester_rut !== undefined) {
    documento("requester_rut", "RUTSolicita");
    out.requesterRut = rutOf(input.requester_rut, "requester_rut");
  }
  if (input.print_format !== undefined) {
    documento("print_format", "TpoImpresion");
    out.printFormat = input.print_format === "TICKET" ? "T" : "N";
  }
  if (input.no_debit_reduction) {
    if (type.code !== 61) notAllowed("no_debit_reduction", "IndNoRebaja is for credit notes (61) only");
    out.noDebitReduction = true;
  }
  return out;
}
