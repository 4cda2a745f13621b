/**
 * The buyer's answer to a factura the company issued, end to end on the simulated SII: one company
 * issues to another; once the SII accepts it the issuer's document store reads the SII's register of
 * events (store alarm -> issuance queue -> listarEventosHistDoc); the buyer accepts one factura and
 * claims another through the reception API, and a third passes its 8 days unanswered. Each shows on
 * the issued document as `buyer_response`, with an `invoice.buyer_response` event.
 */
import { env } from "cloudflare:workers";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { buyerStateOf, nextBuyerCheck, MAX_CHECK_INTERVAL_MS, MIN_CHECK_INTERVAL_MS, type BuyerEvent } from "../../src/invoices/buyer-response";
import { openStore, partitionedId, storeForId } from "../../src/storage/db/document-store";
import { call } from "../helpers/api";
import { invoiceBody, issue, readyIssuer, untilFinal, type Issuer } from "../helpers/issuer";
import { storeRows } from "../helpers/store";
import { afterAlarms, afterChecks, checkNow, issuedAccepted as issued, receivedCopy, receiver, respond, type Receiver } from "./helpers";

const DAY = 86_400_000;
describe("the buyer's answer to an issued factura", () => {
  let r: Receiver;
  let issuer: Issuer;
  beforeAll(async () => {
    r = await receiver();
    issuer = await readyIssuer([33, 61]);
  });

  it("is read from the SII once accepted: pending, with the SII reception time and the 8-day deadline", async () => {
    const doc = await issued(issuer);
    expect(doc.buyer_response).toMatchObject({ state: "PENDING", events: [] });
    // The acceptance's own event already shows it pending.
    const [accepted] = await storeRows<{ payload: string }>(issuer.companyId, sql`SELECT payload FROM event_outbox WHERE type = 'invoice.accepted' AND json_extract(payload, '$.invoice.id') = ${doc.id}`);
    expect(JSON.parse(accepted!.payload).invoice).toMatchObject({ buyer_state: "PENDING", buyer_events: "[]" });
    const read = await afterChecks(issuer, doc.id, (d) => d.buyer_response?.checked_at !== null, "first read");
    const b = read.buyer_response;
    expect(b.state).toBe("PENDING");
    expect(Date.parse(b.deadline) - Date.parse(b.sii_received_at)).toBe(8 * DAY);
    expect(b.seconds_left).toBeGreaterThan(7 * 86_400);
    // The next read a quarter of the document's age at the SII, at least 10 minutes on.
    expect(Date.parse(b.next_check_at) - Date.parse(b.checked_at)).toBe(MIN_CHECK_INTERVAL_MS);
  });

  it("shows an acceptance (ACD) with who recorded it, and records invoice.buyer_response", async () => {
    const doc = await issued(issuer);
    await afterChecks(issuer, doc.id, (d) => d.buyer_response?.checked_at !== null, "first read");
    const copy = await receivedCopy(r, issuer, doc.folio);
    expect((await respond(r, copy, "ACD")).status).toBe(200);
    await checkNow(issuer, doc.id);
    const after = await afterChecks(issuer, doc.id, (d) => d.buyer_response?.state === "ACCEPTED", "acceptance");
    expect(after.buyer_response.events).toEqual([expect.objectContaining({ code: "ACD", description: "Acepta Contenido del Documento", by_tax_id: "22222222-2" })]);
    // Still read until the deadline: the buyer may yet acknowledge receipt of the goods (ERM).
    expect(after.buyer_response.next_check_at).not.toBeNull();
    const events = await storeRows<{ type: string; payload: string }>(issuer.companyId, `SELECT type, payload FROM event_outbox WHERE type = 'invoice.buyer_response'`);
    const mine = events.filter((e) => JSON.parse(e.payload).invoice.id === doc.id);
    expect(mine).toHaveLength(1);
    expect(JSON.parse(mine[0]!.payload).invoice.buyer_state).toBe("ACCEPTED");

    // The receipt too, read at once on request: nothing more can change, no more reads.
    expect((await respond(r, copy, "ERM")).status).toBe(200);
    const both = await call("POST", `${issuer.base}/invoices/${doc.id}/buyer_response/check`, { key: issuer.owner.key });
    expect(both.status, JSON.stringify(both.body)).toBe(200);
    expect(both.body.buyer_response.events.map((e: BuyerEvent) => e.code)).toEqual(["ACD", "ERM"]);
    expect(both.body.buyer_response.next_check_at).toBeNull();
    expect(both.body.history.length).toBeGreaterThan(0);
    expect((await storeRows(issuer.companyId, sql`SELECT 1 FROM event_outbox WHERE dedupe_key = ${`buyer:${doc.id}:ACCEPTED:2`}`)).length).toBe(1);
  });

  it("shows a claim (RCD) and stops reading", async () => {
    const doc = await issued(issuer);
    await afterChecks(issuer, doc.id, (d) => d.buyer_response?.checked_at !== null, "first read");
    const copy = await receivedCopy(r, issuer, doc.folio);
    expect((await respond(r, copy, "RCD", "Precio distinto al pactado")).status).toBe(200);
    await checkNow(issuer, doc.id);
    const after = await afterChecks(issuer, doc.id, (d) => d.buyer_response?.state === "CLAIMED", "claim");
    expect(after.buyer_response.events.map((e: BuyerEvent) => e.code)).toEqual(["RCD"]);
    expect(after.buyer_response.next_check_at).toBeNull();
    // The list finds the claimed facturas (and only them).
    const claimed = await call("GET", `${issuer.base}/invoices?buyer_state=CLAIMED`, { key: issuer.owner.key });
    expect(claimed.body.data.map((d: any) => d.id)).toEqual([doc.id]);
    expect(claimed.body.total).toBe(1);
    const bad = await call("GET", `${issuer.base}/invoices?buyer_state=DISPUTED`, { key: issuer.owner.key });
    expect(bad.status).toBe(400);
  });

  it("is accepted by law once 8 days pass unanswered", async () => {
    const doc = await issued(issuer);
    await afterChecks(issuer, doc.id, (d) => d.buyer_response?.checked_at !== null, "first read");
    const nineDaysAgo = new Date(Date.now() - 9 * DAY).toISOString();
    await checkNow(issuer, doc.id, `, sii_received_at = '${nineDaysAgo}'`);
    const after = await afterChecks(issuer, doc.id, (d) => d.buyer_response?.state === "ACCEPTED_BY_LAW", "deadline");
    expect(after.buyer_response).toMatchObject({ events: [], seconds_left: 0, next_check_at: null, deadline: new Date(Date.parse(nineDaysAgo) + 8 * DAY).toISOString() });
  });

  it("is null for documents that take no answer (a credit note)", async () => {
    const res = await issue(issuer, invoiceBody(issuer.rut, "61"));
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const done = await untilFinal(issuer, res.body.id);
    expect(done.status).toBe("ACCEPTED");
    expect(done.buyer_response).toBeNull();
    const rows = await storeRows<{ n: number }>(issuer.companyId, sql`SELECT count(*) AS n FROM invoices WHERE id = ${res.body.id} AND buyer_check_at IS NOT NULL`);
    expect(rows.reduce((s, x) => s + x.n, 0)).toBe(0);
    const check = await call("POST", `${issuer.base}/invoices/${res.body.id}/buyer_response/check`, { key: issuer.owner.key });
    expect(check.status).toBe(409);
    expect(check.body.error.code).toBe("INVOICE_NO_BUYER_RESPONSE");
    expect(check.body.error.message).toMatch(/only a factura \(33, 34, 43\) the SII accepted/);
  });

  it("read on request: the SII down is a 503 and nothing changes; without a certificate, the certificate's error", async () => {
    const doc = await issued(issuer);
    const before = (await afterChecks(issuer, doc.id, (d) => d.buyer_response?.checked_at !== null, "first read")).buyer_response;
    const path = `${issuer.base}/invoices/${doc.id}/buyer_response/check`;
    await call("POST", "/simulator/sii/scenario", { key: issuer.owner.key, json: { mode: "down", count: 20 } });
    try {
      const down = await call("POST", path, { key: issuer.owner.key });
      expect(down.status, JSON.stringify(down.body)).toBe(503);
      expect(down.body.error.code).toBe("INVOICE_BUYER_CHECK_UNAVAILABLE");
    } finally {
      await call("DELETE", "/simulator/sii/scenario", { key: issuer.owner.key });
    }
    const { seconds_left: _s, ...unchanged } = before;
    expect((await call("GET", `${issuer.base}/invoices/${doc.id}`, { key: issuer.owner.key })).body.buyer_response).toMatchObject(unchanged);
    const ok = await call("POST", path, { key: issuer.owner.key });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.buyer_response.checked_at > before.checked_at).toBe(true);
    const certs = await call("GET", `${issuer.base}/certificates`, { key: issuer.owner.key });
    for (const c of certs.body.data) expect((await call("DELETE", `${issuer.base}/certificates/${c.id}`, { key: issuer.owner.key })).status).toBeLessThan(300);
    const none = await call("POST", path, { key: issuer.owner.key });
    expect(none.status).toBe(422);
    expect(none.body.error.code).toBe("CERTIFICATE_REQUIRED");
  });
});

describe("buyer response rules", () => {
  const at = Date.parse("2026-11-20T10:00:00.000Z");
  const ev = (code: string): BuyerEvent => ({ code, description: code, by_tax_id: "22222222-2", at: "2026-11-21T10:00:00-03:00" });
  const deadline = new Date(at + 8 * DAY).toISOString();

  it("a claim wins, then an acceptance, then the deadline", () => {
    expect(buyerStateOf([], deadline, at + DAY)).toBe("PENDING");
    expect(buyerStateOf([], deadline, at + 8 * DAY)).toBe("ACCEPTED_BY_LAW");
    expect(buyerStateOf([ev("ERM")], deadline, at + 9 * DAY)).toBe("ACCEPTED");
    expect(buyerStateOf([ev("RFP")], deadline, at + DAY)).toBe("CLAIMED");
    expect(buyerStateOf([ev("NCA")], null, at + 20 * DAY)).toBe("PENDING");
  });

  it("reads at a quarter of the age, 10 minutes to 6 hours, once just after the deadline, never after a claim or both acceptances", () => {
    const received = new Date(at).toISOString();
    expect(nextBuyerCheck([], received, at + 60_000)).toBe(at + 60_000 + MIN_CHECK_INTERVAL_MS);
    expect(nextBuyerCheck([], received, at + 4 * 3_600_000)).toBe(at + 5 * 3_600_000);
    expect(nextBuyerCheck([], received, at + 3 * DAY)).toBe(at + 3 * DAY + MAX_CHECK_INTERVAL_MS);
    expect(nextBuyerCheck([ev("ACD")], received, at + 8 * DAY - 3_600_000)).toBe(at + 8 * DAY + 60_000);
    expect(nextBuyerCheck([], received, at + 8 * DAY + 60_000)).toBeNull();
    expect(nextBuyerCheck([ev("RCD")], received, at + DAY)).toBeNull();
    expect(nextBuyerCheck([ev("ACD"), ev("ERM")], received, at + DAY)).toBeNull();
    expect(nextBuyerCheck([], null, at)).toBe(at + 3_600_000);
    // Without a reception time from the SII: hourly, for up to 10 days after the stamp.
    const stamped = new Date(at).toISOString();
    expect(nextBuyerCheck([], null, at + 10 * DAY - 3_600_000, stamped)).toBe(at + 10 * DAY);
    expect(nextBuyerCheck([], null, at + 10 * DAY, stamped)).toBeNull();
  });
});

/** A factura in the company's open store whose buyer check is due (the store's alarm sends it). */
async function dueInStore(companyId: string, siiReceivedAt: string | null = null, stampedAt = new Date().toISOString()): Promise<string> {
  const store = await openStore(env, companyId);
  const id = partitionedId("inv", store.ordinal);
  await store.db.run(sql`INSERT INTO invoices (id, company_id, document_type, status, folio, issue_date, recipient_rut, recipient_name, currency, total, body, buyer_state, buyer_events, sii_received_at, buyer_check_at, stamped_at)
     VALUES (${id}, ${companyId}, 33, 'ACCEPTED', 7, '2026-10-01', '77879240-0', 'Cliente', 'CLP', '1190', '{}', 'PENDING', '[]', ${siiReceivedAt}, '2000-01-01T00:00:00.000Z', ${stampedAt})`);
  return id;
}

/** The document's row once `done` holds (its store's alarm sent the check; the queue consumer handles it). */
async function rowWhen(companyId: string, id: string, done: (row: Record<string, any>) => boolean): Promise<Record<string, any>> {
  const read = async () => (await storeForId(env, companyId, id)!.db.all<Record<string, any>>(sql`SELECT buyer_state, buyer_checked_at, buyer_check_at, buyer_deadline FROM invoices WHERE id = ${id}`))[0] ?? {};
  return afterAlarms(companyId, read, done, `document ${id}`);
}

describe("a factura whose buyer check its store's alarm sends", () => {
  it("of a company without a certificate is put off an hour, not read", async () => {
    const r = await receiver("76086428-5", false);
    const id = await dueInStore(r.companyId);
    const row = await rowWhen(r.companyId, id, (x) => x.buyer_check_at > new Date(Date.now() + 30 * 60_000).toISOString());
    expect(row).toMatchObject({ buyer_state: "PENDING", buyer_checked_at: null });
    expect(Date.parse(row.buyer_check_at) - Date.now()).toBeGreaterThan(50 * 60_000);
  });

  it("of a company without a certificate for more than 10 days after its stamp is no longer put off: its checks stop", async () => {
    const r = await receiver("76086428-5", false);
    const id = await dueInStore(r.companyId, null, new Date(Date.now() - 10 * DAY - 60_000).toISOString());
    expect(await rowWhen(r.companyId, id, (x) => x.buyer_check_at === null)).toMatchObject({ buyer_state: "PENDING", buyer_checked_at: null });
  });

  it("the SII has no reception time for: read again an hour later, and no more 10 days after its stamp", async () => {
    const r = await receiver("76086428-5");
    // Folio 7 was never sent to the simulator: consultarFechaRecepcionSii answers 18, no date.
    const fresh = await dueInStore(r.companyId);
    const old = await dueInStore(r.companyId, null, new Date(Date.now() - 10 * DAY - 60_000).toISOString());
    const a = await rowWhen(r.companyId, fresh, (x) => x.buyer_checked_at !== null);
    expect(a).toMatchObject({ buyer_state: "PENDING", buyer_deadline: null });
    expect(Date.parse(a.buyer_check_at) - Date.now()).toBeGreaterThan(50 * 60_000);
    expect(await rowWhen(r.companyId, old, (x) => x.buyer_checked_at !== null)).toMatchObject({ buyer_state: "PENDING", buyer_deadline: null, buyer_check_at: null });
  });

  it("of a deleted company is no longer checked", async () => {
    const r = await receiver("76086428-5");
    const id = await dueInStore(r.companyId);
    expect((await call("DELETE", `/api/companies/${r.companyId}`, { key: r.owner.key })).status).toBe(200);
    expect(await rowWhen(r.companyId, id, (x) => x.buyer_check_at === null)).toMatchObject({ buyer_state: "PENDING", buyer_checked_at: null });
  });

  it("is read at the SII and written in its store, with its event in the store's outbox", async () => {
    const r = await receiver("76086428-5");
    const nineDaysAgo = new Date(Date.now() - 9 * DAY).toISOString();
    const id = await dueInStore(r.companyId, nineDaysAgo);
    const row = await rowWhen(r.companyId, id, (x) => x.buyer_checked_at !== null);
    expect(row).toMatchObject({ buyer_state: "ACCEPTED_BY_LAW", buyer_check_at: null, buyer_deadline: new Date(Date.parse(nineDaysAgo) + 8 * DAY).toISOString() });
    const store = storeForId(env, r.companyId, id)!.db;
    expect(await store.all(sql`SELECT type, dedupe_key FROM event_outbox WHERE company_id = ${r.companyId}`)).toEqual([{ type: "invoice.buyer_response", dedupe_key: `buyer:${id}:ACCEPTED_BY_LAW:0` }]);
    // Not sent again: nothing is due.
    expect(await store.all(sql`SELECT id FROM invoices WHERE buyer_check_at IS NOT NULL AND company_id = ${r.companyId}`)).toEqual([]);
  });
});
