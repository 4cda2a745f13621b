/** SubTotInfo: sub-totals for printing, each the sum of the MontoItem of the lines it names. */
import { EngineError } from "../../errors";
import type { ComputedLine, ComputedSubtotal } from "./model";
import type { InvoiceInput } from "./schema";

export function buildSubtotals(input: InvoiceInput, lines: ComputedLine[]): ComputedSubtotal[] {
  return (input.subtotals ?? []).map((s, i) => {
    const p = `subtotals[${i}]`;
    let value = 0n;
    s.lines.forEach((n, j) => {
      const line = lines[n - 1];
      if (!line) throw new EngineError("INVALID_INPUT", `${p}.lines[${j}]: there is no line ${n} (the document has ${lines.length})`, { field: `${p}.lines[${j}]`, expected: `1–${lines.length}` });
      value += line.amount;
    });
    const out: ComputedSubtotal = { no: i + 1, description: s.description, lines: s.lines, value };
    if (s.order !== undefined) out.order = s.order;
    return out;
  });
}
