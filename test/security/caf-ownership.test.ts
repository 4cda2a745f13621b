import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { issueSimulatorCaf } from "../../src/countries/cl/simulator/caf";
import { toLocalDateTime } from "../../src/lib/time";
import { call, expectError, newCompany, newOwner, nextRut, type Actor } from "../helpers/api";

const today = () => toLocalDateTime(new Date(), "America/Santiago").slice(0, 10);

async function cafFile(rut: string, from: number, to: number): Promise<Uint8Array> {
  return (await issueSimulatorCaf({ rut, legalName: "EMPRESA DE PRUEBA", documentType: 33, from, to, authorizedOn: today() })).xml;
}

function upload(actor: Actor, company: string, bytes: Uint8Array) {
  const form = new FormData();
  form.append("file", new File([bytes as Uint8Array<ArrayBuffer>], "caf.xml", { type: "text/xml" }));
  return call("POST", `/api/companies/${company}/enumeration/upload`, { key: actor.key, body: form });
}

describe("one folio range, one account", () => {
  it("a range loaded by one client is refused to another client's company with the same RUT", async () => {
    const rut = nextRut();
    const [a, b] = [await newOwner("CAF A"), await newOwner("CAF B")];
    const [ca, cb] = [await newCompany(a, { tax_identification_document_number: rut }), await newCompany(b, { tax_identification_document_number: rut })];
    const file = await cafFile(rut, 500, 599);
    expect((await upload(a, ca, file)).status).toBe(201);
    const refused = await upload(b, cb, file);
    expectError(refused, 409, "ENUMERATION_CAF_HELD_ELSEWHERE");
    expect(refused.body.error.message).not.toContain(ca);
    expectError(await upload(b, cb, await cafFile(rut, 550, 650)), 409, "ENUMERATION_CAF_HELD_ELSEWHERE");
    // nothing of the refused loads remains: no row, no file
    const rows = await env.DB.prepare("SELECT count(*) AS n FROM cafs WHERE company_id = ?").bind(cb).first<{ n: number }>();
    expect(rows!.n).toBe(0);
    expect((await env.FILES.list({ prefix: `companies/${cb}/cafs/` })).objects).toHaveLength(0);
    // a disjoint range is fine
    expect((await upload(b, cb, await cafFile(rut, 600, 699))).status).toBe(201);
  });

  it("a deleted company's range still counts; another RUT's same range does not", async () => {
    const rut = nextRut();
    const a = await newOwner("CAF deleted");
    const first = await newCompany(a, { tax_identification_document_number: rut });
    const file = await cafFile(rut, 1, 50);
    expect((await upload(a, first, file)).status).toBe(201);
    expect((await call("DELETE", `/api/companies/${first}`, { key: a.key })).status).toBe(200);
    const second = await newCompany(a, { tax_identification_document_number: rut });
    expectError(await upload(a, second, file), 409, "ENUMERATION_CAF_HELD_ELSEWHERE");
    const other = nextRut();
    const third = await newCompany(a, { tax_identification_document_number: other });
    expect((await upload(a, third, await cafFile(other, 1, 50))).status).toBe(201);
  });

  it("concurrent uploads of one range into two accounts: exactly one wins", async () => {
    const rut = nextRut();
    const owners = await Promise.all([0, 1, 2].map((i) => newOwner(`CAF race ${i}`)));
    const companies = await Promise.all(owners.map((o) => newCompany(o, { tax_identification_document_number: rut })));
    const file = await cafFile(rut, 1000, 1099);
    const results = await Promise.all(owners.map((o, i) => upload(o, companies[i]!, file)));
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409]);
    const held = await env.DB.prepare(`SELECT count(*) AS n FROM cafs WHERE company_id IN (?, ?, ?)`).bind(...companies).first<{ n: number }>();
    expect(held!.n).toBe(1);
  });
});
