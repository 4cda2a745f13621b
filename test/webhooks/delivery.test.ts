import { forgetEndpoints } from "../../src/webhooks/endpoint-cache";
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { createScheduledController, createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import worker from "../../src/index";
import { call, newCompany, newOwner } from "../helpers/api";
import { invoiceBody, issue, readyIssuer, untilFinal } from "../helpers/issuer";
import { createDb } from "../../src/storage/db/client";
import { deliver } from "../../src/webhooks/delivery";
import { storeRows } from "../helpers/store";
import { sql } from "drizzle-orm";
import { behave, received, receiverUrl, register, types, until, verified } from "./helpers";

async function deliveries(base: string, key: string, endpointId: string) {
  const res = await call("GET", `${base}/webhooks/${endpointId}/deliveries`, { key });
  expect(res.status).toBe(200);
  return res.body.data as any[];
}

describe("webhook delivery", () => {
  it("every status change of a document arrives once, signed (verified with standardwebhooks), the data as GET shows it", async () => {
    const issuer = await readyIssuer([33]);
    const { url, path } = receiverUrl("issue");
    const hook = await register(issuer.owner, issuer.companyId, { url, events: ["*"] });
    const posted = await issue(issuer, invoiceBody(issuer.rut, "33"));
    expect(posted.status).toBe(202);
    const final = await untilFinal(issuer, posted.body.id);
    expect(final.status).toBe("ACCEPTED");
    const got = await until(path, (r) => types(r).includes("invoice.accepted"));
    // The delivery to the buyer (invoice.buyer_delivery) arrives on its own time: test/reception/buyer-delivery.test.ts.
    const statusEvents = (t: string[]) => t.filter((x) => x !== "invoice.buyer_delivery");
    expect(statusEvents(types(got)).sort()).toEqual(["invoice.accepted", "invoice.sent"]);
    for (const r of got) {
      const payload = verified(hook.secret, r);
      expect(r.headers["webhook-id"]).toBe(payload.id);
      expect(r.headers["user-agent"]).toMatch(/^DTE-API-Webhooks\//);
      expect(r.headers["content-type"]).toBe("application/json");
      expect(payload).toMatchObject({ company_id: issuer.companyId, livemode: false, api_version: "1.0.0" });
      expect(payload.data.id).toBe(posted.body.id);
      expect(payload.data).not.toHaveProperty("history");
    }
    const accepted = verified(hook.secret, got.find((r) => types([r])[0] === "invoice.accepted")!);
    const { history: _h, livemode, buyer_response: buyer, buyer_delivery: _delivery, updated_at: updatedNow, ...current } = final;
    expect(livemode).toBe(false);
    const { buyer_response: buyerThen, buyer_delivery: deliveryThen, updated_at: updatedThen, ...data } = accepted.data;
    expect(data).toEqual(current);
    // The buyer delivery's and response's own steps may have touched the document since the event.
    expect(Date.parse(updatedThen)).toBeLessThanOrEqual(Date.parse(updatedNow));
    // The acceptance's batch started the delivery to the buyer (it may have been attempted since).
    expect(deliveryThen.state).toBe("PENDING");
    // The buyer's answer is awaited from the acceptance on (its next read may have moved since).
    expect([buyerThen.state, buyer.state]).toEqual(["PENDING", "PENDING"]);
    // the delivery log: two deliveries, each one attempt with status 200
    const log = await deliveries(issuer.base, issuer.owner.key, hook.id);
    const statusLog = log.filter((d) => d.event_type !== "invoice.buyer_delivery");
    expect(statusLog.map((d) => [d.event_type, d.status, d.attempts]).sort()).toEqual([["invoice.accepted", "SUCCEEDED", 1], ["invoice.sent", "SUCCEEDED", 1]]);
    const detail = await call("GET", `${issuer.base}/webhook-deliveries/${statusLog[0].id}`, { key: issuer.owner.key });
    expect(detail.body.attempts_log).toEqual([expect.objectContaining({ attempt: 1, response_status: 200, response_body: "ok", error: null })]);
  });

  it("only the subscribed events reach an endpoint; several endpoints each get their own", async () => {
    const issuer = await readyIssuer([33]);
    const a = receiverUrl("only-accepted");
    const b = receiverUrl("only-sent");
    await register(issuer.owner, issuer.companyId, { url: a.url, events: ["invoice.accepted"] });
    await register(issuer.owner, issuer.companyId, { url: b.url, events: ["invoice.sent"] });
    const family = receiverUrl("invoice-family");
    const other = receiverUrl("received-family");
    await register(issuer.owner, issuer.companyId, { url: family.url, events: ["invoice.*"] });
    await register(issuer.owner, issuer.companyId, { url: other.url, events: ["received_document.*"] });
    const posted = await issue(issuer, invoiceBody(issuer.rut, "33"));
    await untilFinal(issuer, posted.body.id);
    expect(types(await until(a.path, (r) => r.length >= 1))).toEqual(["invoice.accepted"]);
    expect(types(await until(b.path, (r) => r.length >= 1))).toEqual(["invoice.sent"]);
    const all = types(await until(family.path, (r) => types(r).includes("invoice.accepted") && types(r).includes("invoice.sent")));
    expect(all.every((t) => t.startsWith("invoice."))).toBe(true);
    await new Promise((r) => setTimeout(r, 1000));
    expect((await received(a.path)).length).toBe(1);
    expect((await received(b.path)).length).toBe(1);
    expect(await received(other.path)).toEqual([]);
  });

  it("a failing endpoint is retried with the same webhook-id until it answers; then FAILED when no attempt is left", async () => {
    const owner = await newOwner("Webhook retries");
    const companyId = await newCompany(owner);
    const base = `/api/companies/${companyId}`;
    const ok = receiverUrl("recovering");
    await behave(ok.path, { status: 500, body: "boom" });
    const hook = await register(owner, companyId, { url: ok.url, events: ["webhook.test"] });
    const test = await call("POST", `${base}/webhooks/${hook.id}/test`, { key: owner.key });
    expect(test.status).toBe(202);
    const firsts = await until(ok.path, (r) => r.length >= 2);
    await behave(ok.path, { status: 204, body: "" });
    const all = await until(ok.path, (r) => r.length >= 3);
    expect(new Set(all.map((r) => r.headers["webhook-id"])).size).toBe(1);
    expect(all[1]!.at - all[0]!.at).toBeGreaterThanOrEqual(800); // the schedule's wait (1 s ± 10 %)
    await until(ok.path, () => true);
    let d: any;
    for (let i = 0; i < 50 && d?.status !== "SUCCEEDED"; i++) {
      d = (await call("GET", `${base}/webhook-deliveries/${test.body.id}`, { key: owner.key })).body;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(d.status).toBe("SUCCEEDED");
    expect(d.attempts_log.map((a: any) => a.response_status)).toEqual([500, 500, 204]);
    expect(d.attempts_log[0].response_body).toBe("boom");
    expect(firsts.length).toBe(2);

    const dead = receiverUrl("dead");
    await behave(dead.path, { status: 503 });
    const deadHook = await register(owner, companyId, { url: dead.url, events: ["webhook.test"] });
    const t2 = await call("POST", `${base}/webhooks/${deadHook.id}/test`, { key: owner.key });
    await until(dead.path, (r) => r.length >= 4); // the first attempt and the three of WEBHOOK_RETRY_SCHEDULE=1,1,1
    for (let i = 0; i < 50 && d?.status !== "FAILED"; i++) {
      d = (await call("GET", `${base}/webhook-deliveries/${t2.body.id}`, { key: owner.key })).body;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(d).toMatchObject({ status: "FAILED", attempts: 4, last_response_status: 503 });
    expect(d.last_error).toBe("HTTP 503; no attempt left");
    await new Promise((r) => setTimeout(r, 1500));
    expect((await received(dead.path)).length).toBe(4);

    // redeliver every failed delivery since a time: a fresh round of attempts
    await behave(dead.path, { status: 200 });
    const again = await call("POST", `${base}/webhooks/${deadHook.id}/redeliver`, { key: owner.key, json: { failed_since: "2020-01-01T00:00:00Z" } });
    expect(again.body).toEqual({ redelivered: 1, delivery: null, livemode: false });
    await until(dead.path, (r) => r.length >= 5);
  });

  it("an endpoint that does not answer in time is a failed attempt with the reason", async () => {
    const owner = await newOwner("Webhook timeout");
    const companyId = await newCompany(owner);
    const slow = receiverUrl("slow");
    await behave(slow.path, { status: 200, delay_ms: 4000 });
    const hook = await register(owner, companyId, { url: slow.url, events: ["webhook.test"] });
    const t = await call("POST", `/api/companies/${companyId}/webhooks/${hook.id}/test`, { key: owner.key });
    let d: any;
    for (let i = 0; i < 80 && !(d?.attempts_log?.length >= 1); i++) {
      await new Promise((r) => setTimeout(r, 150));
      d = (await call("GET", `/api/companies/${companyId}/webhook-deliveries/${t.body.id}`, { key: owner.key })).body;
    }
    expect(d.attempts_log[0]).toMatchObject({ attempt: 1, response_status: null, error: "no answer within 1500 ms" });
    expect(d.attempts_log[0].duration_ms).toBeGreaterThanOrEqual(1400);
  });

  it("during a rotation both secrets sign, and each verifies on its own", async () => {
    const owner = await newOwner("Webhook rotation");
    const companyId = await newCompany(owner);
    const r = receiverUrl("rotation");
    const hook = await register(owner, companyId, { url: r.url, events: ["webhook.test"] });
    const rotated = (await call("POST", `/api/companies/${companyId}/webhooks/${hook.id}/rotate-secret`, { key: owner.key })).body;
    await call("POST", `/api/companies/${companyId}/webhooks/${hook.id}/test`, { key: owner.key });
    const [got] = await until(r.path, (x) => x.length >= 1);
    expect(got!.headers["webhook-signature"]!.split(" ")).toHaveLength(2);
    expect(verified(hook.secret, got!).type).toBe("webhook.test");
    expect(verified(rotated.secret, got!).type).toBe("webhook.test");
    expect(() => verified("whsec_" + btoa("x".repeat(32)), got!)).toThrow();
  });

  it("an endpoint failing for 5 days is disabled, and the company's other endpoints are told", async () => {
    const owner = await newOwner("Webhook disable");
    const companyId = await newCompany(owner);
    const base = `/api/companies/${companyId}`;
    const dead = receiverUrl("five-days");
    const other = receiverUrl("other");
    await behave(dead.path, { status: 500 });
    const deadHook = await register(owner, companyId, { url: dead.url, events: ["webhook.test"] });
    const otherHook = await register(owner, companyId, { url: other.url, events: ["webhook_endpoint.disabled"] });
    const t = await call("POST", `${base}/webhooks/${deadHook.id}/test`, { key: owner.key });
    await until(dead.path, (r) => r.length >= 1);
    // the endpoint has been failing since 6 days ago; the next attempt (clock: now) disables it
    await env.DB.prepare("UPDATE webhook_endpoints SET failing_since = ? WHERE id = ?").bind(new Date(Date.now() - 6 * 86_400_000).toISOString(), deadHook.id).run();
    // (written past our code: this isolate's endpoint cache is dropped, as every endpoint write of ours does)
    forgetEndpoints(companyId);
    await storeRows(companyId, sql`UPDATE webhook_deliveries SET next_attempt_at = NULL, status = 'PENDING' WHERE id = ${t.body.id}`);
    expect(await deliver(createDb(env.DB), env, { id: t.body.id, companyId })).toBe("failed");
    const after = (await call("GET", `${base}/webhooks/${deadHook.id}`, { key: owner.key })).body;
    expect(after).toMatchObject({ enabled: false, disabled_reason: "Every delivery failed for 5 days" });
    const told = await until(other.path, (r) => r.length >= 1);
    const payload = verified(otherHook.secret, told[0]!);
    expect(payload).toMatchObject({ type: "webhook_endpoint.disabled", data: { endpoint_id: deadHook.id, url: dead.url } });
  });

  it("events never fanned out (a lost queue message) are re-driven by the cron sweep", async () => {
    const owner = await newOwner("Webhook redrive");
    const companyId = await newCompany(owner);
    const r = receiverUrl("redrive");
    const hook = await register(owner, companyId, { url: r.url, events: ["ENU"] });
    const old = new Date(Date.now() - 10 * 60_000).toISOString();
    await env.DB.prepare("INSERT INTO event_outbox (id, company_id, type, dedupe_key, payload, created_at) VALUES (?, ?, 'ENU', ?, ?, ?)")
      .bind("evt_lostfanout" + Date.now(), companyId, `ENU:33:LOW:${Date.now()}`, JSON.stringify({ event: "ENU", company_id: companyId, document_type: "33", reason: "LOW_AVAILABILITY", available: 3, threshold: 10, detected_at: old }), old)
      .run();
    const ctx = createExecutionContext();
    await worker.scheduled!(createScheduledController({ scheduledTime: new Date(), cron: "*/5 * * * *" }), env, ctx);
    await waitOnExecutionContext(ctx);
    const [got] = await until(r.path, (x) => x.length >= 1);
    expect(verified(hook.secret, got!)).toMatchObject({ type: "ENU", company_id: companyId, data: { reason: "LOW_AVAILABILITY", document_type: "33", available: 3, threshold: 10, detected_at: old } });
    expect(verified(hook.secret, got!).data).not.toHaveProperty("event");
  });

  it("redelivers one event on request, with the same event id", async () => {
    const owner = await newOwner("Webhook redeliver");
    const companyId = await newCompany(owner);
    const r = receiverUrl("redeliver");
    const hook = await register(owner, companyId, { url: r.url, events: ["webhook.test"] });
    const t = await call("POST", `/api/companies/${companyId}/webhooks/${hook.id}/test`, { key: owner.key });
    const [first] = await until(r.path, (x) => x.length >= 1);
    const again = await call("POST", `/api/companies/${companyId}/webhooks/${hook.id}/redeliver`, { key: owner.key, json: { event_id: t.body.event_id } });
    expect(again.status).toBe(202);
    expect(again.body.delivery).toMatchObject({ id: t.body.id, status: "PENDING" });
    const both = await until(r.path, (x) => x.length >= 2);
    expect(both[1]!.headers["webhook-id"]).toBe(first!.headers["webhook-id"]);
    const byEvent = await call("GET", `/api/companies/${companyId}/webhook-deliveries?event_id=${t.body.event_id}`, { key: owner.key });
    expect(byEvent.body.data.map((d: any) => d.id)).toEqual([t.body.id]);
  });

  it("a fan-out larger than one queue send and one statement's parameters (150 events, 300 deliveries) reaches every endpoint", async () => {
    const owner = await newOwner("Webhook large fan-out");
    const companyId = await newCompany(owner);
    const a = receiverUrl("large-a");
    const b = receiverUrl("large-b");
    await register(owner, companyId, { url: a.url, events: ["ENU"] });
    await register(owner, companyId, { url: b.url, events: ["ENU"] });
    const stmt = env.DB.prepare("INSERT INTO event_outbox (id, company_id, type, dedupe_key, payload, created_at) VALUES (?, ?, 'ENU', ?, ?, ?)");
    const at = new Date().toISOString();
    await env.DB.batch(
      Array.from({ length: 150 }, (_, i) => stmt.bind(`evt_large_${companyId}_${i}`, companyId, `ENU:large:${i}`, JSON.stringify({ document_type: "33", reason: "LOW_AVAILABILITY", available: i, threshold: 100, detected_at: at }), at)),
    );
    await env.WEBHOOK_QUEUE.send({ v: 1, type: "fanout", company_id: companyId });
    // at least once: receivers deduplicate on webhook-id, so count distinct events
    const distinct = (r: { headers: Record<string, string> }[]) => new Set(r.map((x) => x.headers["webhook-id"])).size;
    expect(distinct(await until(a.path, (r) => distinct(r) >= 150, 60_000))).toBe(150);
    expect(distinct(await until(b.path, (r) => distinct(r) >= 150, 60_000))).toBe(150);
  });
});
