import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { parseTaxpayerCsv, parseTaxpayerLine, TAXPAYER_CSV_HEADER } from "../../src/accounts/taxpayers/csv";
import { loadTaxpayers } from "../../src/accounts/taxpayers/load";
import { call, expectError, newOwner, type Actor } from "../helpers/api";

let owner: Actor;
beforeAll(async () => {
  owner = await newOwner("Taxpayers");
});

const FILE = [
  TAXPAYER_CSV_HEADER,
  "76086428-5;COMERCIAL LOS ANDES SPA;80;22-08-2014;dte@losandes.cl;",
  "96.790.240-3;DISTRIBUIDORA NORTE S.A.;0;01-03-2020;;https://dte.example.cl",
  "12345678-9;MALO DV;80;22-08-2014;a@b.cl;", // wrong check digit
  "11111111-1;;80;22-08-2014;a@b.cl;", // no name
  "77777777-7;FECHA MALA;80;31-02-2014;a@b.cl;", // no such date
  "22222222-2;SIN RESOLUCION;ochenta;22-08-2014;a@b.cl;",
  "33333333-3;CORREO MALO;80;22-08-2014;no-es-correo;",
  "solo;dos",
  "",
  "76086428-5;COMERCIAL LOS ANDES SPA (NUEVO NOMBRE);81;23-08-2014;nuevo@losandes.cl;", // repeat: last kept
].join("\n");

async function lookup(rut: string) {
  return call("GET", `/api/catalogs/CL/taxpayers/${encodeURIComponent(rut)}`, { key: owner.key });
}

describe("taxpayer CSV", () => {
  it("parses good rows and reports each bad line with its number and reason", () => {
    const { rows, bad } = parseTaxpayerCsv(FILE);
    expect(rows.map((r) => r.rut)).toEqual(["76086428-5", "96790240-3"]);
    expect(rows[0]).toEqual({ rut: "76086428-5", legalName: "COMERCIAL LOS ANDES SPA (NUEVO NOMBRE)", resolutionNumber: 81, resolutionDate: "2014-08-23", exchangeEmail: "nuevo@losandes.cl", url: null });
    expect(bad.map((b) => b.line)).toEqual([4, 5, 6, 7, 8, 9, 11]);
    expect(bad[0]!.reason).toMatch(/check digit/);
    expect(bad[2]!.reason).toMatch(/FECHA RESOLUCION/);
    expect(bad[5]!.reason).toMatch(/found 2/);
    expect(bad[6]!.reason).toMatch(/repeated/);
  });

  it("accepts ISO dates too and refuses overlong fields", () => {
    expect(parseTaxpayerLine("11111111-1;X;1;2020-01-31;;")).toMatchObject({ ok: true, row: { resolutionDate: "2020-01-31" } });
    expect(parseTaxpayerLine(`11111111-1;${"X".repeat(201)};1;2020-01-31;;`)).toMatchObject({ ok: false });
  });
});

describe("loading and GET /api/catalogs/{country}/taxpayers/{tax_id}", () => {
  it("loads, serves by any RUT form, and a reload replaces the list without leftovers", async () => {
    const { rows, bad } = parseTaxpayerCsv(FILE);
    const progress: number[] = [];
    const first = await loadTaxpayers(env.DB, rows, bad, { source: "test-1.csv", onProgress: (d) => progress.push(d) });
    expect(first).toMatchObject({ loaded: 2, rejected: 7 });
    expect(progress).toEqual([2]);
    for (const form of ["76086428-5", "76.086.428-5", "760864285"]) {
      const res = await lookup(form);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        tax_id: "76086428-5", legal_name: "COMERCIAL LOS ANDES SPA (NUEVO NOMBRE)", authorized_dte: true, resolution_number: 81,
        resolution_date: "2014-08-23", exchange_email: "nuevo@losandes.cl", url: null, activities: [], source: "SII_DIRECTORY", livemode: false,
      });
    }
    // Same file again: same answers (idempotent), and the first load's rows are pruned.
    const second = await loadTaxpayers(env.DB, rows, bad, { source: "test-1.csv" });
    expect(second.pruned).toBe(2);
    // A smaller list: the dropped RUT disappears.
    const third = await loadTaxpayers(env.DB, rows.slice(1), [], { source: "test-2.csv" });
    expect(third.pruned).toBe(2);
    expect((await lookup("96790240-3")).body.url).toBe("https://dte.example.cl");
    const gone = await lookup("76086428-5"); // still served by the simulator's own list
    expect(gone.body.source).toBe("SIMULATOR");
    const count = await env.DB.prepare("SELECT COUNT(*) AS n FROM taxpayers").first<{ n: number }>();
    expect(count!.n).toBe(1);
    const loads = await env.DB.prepare("SELECT status FROM taxpayer_loads").all<{ status: string }>();
    expect(loads.results.map((l) => l.status)).toEqual(["CURRENT"]);
  });

  it("never serves a load that did not finish", async () => {
    await env.DB.prepare("INSERT INTO taxpayer_loads (id, source, status, started_at) VALUES ('tpl_broken', 'x', 'LOADING', '2026-01-01')").run();
    await env.DB.prepare("INSERT INTO taxpayers VALUES ('tpl_broken', '55555555-5', 'HALF LOADED', 1, '2020-01-01', NULL, NULL)").run();
    expectError(await lookup("55555555-5"), 404, "TAXPAYER_NOT_FOUND");
    const { rows } = parseTaxpayerCsv(FILE);
    const next = await loadTaxpayers(env.DB, rows, [], { source: "after-crash.csv" });
    expect(next.pruned).toBeGreaterThanOrEqual(1);
    const left = await env.DB.prepare("SELECT COUNT(*) AS n FROM taxpayers WHERE load_id = 'tpl_broken'").first<{ n: number }>();
    expect(left!.n).toBe(0);
  });

  it("serves the simulator's companies and refuses bad or unknown RUTs", async () => {
    const sim = await lookup("11111111-1");
    expect(sim.body).toMatchObject({ legal_name: "CONTRIBUYENTE DE PRUEBA", source: "SIMULATOR" });
    expectError(await lookup("12345678-9"), 400, "COMPANY_TAX_ID_INVALID");
    expectError(await lookup("12345678-5"), 404, "TAXPAYER_NOT_FOUND");
    expectError(await call("GET", "/api/catalogs/PE/taxpayers/20100070970", { key: owner.key }), 404, "CATALOG_COUNTRY_NOT_SUPPORTED");
  });
});
