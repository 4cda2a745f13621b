/**
 * Webhook queue messages per document: the issuance consumer sends no fan-out notice of its own. A
 * document store's events stay in the store, which sends that notice itself (its alarm); a second
 * notice from the consumer would find nothing.
 */
import { createMessageBatch } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { siiAuthority } from "../../src/countries/cl";
import { openStore } from "../../src/storage/db/document-store";
import { randomUlid } from "../../src/lib/ids";
import { handleIssuanceBatch } from "../../src/invoices/pipeline/consumer";
import { envelopePollBody } from "../../src/invoices/pipeline/messages";
import { newCompany, newOwner } from "../helpers/api";

/** The webhook queue binding, recording what is sent to it (the platform's queue, not our code). */
function recordingQueue(sent: unknown[]): Queue {
  return {
    send: async (body: unknown) => void sent.push(body),
    sendBatch: async (messages: Iterable<{ body: unknown }>) => void sent.push(...[...messages].map((m) => m.body)),
  } as unknown as Queue;
}

describe("the issuance consumer's fan-out notice", () => {
  it("is not sent for a company whose batch ran on a document store", async () => {
    const owner = await newOwner("Fan-out notices");
    const inStore = await newCompany(owner);
    const open = (await openStore(env, inStore)).ordinal;
    const sent: unknown[] = [];
    const messages = [{ id: "poll-store", timestamp: new Date(), attempts: 1, body: envelopePollBody(`env_p${open}_${randomUlid()}`, inStore) }];
    await handleIssuanceBatch(createMessageBatch<unknown>("dte-issuance", messages), { ...env, WEBHOOK_QUEUE: recordingQueue(sent) }, siiAuthority(env));
    expect(sent).toEqual([]);
  });
});
