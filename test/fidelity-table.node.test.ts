import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ERROR_CODES } from "../src/lib/errors/codes";

/**
 * docs/simulator-fidelity.md is checked, not trusted: every cited test
 * exists under that title, every rule the simulator applies is also stopped before a folio is used
 * (at POST or by construction), every POST rule names a real error code, and the counts the
 * document states are the counts of its table.
 */
const DOC = "docs/simulator-fidelity.md";
const text = readFileSync(DOC, "utf8");

interface Row {
  id: string;
  sii: string;
  simulator: string;
  beforeFolio: string;
}

function rows(): Row[] {
  const out: Row[] = [];
  for (const line of text.split("\n")) {
    if (!line.startsWith("| ")) continue;
    const cells = line.split(/(?<!\\)\|/).slice(1, -1).map((c) => c.trim());
    if (cells.length !== 6 || !/^[A-Z0-9-]+$/.test(cells[0]!) || cells[0] === "Id") continue;
    out.push({ id: cells[0]!, sii: cells[2]!, simulator: cells[4]!, beforeFolio: cells[5]! });
  }
  return out;
}

const citations = (cell: string) => [...cell.matchAll(/`(test\/[^`]+)` › "([^"]+)"/g)].map((m) => ({ file: m[1]!, title: m[2]! }));
const kind = (cell: string) => cell.split(/[\s(—,:]/)[0]!;

function stated(label: RegExp): number {
  const m = label.exec(text);
  if (!m) throw new Error(`${DOC} does not state ${label}`);
  return Number(m[1]);
}

describe("the simulator fidelity table", () => {
  const table = rows();

  it("lists every rule once, each with an SII answer, a simulator verdict and a before-a-folio verdict", () => {
    expect(table.length).toBeGreaterThan(40);
    expect(new Set(table.map((r) => r.id)).size).toBe(table.length);
    for (const r of table) {
      expect(r.sii, r.id).not.toBe("");
      expect(["yes", "no"], `${r.id} simulator: ${r.simulator}`).toContain(kind(r.simulator));
      expect(["POST", "build", "no"], `${r.id} before a folio: ${r.beforeFolio}`).toContain(kind(r.beforeFolio));
    }
  });

  it("every cited test exists under the cited title", () => {
    for (const r of table) {
      for (const c of [...citations(r.simulator), ...citations(r.beforeFolio)]) {
        expect(existsSync(c.file), `${r.id}: ${c.file}`).toBe(true);
        expect(readFileSync(c.file, "utf8").includes(c.title), `${r.id}: "${c.title}" in ${c.file}`).toBe(true);
      }
    }
  });

  it("a rule the simulator applies has a test or says it is untested; a rule stopped before a folio has a test", () => {
    for (const r of table) {
      if (kind(r.simulator) === "yes") expect(citations(r.simulator).length > 0 || /untested/.test(r.simulator), r.id).toBe(true);
      if (kind(r.beforeFolio) !== "no") expect(citations(r.beforeFolio).length, r.id).toBeGreaterThan(0);
    }
  });

  it("no rule the simulator applies is left untested, and a rule it does not apply says why", () => {
    expect(table.filter((r) => kind(r.simulator) === "yes" && citations(r.simulator).length === 0).map((r) => r.id)).toEqual([]);
    for (const r of table.filter((x) => kind(x.simulator) === "no")) expect(/not published|not rejected/.test(r.sii), `${r.id}: ${r.sii}`).toBe(true);
  });

  it("a POST rule names error codes that exist", () => {
    for (const r of table.filter((x) => kind(x.beforeFolio) === "POST")) {
      const codes = [...r.beforeFolio.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]!);
      expect(codes.length, r.id).toBeGreaterThan(0);
      for (const c of codes) expect(Object.hasOwn(ERROR_CODES, c), `${r.id}: ${c}`).toBe(true);
    }
  });

  it("engine before simulator: every rule the simulator rejects on is stopped before a folio is used", () => {
    const leftToTheSii = table.filter((r) => kind(r.simulator) === "yes" && kind(r.beforeFolio) === "no").map((r) => r.id);
    expect(leftToTheSii).toEqual([]);
  });

  it("the counts the document states are the table's", () => {
    const atPost = table.filter((r) => kind(r.beforeFolio) === "POST").length;
    const byBuild = table.filter((r) => kind(r.beforeFolio) === "build").length;
    const none = table.filter((r) => kind(r.beforeFolio) === "no").length;
    const simulated = table.filter((r) => kind(r.simulator) === "yes");
    const simulatedTested = simulated.filter((r) => citations(r.simulator).length > 0).length;
    const counts = { rules: table.length, atPost, byBuild, none, simulated: simulated.length, simulatedTested };
    console.log(`fidelity table: ${JSON.stringify(counts)}`);
    expect(counts).toEqual({
      rules: stated(/Of the \*\*(\d+)\*\* rules above/),
      atPost: stated(/\*\*(\d+)\*\* are refused at POST/),
      byBuild: stated(/\*\*(\d+)\*\* hold by construction/),
      none: stated(/\*\*(\d+)\*\* are left to the SII/),
      simulated: stated(/The simulator applies \*\*(\d+)\*\*/),
      simulatedTested: stated(/\*\*(\d+)\*\* of them with a test/),
    });
  });
});
