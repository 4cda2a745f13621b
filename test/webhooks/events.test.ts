/**
 * Every event type of the catalogue, produced by its real writer (the pipeline's transitions, the
 * folio allocator, the certificate cron) and delivered through the real queue to the recording
 * receiver, each verified with the Standard Webhooks reference library.
 */
import { afterEach, describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import worker from "../../src/index";
import { invoiceBody as issuanceMessage } from "../../src/invoices/pipeline/messages";
import { sql } from "drizzle-orm";
import { partitionedId, storeForId } from "../../src/storage/db/document-store";
import { storeRows } from "../helpers/store";
import { call, newCompany, newOwner } from "../helpers/api";
import { makeFakeCertificate, makeFakePfx } from "../helpers/fake-certificates";
import { invoiceBody, issue, readyIssuer, untilFinal, type Issuer } from "../helpers/issuer";
import { received, receiverUrl, register, types, until, verified } from "./helpers";
import { afterChecks, checkNow, emailMessage, issuedAccepted, receivedCopy, receiver, respond } from "../reception/helpers";

const DAY = 86_400_000;

/** The test keys that set a scenario of the simulated SII: each clears its own after the test. */
const scenarioKeys = new Set<string>();
afterEach(async () => {
  for (const key of scenarioKeys) await call("DELETE", "/simulator/sii/scenario", { key });
  scenarioKeys.clear();
});

function scenario(issuer: Issuer, body: Record<string, unknown>) {
  scenarioKeys.add(issuer.owner.key);
  return call("POST", "/simulator/sii/scenario", { key: issuer.owner.key, json: { rut: issuer.rut, ...body } });
}

/** Issues one factura and returns the final document and the verified payloads its endpoint got. */
async function issueAndCollect(issuer: Issuer, last: string) {
  const { url, path } = receiverUrl(last);
  const hook = await register(issuer.owner, issuer.companyId, { url, events: ["invoice.sent", last] });
  const posted = await issue(issuer, invoiceBody(issuer.rut, "33"));
  expect(posted.status).toBe(202);
  const final = await untilFinal(issuer, posted.body.id);
  const got = await until(path, (r) => types(r).includes(last));
  return { final, payloads: got.map((r) => verified(hook.secret, r)), path };
}

describe("every event type, from its real writer", () => {
  it("invoice.rejected: SENT then REJECTED, each once, the data as GET shows it", async () => {
    const issuer = await readyIssuer([33]);
    await scenario(issuer, { mode: "reject", count: 1 });
    const { final, payloads } = await issueAndCollect(issuer, "invoice.rejected");
    expect(final.status).toBe("REJECTED");
    expect(payloads.map((p) => p.type).sort()).toEqual(["invoice.rejected", "invoice.sent"]);
    const rejected = payloads.find((p) => p.type === "invoice.rejected");
    const { history: _h, livemode: _m, ...current } = final;
    expect(rejected.data).toEqual(current);
    expect(rejected.data).toMatchObject({ status: "REJECTED", fiscal_status: "RCH" });
    expect(payloads.find((p) => p.type === "invoice.sent").data.status).toBe("SENT");
  });

  it("invoice.accepted_with_objections: SENT then ACCEPTED_WITH_OBJECTIONS (reparos)", async () => {
    const issuer = await readyIssuer([33]);
    await scenario(issuer, { mode: "object", count: 1 });
    const { final, payloads } = await issueAndCollect(issuer, "invoice.accepted_with_objections");
    expect(final.status).toBe("ACCEPTED_WITH_OBJECTIONS");
    expect(payloads.map((p) => p.type).sort()).toEqual(["invoice.accepted_with_objections", "invoice.sent"]);
    const { history: _h, livemode: _m, buyer_response: buyer, buyer_delivery: _d, updated_at: updatedNow, ...current } = final;
    const { buyer_response: buyerThen, buyer_delivery: deliveryThen, updated_at: updatedThen, ...data } = payloads.find((p) => p.type === "invoice.accepted_with_objections").data;
    expect(data).toEqual(current);
    // The delivery to the buyer starts with the verdict and may have moved on since the event.
    expect(deliveryThen.state).toBe("PENDING");
    expect(Date.parse(updatedThen)).toBeLessThanOrEqual(Date.parse(updatedNow));
    expect(current.fiscal_status).toBe("RLV");
    // The buyer's answer is awaited from the verdict on (its next read may have moved since).
    expect([buyerThen.state, buyer.state]).toEqual(["PENDING", "PENDING"]);
  });

  it("invoice.buyer_response: the issuer's endpoint hears that the buyer claimed its factura at the SII", async () => {
    const r = await receiver();
    const issuer = await readyIssuer([33]);
    const { url, path } = receiverUrl("buyer");
    const hook = await register(issuer.owner, issuer.companyId, { url, events: ["invoice.buyer_response"] });
    const doc = await issuedAccepted(issuer);
    const copy = await receivedCopy(r, issuer, doc.folio);
    expect((await respond(r, copy, "RFT", "No llegó nada")).status).toBe(200);
    await checkNow(issuer, doc.id);
    const final = await afterChecks(issuer, doc.id, (d) => d.buyer_response?.state === "CLAIMED", "claim");
    const got = await until(path, (x) => x.length > 0);
    const [payload] = got.map((x) => verified(hook.secret, x));
    const { history: _h, livemode: _m, ...current } = final;
    expect(payload).toMatchObject({ type: "invoice.buyer_response", company_id: issuer.companyId });
    expect(payload.data).toEqual({ ...current, buyer_response: { ...current.buyer_response, seconds_left: payload.data.buyer_response.seconds_left } });
    expect(payload.data.buyer_response.events).toEqual([expect.objectContaining({ code: "RFT", description: "Reclamo por Falta Total de Mercaderías" })]);
  });

  it("invoice.failed: a document the engine cannot build ends FAILED and its endpoint is told, never SENT", async () => {
    const issuer = await readyIssuer([33]);
    const { url, path } = receiverUrl("failed");
    const hook = await register(issuer.owner, issuer.companyId, { url, events: ["*"] });
    // a valid document, accepted; then a copy whose stored body the engine refuses (a character
    // ISO-8859-1 cannot carry; the POST validation would have refused it), sent through the real queue
    const ok = await issue(issuer, invoiceBody(issuer.rut, "33"));
    await untilFinal(issuer, ok.body.id);
    const store = storeForId(env, issuer.companyId, ok.body.id)!;
    const badId = partitionedId("inv", store.ordinal); // in the same partition as the document it copies
    await store.db.run(
      sql`INSERT INTO invoices (id, company_id, document_type, status, issue_date, recipient_rut, recipient_name, currency, total, body)
          SELECT ${badId}, company_id, document_type, 'RECEIVED', issue_date, recipient_rut, recipient_name, currency, total, replace(body, 'Bebida', 'Bebida €') FROM invoices WHERE id = ${ok.body.id}`,
    );
    expect(await storeRows(issuer.companyId, sql`SELECT id FROM invoices WHERE id = ${badId}`)).toEqual([{ id: badId }]);
    await env.ISSUANCE_QUEUE.send(issuanceMessage(badId, issuer.companyId));
    const final = await untilFinal(issuer, badId);
    expect(final.status).toBe("FAILED");
    const got = await until(path, (r) => r.some((x) => verified(hook.secret, x).data?.id === badId));
    const mine = got.map((r) => verified(hook.secret, r)).filter((p) => p.data?.id === badId);
    expect(mine.map((p) => p.type)).toEqual(["invoice.failed"]);
    const { history: _h, livemode: _m, ...current } = final;
    expect(mine[0].data).toEqual(current);
    expect(mine[0].data.fiscal_message).toMatch(/could not be generated.*ISO-8859-1/);
  });

  it("inbound_message.no_documents: an e-mail without a DTE reaches the company's endpoint with the message as the log shows it", async () => {
    const owner = await newOwner("Inbound events");
    const companyId = await newCompany(owner);
    const to = (await call("GET", `/api/companies/${companyId}/settings`, { key: owner.key })).body.reception_email;
    const { url, path } = receiverUrl("inbound");
    const hook = await register(owner, companyId, { url, events: ["inbound_message.no_documents"] });
    const raw = new TextEncoder().encode(`From: p@proveedor.cl\r\nTo: ${to}\r\nSubject: Factura 77\r\nMIME-Version: 1.0\r\nContent-Type: text/plain\r\n\r\nVa adjunta (no va).\r\n`);
    await worker.email!(emailMessage(raw, to, "p@proveedor.cl"), env);
    const got = await until(path, (r) => r.length > 0);
    const [payload] = got.map((r) => verified(hook.secret, r));
    const [logged] = (await call("GET", `/api/reception/messages?company_id=${companyId}`, { key: owner.key })).body.data;
    const { livemode: _m, ...shown } = logged;
    expect(payload).toMatchObject({ type: "inbound_message.no_documents", company_id: companyId, data: shown });
    expect(payload.data).toMatchObject({ outcome: "NO_DTE", subject: "Factura 77", detail: "The message carries no XML or zip attachment.", documents: 0 });
    expect(await storeRows(companyId, sql`SELECT count(*) AS n FROM event_outbox WHERE type = 'inbound_message.no_documents'`)).toEqual([{ n: 1 }]);
  });

  it("ENU: the folio allocator's alert reaches the company's endpoint", async () => {
    const issuer = await readyIssuer([33], 1);
    const { url, path } = receiverUrl("enu");
    const hook = await register(issuer.owner, issuer.companyId, { url, events: ["ENU"] });
    const posted = await issue(issuer, invoiceBody(issuer.rut, "33"));
    expect(posted.status).toBe(202);
    await untilFinal(issuer, posted.body.id);
    const got = await until(path, (r) => r.some((x) => verified(hook.secret, x).data.reason === "EXHAUSTED"));
    const exhausted = got.map((r) => verified(hook.secret, r)).find((p) => p.data.reason === "EXHAUSTED");
    expect(exhausted).toMatchObject({ type: "ENU", company_id: issuer.companyId, api_version: "1.0.0", data: { reason: "EXHAUSTED", document_type: "33", available: 0 } });
    expect(exhausted.data).not.toHaveProperty("event");
    expect(exhausted.data).not.toHaveProperty("company_id");
  });

  it("certificate.expiring: the cron's 30-day notice reaches the company's endpoint, once", async () => {
    const owner = await newOwner("Webhook certificate");
    const companyId = await newCompany(owner);
    const cert = await makeFakeCertificate({ notBefore: new Date(Date.now() - DAY), notAfter: new Date(Date.now() + 20 * DAY) });
    const form = new FormData();
    form.append("certificate", new File([makeFakePfx(cert, "pw", "modern") as Uint8Array<ArrayBuffer>], "firma.pfx"));
    form.append("password", "pw");
    const up = await call("POST", `/api/companies/${companyId}/certificates`, { key: owner.key, body: form });
    expect(up.status, JSON.stringify(up.body)).toBe(201);
    const { url, path } = receiverUrl("cert");
    const hook = await register(owner, companyId, { url, events: ["certificate.expiring"] });
    for (let i = 0; i < 2; i++) {
      const ctx = createExecutionContext();
      await worker.scheduled!(createScheduledController({ scheduledTime: new Date(), cron: "*/5 * * * *" }), env, ctx);
      await waitOnExecutionContext(ctx);
    }
    const [got] = await until(path, (r) => r.length >= 1);
    expect(verified(hook.secret, got!)).toMatchObject({ type: "certificate.expiring", company_id: companyId, data: { certificate_id: up.body.id, threshold_days: 30 } });
    expect(verified(hook.secret, got!).data.days_left).toBeGreaterThanOrEqual(19);
    expect(verified(hook.secret, got!).data.days_left).toBeLessThanOrEqual(20);
    await new Promise((r) => setTimeout(r, 1000));
    expect(await received(path)).toHaveLength(1);
  });
});
