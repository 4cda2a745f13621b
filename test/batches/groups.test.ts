import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { siiAuthority } from "../../src/countries/cl";
import { createDb } from "../../src/storage/db/client";
import { findCompanyForClient } from "../../src/accounts/companies/repository";
import { ENVELOPE_MAX_BYTES, envelopeSized, GROUP_SIZE } from "../../src/invoices/batches/groups";
import { issueBatch } from "../../src/invoices/batches/intake";
import { handleIssuanceBatch } from "../../src/invoices/pipeline/consumer";
import { handleDeadLetters } from "../../src/invoices/pipeline/dead-letters";
import { call } from "../helpers/api";
import { invoiceBody, readyIssuer, untilFinal, type Issuer } from "../helpers/issuer";
import { storeRows } from "../helpers/store";

/**
 * A batch through the issuance queue as groups: the messages the intake sends, a group's documents
 * settling its one message, duplicates, the dead-letter path, and envelopes cut to size.
 */
let issuer: Issuer;

beforeAll(async () => {
  issuer = await readyIssuer([39], 100);
});

/** A batch stored with its queue messages caught, so the test delivers them itself. */
async function quietBatch(n: number) {
  const sent: { body: any }[] = [];
  const silentEnv = { ...env, ISSUANCE_QUEUE: { send: async () => undefined, sendBatch: async (m: { body: any }[]) => void sent.push(...m) } as unknown as Queue };
  const company = (await findCompanyForClient(createDb(env.DB), issuer.companyId))!;
  const rows = Array.from({ length: n }, () => ({ ok: true as const, body: invoiceBody(issuer.rut, "39") }));
  const batch = await issueBatch(silentEnv, company, { source: "JSON", rows }, "req_test");
  return { batch, messages: sent.map((m) => m.body) };
}

describe("group messages", () => {
  it("one message per group of documents, not per document", async () => {
    const { batch, messages } = await quietBatch(45);
    expect(messages.map((m) => m.invoice_ids.length)).toEqual([GROUP_SIZE, GROUP_SIZE, 45 - 2 * GROUP_SIZE]);
    expect(messages.every((m) => m.type === "invoice.group" && m.company_id === issuer.companyId)).toBe(true);
    expect(messages.flatMap((m) => m.invoice_ids)).toEqual(batch.results.map((r) => r.invoice_id));
  });

  it("a group, the same group again and one of its documents alone: every message settled, each document issued once, in one envelope", async () => {
    const { batch, messages } = await quietBatch(5);
    const group = messages[0]!;
    const single = { v: 1, type: "invoice", invoice_id: group.invoice_ids[0], company_id: issuer.companyId };
    const delivery = createMessageBatch("dte-issuance", [group, group, single].map((body) => ({ id: crypto.randomUUID(), timestamp: new Date(), attempts: 1, body })));
    await handleIssuanceBatch(delivery, env, siiAuthority(env));
    const result = await getQueueResult(delivery, createExecutionContext());
    expect(result.explicitAcks).toHaveLength(3);
    expect(result.retryMessages).toHaveLength(0);
    const ids = batch.results.map((r) => r.invoice_id!);
    for (const id of ids) expect((await untilFinal(issuer, id)).status).toBe("ACCEPTED");
    const envelopes = await storeRows<{ envelope_id: string }>(issuer.companyId, sql`SELECT DISTINCT envelope_id FROM invoices WHERE batch_id = ${batch.id}`);
    expect(envelopes).toHaveLength(1);
  });

  it("a dead-lettered group notes the failure on each of its documents and leaves them as they were", async () => {
    const { batch, messages } = await quietBatch(2);
    const dead = createMessageBatch("dte-issuance-dlq", [{ id: crypto.randomUUID(), timestamp: new Date(), attempts: 100, body: messages[0] }]);
    await handleDeadLetters(dead, env);
    expect((await getQueueResult(dead, createExecutionContext())).explicitAcks).toHaveLength(1);
    for (const r of batch.results) {
      const doc = (await call("GET", `${issuer.base}/invoices/${r.invoice_id}`, { key: issuer.owner.key })).body;
      expect(doc).toMatchObject({ status: "RECEIVED", folio: null });
      expect(doc.last_error).toMatch(/Gave up after 100 delivery attempts of its group/);
    }
  });
});

describe("envelopes", () => {
  it("are cut at the kind's document limit and at the upload's size", () => {
    const items = (n: number, bytes: number | null) => Array.from({ length: n }, (_, i) => ({ i, bytes }));
    const cut = (groups: Map<string, { bytes: number | null }[]>) => [...envelopeSized(groups, (k) => k.split("|")[1]!, (x) => x.bytes).values()].map((g) => g.length);
    expect(cut(new Map([["c|EnvioBOLETA", items(1200, 1000)]]))).toEqual([500, 500, 200]);
    const big = Math.floor(ENVELOPE_MAX_BYTES / 10) + 1;
    expect(cut(new Map([["c|EnvioDTE", items(25, big)]]))).toEqual([9, 9, 7]);
    expect(cut(new Map([["c|EnvioDTE", items(120, null)]]))).toEqual([50, 50, 20]);
    expect(cut(new Map([["c|EnvioDTE", items(3, 1000)], ["d|EnvioBOLETA", items(2, 1000)]]))).toEqual([3, 2]);
  });
});
