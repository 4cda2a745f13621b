import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { sql } from "drizzle-orm";
import { storeRows } from "../helpers/store";
import { EVENT_CATALOG, EVENT_TYPES } from "../../src/webhooks/catalog";
import { describeSchedule, RETRY_SCHEDULE_SECONDS } from "../../src/webhooks/schedule";
import { call, newCompany, newOwner } from "../helpers/api";
import { received, receiverUrl, register, until, verified } from "./helpers";

describe("the event catalogue", () => {
  it("every example matches its own data schema (the one the OpenAPI document publishes)", () => {
    for (const type of EVENT_TYPES) {
      const def = EVENT_CATALOG[type];
      const parsed = def.data.safeParse(def.example);
      expect(parsed.success, `${type}: ${JSON.stringify(parsed.error?.issues)}`).toBe(true);
    }
  });

  it("the OpenAPI document states the retry schedule, written from the schedule table", async () => {
    expect(describeSchedule()).toContain("5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h, 24 h");
    expect(describeSchedule()).toContain(`${RETRY_SCHEDULE_SECONDS.length + 1} attempts over about 4.1 days`);
    const doc = (await call("GET", "/openapi.json")).body;
    for (const type of EVENT_TYPES) expect(doc.webhooks[type].post.description).toContain(describeSchedule());
  });

  it("an event that breaks its schema, or of a type not in the catalogue, is never sent; the log says why", async () => {
    const owner = await newOwner("Webhook catalogue");
    const companyId = await newCompany(owner);
    const r = receiverUrl("invalid");
    const hook = await register(owner, companyId, { url: r.url, events: ["*"] });
    const stamp = Date.now();
    const insert = (id: string, type: string, payload: unknown) =>
      env.DB.prepare("INSERT INTO event_outbox (id, company_id, type, dedupe_key, payload, created_at) VALUES (?, ?, ?, ?, ?, ?)")
        .bind(id, companyId, type, `${id}`, JSON.stringify(payload), new Date().toISOString())
        .run();
    await insert(`evt_BADENU${stamp}`, "ENU", { reason: "LOW_AVAILABILITY", document_type: "33", threshold: 10, detected_at: new Date().toISOString() });
    await insert(`evt_UNKNOWN${stamp}`, "nobody.knows", { x: 1 });
    await env.WEBHOOK_QUEUE.send({ v: 1, type: "fanout", company_id: companyId });
    let log: any[] = [];
    for (let i = 0; i < 150 && !(log.length === 2 && log.every((d) => d.status === "FAILED")); i++) {
      await new Promise((res) => setTimeout(res, 200));
      log = (await call("GET", `/api/companies/${companyId}/webhooks/${hook.id}/deliveries`, { key: owner.key })).body.data;
    }
    const byType = Object.fromEntries(log.map((d) => [d.event_type, d]));
    expect(byType.ENU).toMatchObject({ status: "FAILED", attempts: 1, last_response_status: null, next_attempt_at: null });
    expect(byType.ENU.last_error).toBe("not sent: the event data does not match the ENU schema: available: Required: expected number.");
    expect(byType["nobody.knows"]).toMatchObject({ status: "FAILED", last_error: "not sent: the event type nobody.knows is not in the catalogue" });
    const detail = (await call("GET", `/api/companies/${companyId}/webhook-deliveries/${byType.ENU.id}`, { key: owner.key })).body;
    expect(detail.attempts_log).toEqual([expect.objectContaining({ attempt: 1, response_status: null, error: expect.stringContaining("does not match the ENU schema") })]);
    expect(await received(r.path)).toEqual([]);
  });
});

describe("fan-out of a backlog", () => {
  it("more events than one fan-out takes (under D1's 100 bound parameters) are all delivered; every request received is an attempt in the log", async () => {
    const owner = await newOwner("Webhook backlog");
    const companyId = await newCompany(owner);
    const r = receiverUrl("backlog");
    const hook = await register(owner, companyId, { url: r.url, events: ["ENU"] });
    const at = new Date().toISOString();
    const stamp = Date.now();
    const rows = Array.from({ length: 205 }, (_, i) =>
      env.DB.prepare("INSERT INTO event_outbox (id, company_id, type, dedupe_key, payload, created_at) VALUES (?, ?, 'ENU', ?, ?, ?)").bind(
        `evt_BACKLOG${stamp}${String(i).padStart(4, "0")}`, companyId, `backlog:${stamp}:${i}`,
        JSON.stringify({ reason: "LOW_AVAILABILITY", document_type: "33", available: i, threshold: 300, detected_at: at }), at,
      ),
    );
    await env.DB.batch(rows);
    await env.WEBHOOK_QUEUE.send({ v: 1, type: "fanout", company_id: companyId });
    await until(r.path, (x) => new Set(x.map((y) => y.headers["webhook-id"])).size >= 205, 90_000);
    // at least once: under this load an answer may come after the tests' 1.5 s timeout, and that
    // attempt is tried again; every request the receiver got is an attempt in the log, and every
    // delivery ends SUCCEEDED
    const settled = async () =>
      storeRows<{ event_id: string; status: string; attempts: number }>(companyId, sql`SELECT event_id, status, attempts FROM webhook_deliveries WHERE company_id = ${companyId} AND endpoint_id = ${hook.id}`);
    let log = await settled();
    for (let i = 0; i < 150 && log.some((d) => d.status !== "SUCCEEDED"); i++) {
      await new Promise((res) => setTimeout(res, 200));
      log = await settled();
    }
    expect(log).toHaveLength(205);
    expect(log.every((d) => d.status === "SUCCEEDED")).toBe(true);
    const got = await received(r.path);
    const perEvent = new Map<string, number>();
    for (const x of got) perEvent.set(verified(hook.secret, x).id, (perEvent.get(verified(hook.secret, x).id) ?? 0) + 1);
    expect(perEvent.size).toBe(205);
    for (const d of log) expect(perEvent.get(d.event_id), d.event_id).toBe(d.attempts);
    const left = await env.DB.prepare("SELECT count(*) AS n FROM event_outbox WHERE company_id = ? AND dispatched_at IS NULL").bind(companyId).first<{ n: number }>();
    expect(left!.n).toBe(0);
  });
});
