import { createExecutionContext, createMessageBatch, createScheduledController, getQueueResult, waitOnExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import worker from "../../src/index";
import { createDb } from "../../src/storage/db/client";
import { findCompanyForClient } from "../../src/accounts/companies/repository";
import { issueInvoice } from "../../src/invoices/issue";
import { call, expectError, newKey, newOwner, type Actor } from "../helpers/api";
import { invoiceBody, readyIssuer, untilFinal, type Issuer } from "../helpers/issuer";

/** Every JSON line the Worker logs during this file (the queue consumer runs in this isolate too). */
const lines: Record<string, unknown>[] = [];
const spies = (["log", "warn", "error"] as const).map((m) =>
  vi.spyOn(console, m).mockImplementation((...args: unknown[]) => {
    try {
      lines.push(JSON.parse(String(args[0])));
    } catch {
      lines.push({ unstructured: args.map(String).join(" ") });
    }
  }),
);
afterAll(() => spies.forEach((s) => s.mockRestore()));

let issuer: Issuer;
let member: Actor;

beforeAll(async () => {
  issuer = await readyIssuer([33]);
  member = await newKey(issuer.owner.clientId, "MEMBER");
  expect((await call("PUT", `/api/api-keys/${member.apiKeyId}/companies/${issuer.companyId}`, { key: issuer.owner.key })).status).toBe(200);
});

/** A document stored without its queue message, so its message can be dead-lettered by hand. */
async function silentDocument(): Promise<string> {
  const company = (await findCompanyForClient(createDb(env.DB), issuer.companyId))!;
  const silentEnv = { ...env, ISSUANCE_QUEUE: { send: async () => undefined, sendBatch: async () => undefined } as unknown as Queue };
  return (await issueInvoice(createDb(env.DB), silentEnv, company, invoiceBody(issuer.rut, "33"), "req_operations_test")).id;
}

async function deadLetter(queue: string, messages: { id: string; body: unknown }[]) {
  const batch = createMessageBatch(queue, messages.map((m) => ({ ...m, timestamp: new Date(), attempts: 100 })));
  const ctx = createExecutionContext();
  await worker.queue!(batch, env, ctx);
  await waitOnExecutionContext(ctx);
  return getQueueResult(batch, ctx);
}

describe("/health", () => {
  it("reports each binding and the SII mode without a key", async () => {
    const res = await call("GET", "/health");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: "ok",
      environment: "test",
      sii_mode: "simulator",
      checks: { d1: { status: "ok" }, r2: { status: "ok" }, issuance_queue: { status: "ok" }, webhook_queue: { status: "ok" }, email_events_queue: { status: "ok" }, folio_allocator: { status: "ok" }, document_store: { status: "ok" }, control_directory: { status: "ok" } },
    });
  });

  it("a binding that fails makes it 503 and names the binding", async () => {
    const broken = { ...env, DB: { prepare: () => ({ first: async () => Promise.reject(new Error("D1 is down")) }) } as unknown as D1Database, WEBHOOK_QUEUE: undefined, EMAIL_EVENTS_QUEUE: undefined };
    const ctx = createExecutionContext();
    const res = await worker.fetch!(new Request("http://localhost/health") as never, broken as unknown as Env, ctx);
    const body = (await res.json()) as any;
    expect(res.status).toBe(503);
    expect(body.status).toBe("degraded");
    expect(body.checks.d1).toEqual({ status: "error", error: "D1 is down" });
    expect(body.checks.webhook_queue).toEqual({ status: "error", error: "binding missing" });
    expect(body.checks.email_events_queue).toEqual({ status: "error", error: "binding missing" });
    expect(body.checks.r2).toEqual({ status: "ok" });
    expect(body.checks.document_store).toEqual({ status: "ok" });
  });

  /** Health with one Durable Object binding whose objects do not answer `describe`. */
  async function healthWithout(binding: "DOCUMENT_STORE" | "CONTROL_DIRECTORY", error: string) {
    const unreachable = { idFromName: (n: string) => env[binding].idFromName(n), get: () => ({ describe: async () => Promise.reject(new Error(error)) }) };
    const res = await worker.fetch!(new Request("http://localhost/health") as never, { ...env, [binding]: unreachable } as unknown as Env, createExecutionContext());
    return { status: res.status, body: (await res.json()) as any };
  }

  it("a document store that does not answer makes it 503 and names it", async () => {
    const { status, body } = await healthWithout("DOCUMENT_STORE", "store unreachable");
    expect(status).toBe(503);
    expect(body).toMatchObject({ status: "degraded", checks: { document_store: { status: "error", error: "store unreachable" }, d1: { status: "ok" }, folio_allocator: { status: "ok" } } });
  });

  it("a control directory that does not answer makes it 503 and names it", async () => {
    const { status, body } = await healthWithout("CONTROL_DIRECTORY", "directory unreachable");
    expect(status).toBe(503);
    expect(body).toMatchObject({ status: "degraded", checks: { control_directory: { status: "error", error: "directory unreachable" }, document_store: { status: "ok" } } });
  });
});

describe("dead letters", () => {
  it("dead-lettered messages are listed once per message, per queue, to OWNER and ADMIN keys only", async () => {
    const invoiceId = await silentDocument();
    const body = { v: 1, type: "invoice", invoice_id: invoiceId, company_id: issuer.companyId, request_id: "req_operations_test" };
    const first = await deadLetter("dte-issuance-dlq", [{ id: `m-${invoiceId}`, body }]);
    expect(first.explicitAcks).toHaveLength(1);
    await deadLetter("dte-issuance-dlq", [{ id: `m-${invoiceId}`, body }]); // the same message delivered twice
    await deadLetter("dte-webhooks-dlq", [{ id: `w-${invoiceId}`, body: { v: 1, type: "fanout", company_id: issuer.companyId } }]);

    const all = await call("GET", `${issuer.base}/dead-letters?status=DEAD`, { key: issuer.owner.key });
    expect(all.status).toBe(200);
    const mine = all.body.data.filter((d: any) => d.message_id.endsWith(invoiceId));
    expect(mine.map((d: any) => d.queue).sort()).toEqual(["issuance", "webhooks"]);
    const issuance = await call("GET", `${issuer.base}/dead-letters?queue=issuance`, { key: issuer.owner.key });
    expect(issuance.body.data.filter((d: any) => d.message_id === `m-${invoiceId}`)).toEqual([
      expect.objectContaining({ queue: "issuance", body, attempts: 100, status: "DEAD", redriven_at: null }),
    ]);
    expectError(await call("GET", `${issuer.base}/dead-letters`, { key: member.key }), 403, "AUTH_ROLE_FORBIDDEN");
    const stranger = await newOwner("Dead letters stranger");
    expectError(await call("GET", `${issuer.base}/dead-letters`, { key: stranger.key }), 403, "AUTH_COMPANY_ACCESS_DENIED");
  });

  it("a queue that refuses the message, or a deployment without its producer binding, is a 503 that leaves the letter DEAD", async () => {
    const invoiceId = await silentDocument();
    const body = { v: 1, type: "invoice", invoice_id: invoiceId, company_id: issuer.companyId, request_id: "req_operations_test" };
    await deadLetter("dte-issuance-dlq", [{ id: `q-${invoiceId}`, body }]);
    const letter = (await call("GET", `${issuer.base}/dead-letters?queue=issuance&status=DEAD&per_page=100`, { key: issuer.owner.key })).body.data.find((d: any) => d.message_id === `q-${invoiceId}`);
    const redriveOn = async (on: Env) => {
      const res = await worker.fetch!(new Request(`http://localhost${issuer.base}/dead-letters/${letter.id}/redrive`, { method: "POST", headers: { "X-Api-Key": issuer.owner.key } }) as never, on, createExecutionContext());
      return { status: res.status, body: (await res.json()) as any };
    };
    const refusing = await redriveOn({ ...env, ISSUANCE_QUEUE: { send: async () => Promise.reject(new Error("queue down")) } as unknown as Queue });
    expect(refusing.status).toBe(503);
    expect(refusing.body.error).toMatchObject({ code: "DEAD_LETTER_QUEUE_UNAVAILABLE", message: expect.stringContaining("refused it; it stays DEAD") });
    const unbound = await redriveOn({ ...env, ISSUANCE_QUEUE: undefined } as unknown as Env);
    expect(unbound.status).toBe(503);
    expect(unbound.body.error).toMatchObject({ code: "DEAD_LETTER_QUEUE_UNAVAILABLE", message: expect.stringContaining("no producer binding for the issuance queue") });
    const still = (await call("GET", `${issuer.base}/dead-letters?queue=issuance&status=DEAD&per_page=100`, { key: issuer.owner.key })).body.data.find((d: any) => d.id === letter.id);
    expect(still).toMatchObject({ status: "DEAD", redriven_at: null });
    // With the queue back, it goes.
    expect((await call("POST", `${issuer.base}/dead-letters/${letter.id}/redrive`, { key: issuer.owner.key })).status).toBe(202);
    expect((await untilFinal(issuer, invoiceId)).status).toBe("ACCEPTED");
  });

  it("re-driving sends the message back to its queue once: the document then reaches its final state", async () => {
    const invoiceId = await silentDocument();
    const body = { v: 1, type: "invoice", invoice_id: invoiceId, company_id: issuer.companyId, request_id: "req_operations_test" };
    await deadLetter("dte-issuance-dlq", [{ id: `r-${invoiceId}`, body }]);
    const letter = (await call("GET", `${issuer.base}/dead-letters?queue=issuance&status=DEAD&per_page=100`, { key: issuer.owner.key })).body.data.find((d: any) => d.message_id === `r-${invoiceId}`);
    const stranger = await newOwner("Dead letters stranger 2");
    expectError(await call("POST", `${issuer.base}/dead-letters/${letter.id}/redrive`, { key: stranger.key }), 403, "AUTH_COMPANY_ACCESS_DENIED");
    const redriven = await call("POST", `${issuer.base}/dead-letters/${letter.id}/redrive`, { key: issuer.owner.key });
    expect(redriven.status).toBe(202);
    expect(redriven.body).toMatchObject({ id: letter.id, status: "REDRIVEN" });
    expectError(await call("POST", `${issuer.base}/dead-letters/${letter.id}/redrive`, { key: issuer.owner.key }), 409, "DEAD_LETTER_ALREADY_REDRIVEN");
    expectError(await call("POST", `${issuer.base}/dead-letters/dlq_missing/redrive`, { key: issuer.owner.key }), 404, "DEAD_LETTER_NOT_FOUND");
    expect((await untilFinal(issuer, invoiceId)).status).toBe("ACCEPTED");
  });
});

describe("structured logs", () => {
  it("request lines carry the request id and the company; queue lines the message's request, company and document ids", async () => {
    const res = await call("GET", `${issuer.base}/invoices?per_page=1`, { key: issuer.owner.key, headers: { "X-Request-Id": "req_log_check_0001" } });
    expect(res.status).toBe(200);
    const access = lines.find((l) => l.msg === "request" && l.request_id === "req_log_check_0001");
    expect(access).toMatchObject({ level: "info", method: "GET", path: `${issuer.base}/invoices`, status: 200, company_id: issuer.companyId, client_id: issuer.owner.clientId });
    const queued = lines.filter((l) => l.msg === "queue message" && l.request_id === "req_operations_test");
    expect(queued.length).toBeGreaterThan(0);
    for (const l of queued) expect(l).toMatchObject({ queue: expect.stringMatching(/^dte-issuance/), company_id: issuer.companyId, invoice_id: expect.stringMatching(/^inv_/), batch_id: expect.any(String) });
    expect(lines.filter((l) => "unstructured" in l)).toEqual([]);
  });

  it("the query string never reaches the logs (an apiKey parameter sent by mistake)", async () => {
    await call("GET", `${issuer.base}/invoices?apiKey=${encodeURIComponent(issuer.owner.key)}`, { key: issuer.owner.key });
    expect(JSON.stringify(lines)).not.toContain(issuer.owner.key);
  });

  it("cron lines carry the cron and its run id", async () => {
    const ctx = createExecutionContext();
    await worker.scheduled!(createScheduledController({ cron: "*/5 * * * *", scheduledTime: Date.now() }), env, ctx);
    await waitOnExecutionContext(ctx);
    const run = lines.filter((l) => l.msg === "cron run finished");
    expect(run.at(-1)).toMatchObject({ cron: "*/5 * * * *", cron_run_id: expect.stringMatching(/^req_/), failed: 0 });
  });
});
