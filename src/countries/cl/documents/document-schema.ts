/**
 * Engine before simulator for the whole schema (docs/simulator-fidelity.md
 * SCH-XSD): a computed document is written as the engine will write it (with a placeholder folio,
 * stamp and signature, which the engine makes itself) and checked against the SII's schema (DTE_v10,
 * or EnvioBOLETA_v11's boleta DTE) before a folio is used. A document that breaks the schema would
 * make the SII reject its whole envelope (RSC), every other document in it included.
 */
import { EngineError, type EngineErrorCode } from "../errors";
import { NS_DSIG, parseXml, type XElement } from "../xml/xml";
import { buildDteXml } from "./dte";
import { dteSchemaProblems } from "./dte-schema";
import type { ComputedDocument } from "./invoice";
import type { Ted } from "./ted";

const PLACEHOLDER_TED: Ted = { xml: '<TED version="1.0"/>', flattened: "", bytes: new Uint8Array(), frmt: "" };
const OPAQUE = new Set(["TED"]);
const SIGNATURE = `<Signature xmlns="${NS_DSIG}"/></DTE>`;

/** Body fields of the detail elements a client's values end up in. */
const LINE_FIELDS: Record<string, string> = { QtyItem: "quantity", PrcItem: "unit_price", NmbItem: "description", DscItem: "long_description", UnmdItem: "code_unit_of_measure", DescuentoPct: "discount_percent", DescuentoMonto: "discount_amount", RecargoPct: "surcharge_percent", RecargoMonto: "surcharge_amount" };

function fieldOf(problem: string): string {
  const line = /\/Detalle\[(\d+)\]\/(\w+)/.exec(problem);
  if (line && LINE_FIELDS[line[2]!]) return `items[${Number(line[1]) - 1}].${LINE_FIELDS[line[2]!]}`;
  return problem.slice(0, problem.indexOf(":"));
}

function codeOf(problem: string): EngineErrorCode {
  if (/longer than/.test(problem)) return "FIELD_TOO_LONG";
  if (/is above|is below|digits|decimals|not an integer|not a decimal|negative|positive/.test(problem)) return "INVALID_NUMBER";
  return "INVALID_INPUT";
}

/** Throws the first schema problem of the document as an EngineError naming the body field when it can. */
export function assertDocumentSchema(d: ComputedDocument): void {
  const xml = buildDteXml(d, 1, PLACEHOLDER_TED, "2026-01-01T00:00:00").replace(/<\/DTE>\s*$/, SIGNATURE);
  const problems = dteSchemaProblems(parseXml(xml).documentElement as XElement, { opaque: OPAQUE, boleta: d.type.boleta });
  if (problems.length === 0) return;
  const first = problems[0]!;
  throw new EngineError(codeOf(first), `The document would break the SII's schema, and the SII would reject its whole envelope (RSC): ${problems.join("; ")} [SCH-XSD]`, { field: fieldOf(first) });
}
