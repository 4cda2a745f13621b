import { createExecutionContext, createMessageBatch, createScheduledController, getQueueResult, waitOnExecutionContext } from "cloudflare:test";
import worker from "../../src/index";
import { env } from "cloudflare:workers";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { createDb } from "../../src/storage/db/client";
import { storeForId } from "../../src/storage/db/document-store";
import { findCompanyForClient } from "../../src/accounts/companies/repository";
import { issueInvoice } from "../../src/invoices/issue";
import { handleIssuanceBatch } from "../../src/invoices/pipeline/consumer";
import { handleDeadLetters } from "../../src/invoices/pipeline/dead-letters";
import { siiAuthority } from "../../src/countries/cl";
import { assignFolio, claimEnvelope, reload, sendEnvelope, signDocument, type StepDeps } from "../../src/invoices/pipeline/steps";
import type { TaxAuthority } from "../../src/countries/port";
import { call } from "../helpers/api";
import { makeFakeCertificate, makeFakePfx } from "../helpers/fake-certificates";
import { invoiceBody, issue, readyIssuer, untilBuyerDeliveriesSettled, untilFinal, type Issuer } from "../helpers/issuer";
import { storeRows } from "../helpers/store";

let issuer: Issuer;
const issuers: Issuer[] = [];
/** Concurrent posts of the last test: more than the issuance queue's batch (50 messages), so several batches compete. */
const CONCURRENT = 60;
beforeAll(async () => {
  issuer = await readyIssuer([33, 39], 400);
  issuers.push(issuer);
});
// Each accepted document starts a buyer delivery in the queue: the file ends once they are done.
afterAll(async () => {
  for (const i of issuers) await untilBuyerDeliveriesSettled(i);
}, 120_000);
afterEach(async () => {
  await call("DELETE", "/simulator/sii/scenario", { key: issuer.owner.key });
});

const scenario = (body: Record<string, unknown>) => call("POST", "/simulator/sii/scenario", { key: issuer.owner.key, json: { rut: issuer.rut, ...body } });

async function events(id: string) {
  return storeRows<{ status: string; fiscal_status: string | null }>(issuer.companyId, sql`SELECT status, fiscal_status FROM invoice_events WHERE invoice_id = ${id} ORDER BY created_at, id`);
}

/** The pipeline's deps for a document: D1 beside the store its id names. */
function depsFor(id: string, authority: TaxAuthority = siiAuthority(env)): StepDeps {
  const store = storeForId(env, issuer.companyId, id)!;
  return { db: createDb(env.DB), store: store.db, ordinal: store.ordinal, env, authority, now: () => new Date() };
}

describe("the tax authority's verdicts", () => {
  it("rejection: REJECTED with the SII's code and reason", async () => {
    expect((await scenario({ mode: "reject", count: 1 })).status).toBeLessThan(300);
    const res = await issue(issuer, invoiceBody(issuer.rut, "33"));
    const done = await untilFinal(issuer, res.body.id);
    expect(done.status).toBe("REJECTED");
    expect(done.fiscal_status).toBe("RCH");
    // The document's own verdict and why, not the envelope's EPR.
    expect(done.fiscal_message).toMatch(/^RCH: .*SIM-RECHAZO/);
    expect(done.folio).toBeGreaterThan(0);
  });

  it("objections: ACCEPTED_WITH_OBJECTIONS (reparos)", async () => {
    await scenario({ mode: "object", count: 1 });
    const done = await untilFinal(issuer, (await issue(issuer, invoiceBody(issuer.rut, "33"))).body.id);
    expect(done.status).toBe("ACCEPTED_WITH_OBJECTIONS");
    expect(done.fiscal_status).toBe("RLV");
  });

  it("a slow authority: the document waits in SENT with the intermediate codes, then is accepted", async () => {
    await scenario({ mode: "delay", count: 1, polls: 4 });
    const id = (await issue(issuer, invoiceBody(issuer.rut, "33"))).body.id;
    const done = await untilFinal(issuer, id);
    expect(done.status).toBe("ACCEPTED");
    const seen = (await events(id)).map((e) => e.fiscal_status).filter(Boolean);
    expect(seen.some((s) => s === "REC" || s === "SOK" || s === "FOK")).toBe(true);
    expect(seen.at(-1)).toMatch(/EPR|DOK/);
  });

  it("an outage: the document waits (never dropped, folio kept) and is accepted once the SII is back", async () => {
    await scenario({ mode: "down", count: 2 });
    const id = (await issue(issuer, invoiceBody(issuer.rut, "33"))).body.id;
    // while the simulated SII is down the document stays SIGNED with the problem recorded
    let row;
    for (let i = 0; i < 100; i++) {
      row = (await call("GET", `${issuer.base}/invoices/${id}`, { key: issuer.owner.key })).body;
      if (row.last_error) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(row.last_error).toMatch(/^Sending failed, will retry: .*SII/);
    expect(row.status).toBe("SIGNED");
    const folio = row.folio;
    const done = await untilFinal(issuer, id, 90_000);
    expect(done.status).toBe("ACCEPTED");
    expect(done.folio).toBe(folio);
    expect(done.attempts).toBeGreaterThan(0);
  });

  it("boletas travel in EnvioBOLETA through the REST service", async () => {
    const done = await untilFinal(issuer, (await issue(issuer, invoiceBody(issuer.rut, "39"))).body.id);
    expect(done.status).toBe("ACCEPTED");
    const kinds = await storeRows<{ kind: string }>(issuer.companyId, sql`SELECT kind FROM envelopes WHERE id = (SELECT envelope_id FROM invoices WHERE id = ${done.id})`);
    expect(kinds).toEqual([{ kind: "EnvioBOLETA" }]);
  });
});

describe("exactly once", () => {
  async function quietIssue(name = "33") {
    // A document stored without its queue message, so the test drives every delivery itself.
    const company = (await findCompanyForClient(createDb(env.DB), issuer.companyId))!;
    const silentEnv = { ...env, ISSUANCE_QUEUE: { send: async () => undefined, sendBatch: async () => undefined } as unknown as Queue };
    return issueInvoice(createDb(env.DB), silentEnv, company, invoiceBody(issuer.rut, name), "req_test");
  }
  const msg = (id: string) => ({ id: crypto.randomUUID(), timestamp: new Date(), attempts: 1, body: { v: 1, type: "invoice", invoice_id: id, company_id: issuer.companyId } });

  async function deliver(messages: ReturnType<typeof msg>[], authority: TaxAuthority = siiAuthority(env)) {
    const batch = createMessageBatch("dte-issuance", messages);
    await handleIssuanceBatch(batch, env, authority);
    return getQueueResult(batch, createExecutionContext());
  }

  it("duplicate deliveries of every step do nothing twice", async () => {
    const row = await quietIssue();
    // the same message delivered three times at once, then again after each step
    await deliver([msg(row.id), msg(row.id), msg(row.id)]);
    await deliver([msg(row.id), msg(row.id)]);
    const done = await untilFinal(issuer, row.id);
    expect(done.status).toBe("ACCEPTED");
    await deliver([msg(row.id)]);
    const ev = await events(row.id);
    // one event per step; SENT appears again only when the SII's code changes (REC, SOK, FOK...)
    for (const s of ["RECEIVED", "GENERATED", "SIGNED", "ACCEPTED"]) expect(ev.filter((x) => x.status === s).length, s).toBe(1);
    expect(ev.filter((x) => x.status === "SENT" && x.fiscal_status === null).length).toBe(1);
    const pairs = ev.map((e) => `${e.status}/${e.fiscal_status}`);
    expect(new Set(pairs).size, pairs.join(", ")).toBe(pairs.length);
    const stub = env.FOLIO_ALLOCATOR.get(env.FOLIO_ALLOCATOR.idFromName(`${issuer.companyId}:33`));
    expect(await stub.getAllocation(row.id)).toMatchObject({ folio: done.folio });
    const envelopesOf = await storeRows<{ envelope_id: string }>(issuer.companyId, sql`SELECT envelope_id FROM invoices WHERE id = ${row.id}`);
    expect(envelopesOf).toHaveLength(1);
    expect(envelopesOf[0]!.envelope_id).toMatch(/^env_p\d+_/);
  });

  it("a crash between steps: the next delivery continues where it stopped", async () => {
    const row = await quietIssue();
    const deps = depsFor(row.id);
    const generated = await assignFolio(deps, row); // ... crash here
    expect(generated.status).toBe("GENERATED");
    await deliver([msg(row.id)]);
    const done = await untilFinal(issuer, row.id);
    expect(done.folio).toBe(generated.folio);
    expect(done.status).toBe("ACCEPTED");
  });

  it("a crash after the upload but before recording it: the re-upload gets the same track id", async () => {
    const row = await quietIssue();
    const real = siiAuthority(env);
    const deps = depsFor(row.id, real);
    const signed = await signDocument(deps, await assignFolio(deps, row));
    const envelopeId = (await claimEnvelope(deps, issuer.companyId, [signed.id]))!;
    let firstTrack = "";
    const crashing: TaxAuthority = {
      ...real,
      upload: async (p) => {
        firstTrack = (await real.upload(p)).trackId;
        throw new Error("worker crashed after the upload");
      },
    };
    await expect(sendEnvelope({ ...deps, authority: crashing }, issuer.companyId, envelopeId)).rejects.toThrow("crashed");
    expect((await reload(deps, row.id)).status).toBe("SIGNED");
    await deliver([msg(row.id)]);
    const done = await untilFinal(issuer, row.id);
    expect(done.status).toBe("ACCEPTED");
    expect(done.track_id).toBe(firstTrack);
  });

  it("a certificate replaced while the SII was unreachable: the envelope is signed again by the new holder", async () => {
    const row = await quietIssue();
    const deps = depsFor(row.id);
    const signed = await signDocument(deps, await assignFolio(deps, row));
    const envelopeId = (await claimEnvelope(deps, issuer.companyId, [signed.id]))!;
    const down: TaxAuthority = { ...deps.authority!, upload: async () => Promise.reject(new Error("SII unreachable")) };
    await expect(sendEnvelope({ ...deps, authority: down }, issuer.companyId, envelopeId)).rejects.toThrow("unreachable");
    const newHolder = await makeFakeCertificate({ rut: "22222222-2", cn: "NEW HOLDER", notBefore: new Date(Date.now() - 86_400_000) });
    const form = new FormData();
    form.append("certificate", new File([makeFakePfx(newHolder, "pw", "modern") as Uint8Array<ArrayBuffer>], "new.pfx"));
    form.append("password", "pw");
    expect((await call("POST", `${issuer.base}/certificates`, { key: issuer.owner.key, body: form })).status).toBe(201);
    await deliver([msg(row.id)]);
    const done = await untilFinal(issuer, row.id);
    expect(done.status, done.fiscal_message).toBe("ACCEPTED");
    const stored = await env.FILES.get(`companies/${issuer.companyId}/envelopes/${envelopeId}.xml`);
    expect(new TextDecoder("latin1").decode(await stored!.arrayBuffer())).toContain("<RutEnvia>22222222-2</RutEnvia>");
  });

  it("a lost queue message: the cron sweep re-drives the document", async () => {
    const row = await quietIssue();
    const stale = new Date(Date.now() - 11 * 60_000).toISOString();
    await storeForId(env, issuer.companyId, row.id)!.db.run(sql`UPDATE invoices SET updated_at = ${stale} WHERE id = ${row.id}`);
    const ctx = createExecutionContext();
    worker.scheduled(createScheduledController({ scheduledTime: Date.now(), cron: "*/5 * * * *" }), env, ctx);
    await waitOnExecutionContext(ctx);
    expect((await untilFinal(issuer, row.id)).status).toBe("ACCEPTED");
  });

  it("the dead-letter consumer records the failure and leaves the document as it was", async () => {
    const row = await quietIssue();
    const batch = createMessageBatch("dte-issuance-dlq", [{ ...msg(row.id), attempts: 100 }]);
    await handleDeadLetters(batch, env);
    expect((await getQueueResult(batch, createExecutionContext())).explicitAcks).toHaveLength(1);
    const after = (await call("GET", `${issuer.base}/invoices/${row.id}`, { key: issuer.owner.key })).body;
    expect(after.status).toBe("RECEIVED");
    expect(after.folio).toBeNull();
    expect(after.last_error).toMatch(/Gave up after 100 delivery attempts/);
  });

  it("60 concurrent posts get 60 distinct consecutive folios and all reach a final state", async () => {
    const fresh = await readyIssuer([33], CONCURRENT);
    issuers.push(fresh);
    const posts = await Promise.all(Array.from({ length: CONCURRENT }, () => issue(fresh, invoiceBody(fresh.rut, "33"))));
    expect(posts.every((p) => p.status === 202)).toBe(true);
    const finals = await Promise.all(posts.map((p) => untilFinal(fresh, p.body.id, 120_000)));
    expect(finals.every((f) => f.status === "ACCEPTED")).toBe(true);
    const folios = finals.map((f) => f.folio).sort((a, b) => a - b);
    expect(folios).toEqual(Array.from({ length: CONCURRENT }, (_, i) => i + 1));
    const list = (await call("GET", `${fresh.base}/enumeration/list`, { key: fresh.owner.key })).body.data[0];
    expect(list.folios_available).toBe(0);
    // exhausted: the next document is refused before anything is stored
    const refused = await issue(fresh, invoiceBody(fresh.rut, "33"));
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe("INVOICE_NO_FOLIOS");
  });
});
