/**
 * The buyer's side: a factura the company received was ceded by its supplier to a factoring company;
 * the reception cron asks the SII's register of cessions and shows it on the received document
 * (`cession`, pay the holder, not the supplier) with one `received_document.ceded` event; asking
 * again on request changes nothing. Uses the reception samples' fixed recipient RUT: isolated.
 */
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { call } from "../helpers/api";
import { readyIssuer, type Issuer } from "../helpers/issuer";
import { storeRows } from "../helpers/store";
import { getDoc, receivedCopy, receiver, type Receiver } from "../reception/helpers";
import { ASSIGNEE, cede, cedibleFactura, untilCessionFinal } from "./helpers";

describe("a received factura that its supplier ceded", () => {
  let r: Receiver;
  let issuer: Issuer;
  beforeAll(async () => {
    r = await receiver();
    issuer = await readyIssuer([33]);
  });

  it("shows the holder to pay, from the register, with one received_document.ceded event", async () => {
    const doc = await cedibleFactura(issuer);
    const res = await cede(issuer, doc.id);
    expect((await untilCessionFinal(issuer, res.body.id)).status).toBe("REGISTERED");
    const id = await receivedCopy(r, issuer, doc.folio);
    const seen = (await getDoc(r, id)).body;
    expect(seen.cession, JSON.stringify(seen)).toMatchObject({ holder_tax_id: ASSIGNEE.tax_id, collection_tax_id: null, amount: null });
    expect(seen.cession.annotated_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/);
    const check = await call("POST", `/api/reception/invoices/${id}/cession/check?company_id=${r.companyId}`, { key: r.owner.key });
    expect(check.status, JSON.stringify(check.body)).toBe(200);
    expect(check.body.cession).toMatchObject({ holder_tax_id: ASSIGNEE.tax_id, first_seen_at: seen.cession.first_seen_at });
    const events = await storeRows<{ payload: string }>(r.companyId, sql`SELECT payload FROM event_outbox WHERE type = 'received_document.ceded'`);
    const mine = events.filter((e) => JSON.parse(e.payload).id === id);
    expect(mine).toHaveLength(1);
    expect(JSON.parse(mine[0]!.payload).cession.holder_tax_id).toBe(ASSIGNEE.tax_id);
  });

  it("a received factura nobody ceded shows no cession, asked on request too", async () => {
    const doc = await cedibleFactura(issuer);
    const id = await receivedCopy(r, issuer, doc.folio);
    const check = await call("POST", `/api/reception/invoices/${id}/cession/check?company_id=${r.companyId}`, { key: r.owner.key });
    expect(check.status, JSON.stringify(check.body)).toBe(200);
    expect(check.body.cession).toBeNull();
    const missing = await call("POST", `/api/reception/invoices/rcv_01AAAAAAAAAAAAAAAAAAAAAAAA/cession/check?company_id=${r.companyId}`, { key: r.owner.key });
    expect(missing.status).toBe(404);
  });
});
