import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { siiAuthority } from "../../src/countries/cl";
import { allocator } from "../../src/folios/cafs";
import { ALLOCATION_RETENTION_MS } from "../../src/folios/allocator/pruning";
import { handleIssuanceBatch } from "../../src/invoices/pipeline/consumer";
import { invoiceBody as invoiceMessage } from "../../src/invoices/pipeline/messages";
import { call } from "../helpers/api";
import { invoiceBody, issue, readyIssuer, untilFinal, type Issuer } from "../helpers/issuer";

/**
 * The pipeline's retry path against a pruned allocator: a document that never recorded
 * its folio and asks again after the horizon passed it ends FAILED (never a second folio), and a
 * document that recorded its folio is not affected by a redelivery.
 */
function capturingQueue() {
  const sent: { invoice_id?: string }[] = [];
  return {
    sent,
    queue: {
      send: async (b: { invoice_id?: string }) => void sent.push(b),
      sendBatch: async (ms: { body: { invoice_id?: string } }[]) => void sent.push(...ms.map((m) => m.body)),
    },
  };
}

/** POSTs a document with the issuance queue captured, so it stays RECEIVED (as if the consumer had not run yet). */
async function issueHeld(issuer: Issuer): Promise<string> {
  const { queue, sent } = capturingQueue();
  const ctx = createExecutionContext();
  const request = new Request(`http://localhost${issuer.base}/invoices`, {
    method: "POST",
    headers: { "X-Api-Key": issuer.owner.key, "Content-Type": "application/json" },
    body: JSON.stringify(invoiceBody(issuer.rut, "33")),
  });
  const res = await worker.fetch!(request as never, { ...env, ISSUANCE_QUEUE: queue } as unknown as Env, ctx);
  await waitOnExecutionContext(ctx);
  const body = (await res.json()) as { id: string; status: string };
  expect(res.status, JSON.stringify(body)).toBe(202);
  expect(sent.map((m) => m.invoice_id)).toEqual([body.id]);
  return body.id;
}

async function redeliver(issuer: Issuer, ids: string[]): Promise<string[]> {
  const { queue } = capturingQueue();
  const settled: string[] = [];
  const messages = ids.map((id, i) => ({ id: `m${i}`, timestamp: new Date(), attempts: 3, body: invoiceMessage(id, issuer.companyId), ack: () => settled.push(`ack ${id}`), retry: () => settled.push(`retry ${id}`) }));
  const batch = { queue: "dte-issuance", messages, ackAll: () => undefined, retryAll: () => undefined } as unknown as MessageBatch<unknown>;
  await handleIssuanceBatch(batch, { ...env, ISSUANCE_QUEUE: queue } as unknown as Env, siiAuthority(env));
  return settled;
}

const get = (issuer: Issuer, id: string) => call("GET", `${issuer.base}/invoices/${id}`, { key: issuer.owner.key });

describe("pipeline retries after the allocator pruned", () => {
  it("a RECEIVED document past the horizon FAILS without a folio; its lost folio is never reused; a recorded one is untouched", async () => {
    const issuer = await readyIssuer([33], 20);
    const folios = allocator(env, issuer.companyId, 33);
    const done = await untilFinal(issuer, (await issue(issuer, invoiceBody(issuer.rut, "33"))).body.id);
    expect(done.status).toBe("ACCEPTED");

    const crashed = await issueHeld(issuer); // its consumer took a folio, then died before recording it
    const taken = await folios.allocate(crashed);
    expect(taken).toMatchObject({ ok: true, folio: done.folio + 1 });
    const waiting = await issueHeld(issuer); // its consumer never ran

    // A week and a day later, the allocator's alarm has pruned (here the same call with that clock).
    const pruned = await folios.pruneAllocations({ now: Date.now() + ALLOCATION_RETENTION_MS + 86_400_000 });
    expect(pruned.deleted).toBe(2); // the accepted document and the crashed one (the waiting one only holds a reservation)

    expect((await redeliver(issuer, [crashed, waiting, done.id])).sort()).toEqual([`ack ${crashed}`, `ack ${waiting}`, `ack ${done.id}`].sort());
    for (const id of [crashed, waiting]) {
      const doc = (await get(issuer, id)).body;
      expect(doc).toMatchObject({ status: "FAILED", folio: null });
      expect(doc.fiscal_message).toMatch(/more than 7 days ago.*issue it again/);
    }
    const again = (await get(issuer, done.id)).body;
    expect(again).toMatchObject({ status: "ACCEPTED", folio: done.folio });

    // The crashed document's folio was handed out once and stays a gap: the next one is after it; no reservation is left.
    const status = await folios.status();
    expect(status).toMatchObject({ next_folio_to_use: done.folio + 2, reserved: 0, allocated: 2 });
  });
});
