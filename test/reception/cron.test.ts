/**
 * Cron: the SII's register polled per company (documents without XML listed as such, the SII
 * reception time filled in), deadlines (the store's alarm: accepted by law, events with the document as data).
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import type { Caf } from "../../src/countries/cl/documents/caf";
import type { SigningCredentials } from "../../src/countries/cl/pki/certificate";
import { pollReceptionRegister } from "../../src/reception/cron";
import { toLocalDateTime } from "../../src/lib/time";
import { sql } from "drizzle-orm";
import { call, expectError } from "../helpers/api";
import { storeRows } from "../helpers/store";
import { envelope, signedDte } from "../sii/helpers";
import { afterAlarms, getDoc, inject, respond, upload, type Receiver, receptionFixture } from "./helpers";

let cert: SigningCredentials;
let caf33: Caf;
let r: Receiver;

beforeAll(async () => {
  ({ cert, caf33, r } = await receptionFixture());
});

const byFolio = async (folio: number) => (await call("GET", `/api/reception/invoices/list?company_id=${r.companyId}&folio=${folio}`, { key: r.owner.key })).body.data;
/** Reception events are written into the outbox of the document's store, in the batch of its change. */
const events = async (type: string) => (await storeRows<{ payload: string }>(r.companyId, sql`SELECT payload FROM event_outbox WHERE company_id = ${r.companyId} AND type = ${type}`)).map((e) => JSON.parse(e.payload));

describe("register polling", () => {
  it("a document the SII holds but whose XML has not arrived is listed as such; the XML later fills the same record", async () => {
    const e = await envelope([await signedDte(caf33, 301, cert)], cert);
    await inject(e, undefined, true);
    await pollReceptionRegister(env, new Date());
    const [doc] = await byFolio(301);
    expect(doc).toMatchObject({ channel: "SII", xml_status: "NOT_YET_RECEIVED", verification: { status: "PENDING" }, response_state: "PENDING", downloads: [] });
    expect(doc.sii_received_at).not.toBeNull();
    expect(doc.seconds_left).toBeGreaterThan(7 * 86_400);
    expectError(await respond(r, doc.id, "ACD"), 422, "RECEPTION_ACTION_NO_XML");
    expectError(await call("POST", `/api/reception/invoices/${doc.id}/download/xml?company_id=${r.companyId}`, { key: r.owner.key }), 404, "RECEPTION_FILE_NOT_AVAILABLE");
    // Listed two hours before its XML arrives.
    await storeRows(r.companyId, sql`UPDATE received_documents SET created_at = ${new Date(Date.now() - 2 * 3_600_000).toISOString()} WHERE id = ${doc.id}`);
    const up = await upload(r, e.xml);
    expect(up.body.documents[0]).toMatchObject({ id: doc.id, outcome: "NEW", xml_status: "RECEIVED", sii_received_at: doc.sii_received_at, response_deadline: doc.response_deadline });
    // The file's RecepcionEnvio dates the file's arrival (FchRecep), not the register's listing.
    const arrived = up.body.documents[0].received_file.received_at;
    expect(Date.parse(arrived) - Date.parse(up.body.documents[0].received_at)).toBeGreaterThan(3_600_000);
    const ack = await call("POST", `/api/reception/invoices/${doc.id}/download/recepcion_envio?company_id=${r.companyId}`, { key: r.owner.key });
    expect(ack.status).toBe(200);
    expect(new TextDecoder("latin1").decode(await ack.raw.arrayBuffer())).toContain(`<FchRecep>${toLocalDateTime(arrived, "America/Santiago")}</FchRecep>`);
    expect((await respond(r, doc.id, "ACD")).body.response_state).toBe("ACCEPTED");
    expect((await events("received_document.response_recorded")).map((d) => [d.id, d.response_state])).toContainEqual([doc.id, "ACCEPTED"]);
  });
});

describe("deadlines", () => {
  it("past 8 days: accepted by law with a deadline_passed event; 2 days left: deadline_approaching", async () => {
    await inject(await envelope([await signedDte(caf33, 302, cert)], cert), new Date(Date.now() - 9 * 86_400_000));
    await inject(await envelope([await signedDte(caf33, 303, cert)], cert), new Date(Date.now() - 6.5 * 86_400_000));
    await env.DB.prepare("UPDATE reception_addresses SET polled_at = NULL WHERE company_id = ?").bind(r.companyId).run();
    await pollReceptionRegister(env, new Date());
    // The poll gave both their SII time (and so a deadline) in their store: its alarm is due; the cron asks no store.
    await afterAlarms(r.companyId, () => byFolio(302), ([d]) => d?.response_state === "ACCEPTED_BY_LAW", "accepted by law by the store's alarm");
    await afterAlarms(r.companyId, () => events("received_document.deadline_approaching"), (e) => e.length === 1, "the approaching event");
    const [late] = await byFolio(302);
    expect(late).toMatchObject({ response_state: "ACCEPTED_BY_LAW", seconds_left: null, responses: [{ action: "ACCEPTED_BY_LAW" }] });
    const [soon] = await byFolio(303);
    expect(soon.response_state).toBe("PENDING");
    expect(soon.seconds_left).toBeLessThan(2 * 86_400);
    expect((await events("received_document.deadline_passed")).map((d) => d.id)).toEqual([late.id]);
    expect((await events("received_document.deadline_approaching")).map((d) => d.id)).toEqual([soon.id]);
    const up = await upload(r, (await envelope([await signedDte(caf33, 302, cert)], cert)).xml);
    expect(up.body.documents[0].id).toBe(late.id);
    expectError(await respond(r, late.id, "RCD"), 422, "RECEPTION_DEADLINE_PASSED");
    expect((await getDoc(r, late.id)).body.response_state).toBe("ACCEPTED_BY_LAW");
  });

  it("a document accepted by law while its XML was awaited stays so when the XML arrives, and its received event says so", async () => {
    const e = await envelope([await signedDte(caf33, 304, cert)], cert);
    await inject(e, new Date(Date.now() - 9 * 86_400_000), true);
    await env.DB.prepare("UPDATE reception_addresses SET polled_at = NULL WHERE company_id = ?").bind(r.companyId).run();
    await pollReceptionRegister(env, new Date());
    const [listed] = await afterAlarms(r.companyId, () => byFolio(304), ([d]) => d?.response_state === "ACCEPTED_BY_LAW", "accepted by law by the store's alarm");
    const up = await upload(r, e.xml);
    expect(up.body.documents[0]).toMatchObject({ id: listed.id, xml_status: "RECEIVED", response_state: "ACCEPTED_BY_LAW", responses: [{ action: "ACCEPTED_BY_LAW" }] });
    const received = (await events("received_document.received")).filter((d) => d.id === listed.id);
    expect(received).toMatchObject([{ xml_status: "RECEIVED", response_state: "ACCEPTED_BY_LAW", responses: [{ action: "ACCEPTED_BY_LAW" }] }]);
  });
});
