/**
 * Received documents of the legacy partition (ids without `_p<n>_`, made before the move): in D1
 * until the data migration switches group "reception", then in the company's store 0. Before the
 * switch they are read, listed, answered and marked by the cron's deadline pass in D1, and the
 * duplicate check finds them; after it the same calls reach store 0 (whose alarm then runs their
 * deadlines) and D1 refuses writes.
 */
import { env } from "cloudflare:workers";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import type { Caf } from "../../src/countries/cl/documents/caf";
import type { SigningCredentials } from "../../src/countries/cl/pki/certificate";
import { storeFor } from "../../src/db/document-store";
import { forgetLegacyState } from "../../src/db/document-store/legacy";
import { sha256Hex } from "../../src/lib/crypto";
import { newId } from "../../src/lib/ids";
import { migrateToStores } from "../../src/operations/store-migration";
import { receptionDeadlines, receptionOverdueMails } from "../../src/reception/cron";
import { REPLY_MAIL_STALE_MS } from "../../src/reception/overdue-mails";
import { APPROACHING_MS } from "../../src/countries/cl";
import { dteKey, fileKey } from "../../src/reception/intake";
import { verifyInbound, xmlDocumentBytes } from "../../src/countries/cl";
import { call, expectError } from "../helpers/api";
import { envelope, ISSUER_RUT, signedDte } from "../sii/helpers";
import { afterAlarms, alarmAt, getDoc, inject, receptionFixture, respond, until, upload, type Receiver } from "./helpers";

const DAY = 86_400_000;
let cert: SigningCredentials;
let caf33: Caf;
let r: Receiver;

beforeAll(async () => {
  ({ cert, caf33, r } = await receptionFixture());
});

/** A document received before the move: its file in R2 and its row in D1, with a legacy id. */
async function legacyDocument(folio: number, siiDaysAgo: number | null, withXml = true): Promise<{ id: string; xml: Uint8Array }> {
  const e = await envelope([await signedDte(caf33, folio, cert)], cert);
  await inject(e, new Date(Date.now() - (siiDaysAgo ?? 0) * DAY));
  const id = newId("rcv");
  const key = fileKey(r.companyId, await sha256Hex(e.xml));
  const dte = xmlDocumentBytes((await verifyInbound(e.xml, { mode: "simulator" })).documents[0]!.xml).bytes;
  const dteSha = await sha256Hex(dte);
  const sii = siiDaysAgo === null ? null : new Date(Date.now() - siiDaysAgo * DAY).toISOString();
  if (withXml) await Promise.all([env.FILES.put(key, e.xml), env.FILES.put(dteKey(r.companyId, dteSha), dte)]);
  await env.DB.prepare(
    `INSERT INTO received_documents (id, company_id, issuer_rut, document_type, folio, total, recipient_rut, channel, xml_key, xml_sha256, reception_status, checks, sii_received_at, response_deadline, response_state, created_at)
     VALUES (?, ?, ?, 33, ?, '1190', '77879240-0', ?, ?, ?, ?, '[]', ?, ?, 'PENDING', ?)`,
  ).bind(id, r.companyId, ISSUER_RUT, folio, withXml ? "UPLOAD" : "SII", withXml ? key : null, withXml ? dteSha : null, withXml ? 0 : null, sii, sii && new Date(Date.parse(sii) + 8 * DAY).toISOString(), new Date(Date.now() - (600 - folio) * 60_000).toISOString()).run();
  forgetLegacyState(); // nothing adds a legacy row in service: the isolate learns it as one started after it would
  return { id, xml: e.xml };
}

const d1Row = (id: string) => env.DB.prepare("SELECT response_state, xml_sha256 FROM received_documents WHERE id = ?").bind(id).first<{ response_state: string; xml_sha256: string | null }>();
const list = async (query: string) => (await call("GET", `/api/reception/invoices/list?company_id=${r.companyId}&${query}`, { key: r.owner.key })).body;

describe("the legacy partition of received documents", () => {
  it("is D1 until the switch (read, listed, found by the duplicate check, answered, marked), then store 0", async () => {
    const old = await legacyDocument(451, 1);
    const late = await legacyDocument(452, 9);
    const placeholder = await legacyDocument(453, 2, false);
    const fresh = (await upload(r, (await envelope([await signedDte(caf33, 454, cert)], cert)).xml)).body.documents[0];
    // The e-mail that brought 451, recorded in D1 before the move (its log reads partition 0 where the group says).
    const mailId = newId("inm");
    await env.DB.prepare("INSERT INTO inbound_messages (id, company_id, channel, sender, recipient, size, sha256, outcome, detail, documents, created_at) VALUES (?, ?, 'EMAIL', 'p@proveedor.cl', 'dte+x@dte.localhost', 1234, NULL, 'STORED', NULL, 1, ?)")
      .bind(mailId, r.companyId, new Date(Date.now() - 600 * 60_000).toISOString()).run();
    await env.DB.prepare("UPDATE received_documents SET message_id = ? WHERE id = ?").bind(mailId, old.id).run();
    const messages = async () => (await call("GET", `/api/reception/messages?company_id=${r.companyId}`, { key: r.owner.key })).body;
    const mail = async () => (await call("GET", `/api/reception/messages/${mailId}?company_id=${r.companyId}`, { key: r.owner.key })).body;

    // Before the switch: D1.
    expect((await getDoc(r, old.id)).body).toMatchObject({ id: old.id, folio: 451, xml_status: "RECEIVED" });
    const all = await list("per_page=10");
    expect([all.total, all.data.map((d: any) => d.id)]).toEqual([4, [old.id, late.id, placeholder.id, fresh.id]]);
    expect((await list("per_page=1&page=4")).data.map((d: any) => d.id)).toEqual([fresh.id]);
    expect((await call("POST", `/api/reception/invoices/${old.id}/download/xml?company_id=${r.companyId}`, { key: r.owner.key })).status).toBe(200);
    // The same XML again is the legacy document; the legacy placeholder is filled where it lives.
    expect((await upload(r, old.xml)).body.documents[0]).toMatchObject({ id: old.id, outcome: "ALREADY_RECEIVED" });
    const filled = (await upload(r, placeholder.xml)).body.documents[0];
    expect(filled).toMatchObject({ id: placeholder.id, outcome: "NEW", xml_status: "RECEIVED" });
    expect((await d1Row(placeholder.id))!.xml_sha256).toMatch(/^[0-9a-f]{64}$/);
    const acd = await respond(r, old.id, "ACD");
    expect(acd.status, JSON.stringify(acd.body)).toBe(200);
    expect(await d1Row(old.id)).toMatchObject({ response_state: "ACCEPTED" });
    // A reply mail whose queued attempts were lost is found by the cron's sweep of D1 and SENT.
    const ackMail = async () => (await env.DB.prepare("SELECT json_extract(responses, '$[0].mail') AS mail, mail_due_at FROM received_documents WHERE id = ?").bind(old.id).first<{ mail: string; mail_due_at: string | null }>())!;
    await until(async () => JSON.parse((await ackMail()).mail).state, (state) => state === "SENT", "the ACD's first mail");
    const longAgo = new Date(Date.now() - 2 * REPLY_MAIL_STALE_MS).toISOString();
    await env.DB.prepare("UPDATE received_documents SET responses = json_set(responses, '$[0].mail', json(?)), mail_due_at = ? WHERE id = ?")
      .bind(JSON.stringify({ state: "PENDING", attempts: 1, sent_at: null, message: "421 try again later", next_attempt_at: longAgo }), longAgo, old.id).run();
    await receptionOverdueMails(env, new Date());
    await until(async () => JSON.parse((await ackMail()).mail), (m) => m.state === "SENT" && m.attempts === 2, "the ACD's mail queued by the cron's sweep");
    expect((await ackMail()).mail_due_at).toBeNull();
    await receptionDeadlines(env, new Date());
    expect(await d1Row(late.id)).toMatchObject({ response_state: "ACCEPTED_BY_LAW" });
    expect(await env.DB.prepare("SELECT count(*) AS n FROM event_outbox WHERE dedupe_key = ?").bind(`deadline_passed:${late.id}`).first("n")).toBe(1);
    expect(await storeFor(env, r.companyId, 0).db.all(sql`SELECT id FROM received_documents`)).toEqual([]);
    const log = await messages();
    // Newest first: the three uploads (454, then 451 and 453 again) in the open store, then the e-mail in D1.
    expect([log.total, log.data.map((m: any) => m.channel), log.data[3].id]).toEqual([4, ["UPLOAD", "UPLOAD", "UPLOAD", "EMAIL"], mailId]);
    expect(await mail()).toMatchObject({ id: mailId, outcome: "STORED", subject: null, attachments: [], document_ids: [old.id] });

    // The data migration copies partition 0 and switches the group.
    let step;
    do step = await migrateToStores(env, 1000, ["reception"]);
    while (!step.done);
    const inStore0 = async (id: string) => ((await storeFor(env, r.companyId, 0).db.all(sql`SELECT response_state FROM received_documents WHERE id = ${id}`)) as { response_state: string }[])[0];
    expect(await inStore0(old.id)).toEqual({ response_state: "ACCEPTED" });
    expect(await inStore0(late.id)).toEqual({ response_state: "ACCEPTED_BY_LAW" });
    // The copy armed store 0's alarm for the deadline job: 2 days before the still pending placeholder's deadline.
    const deadline = Date.parse((await getDoc(r, placeholder.id)).body.response_deadline);
    await afterAlarms(r.companyId, () => alarmAt(r.companyId, 0), (at) => at === deadline - APPROACHING_MS, "store 0's alarm at the placeholder's 2-days-left time");

    // After the switch: store 0; D1 refuses writes.
    const erm = await respond(r, old.id, "ERM");
    expect(erm.status, JSON.stringify(erm.body)).toBe(200);
    expect(await inStore0(old.id)).toEqual({ response_state: "ACCEPTED_AND_RECEIVED" });
    expect(await d1Row(old.id)).toMatchObject({ response_state: "ACCEPTED" });
    // Its event is in store 0's outbox, and store 0's notice gets it fanned out from there.
    const store0Events = () => storeFor(env, r.companyId, 0).db.all<{ type: string; dispatched_at: string | null }>(sql`SELECT type, dispatched_at FROM event_outbox`);
    const fanned = await until(store0Events, (rows) => rows.length > 0 && rows.every((e) => e.dispatched_at !== null), "store 0's events fanned out");
    expect(fanned.map((e) => e.type)).toContain("received_document.response_recorded");
    await expect(env.DB.prepare("UPDATE received_documents SET total = '1' WHERE id = ?").bind(old.id).run()).rejects.toThrow(/LEGACY_MOVED/);
    expect((await getDoc(r, old.id)).body.response_state).toBe("ACCEPTED_AND_RECEIVED");
    expect((await list("per_page=10")).total).toBe(4);
    expectError(await respond(r, late.id, "RCD"), 422, "RECEPTION_DEADLINE_PASSED");
    // The message log reads the copies in store 0.
    expect(await storeFor(env, r.companyId, 0).db.all(sql`SELECT id FROM inbound_messages`)).toEqual([{ id: mailId }]);
    expect((await messages()).data.map((m: any) => m.id)).toEqual(log.data.map((m: any) => m.id));
    expect(await mail()).toMatchObject({ id: mailId, attachments: [], document_ids: [old.id] });
    expect((await upload(r, old.xml)).body.documents[0]).toMatchObject({ id: old.id, outcome: "ALREADY_RECEIVED" });
  });
});
