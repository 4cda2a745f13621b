import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { storeRows } from "../helpers/store";
import { siiAuthority } from "../../src/countries/cl";
import { handleIssuanceBatch } from "../../src/invoices/pipeline/consumer";
import { invoiceBody as invoiceMessage } from "../../src/invoices/pipeline/messages";
import { call } from "../helpers/api";
import { invoiceBody, issue, readyIssuer, type Issuer } from "../helpers/issuer";

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

/**
 * Found by the chaos run: a worker that dies after uploading an envelope but before
 * queueing its first poll gets its invoice messages again; the documents are SENT by then. Before,
 * those messages were acked and the envelope waited for the 10-minute sweep; now its poll is queued.
 */
describe("a redelivered message of a document already SENT", () => {
  it("queues a poll of its envelope and is acked", async () => {
    const issuer = await readyIssuer([33], 10);
    await scenario(issuer, { mode: "delay", count: 1, polls: 30 });
    const id = (await issue(issuer, invoiceBody(issuer.rut, "33"))).body.id as string;
    let row: { status: string; envelope_id: string | null } | null = null;
    for (let i = 0; i < 200 && row?.status !== "SENT"; i++) {
      [row = null] = await storeRows<{ status: string; envelope_id: string | null }>(issuer.companyId, sql`SELECT status, envelope_id FROM invoices WHERE id = ${id}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(row?.status).toBe("SENT");

    const sent: unknown[] = [];
    const queue = { send: async (b: unknown) => void sent.push(b), sendBatch: async (ms: { body: unknown }[]) => void sent.push(...ms.map((m) => m.body)) };
    const settled: string[] = [];
    const message = { id: "m1", timestamp: new Date(), attempts: 2, body: invoiceMessage(id, issuer.companyId), ack: () => settled.push("ack"), retry: () => settled.push("retry") };
    const batch = { queue: "dte-issuance", messages: [message], ackAll: () => undefined, retryAll: () => undefined } as unknown as MessageBatch<unknown>;
    await handleIssuanceBatch(batch, { ...env, ISSUANCE_QUEUE: queue } as unknown as Env, siiAuthority(env));

    expect(settled).toEqual(["ack"]);
    expect(sent).toContainEqual(expect.objectContaining({ type: "envelope.poll", envelope_id: row!.envelope_id }));
  });
});
