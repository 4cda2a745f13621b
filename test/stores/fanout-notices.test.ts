/**
 * Webhook queue messages per document (issue 16): the issuance consumer sends a fan-out notice only
 * for the companies whose batch ran on D1 (partition 0 before its switch), where its moves write D1's
 * outbox directly. A document store's events reach D1 through the store's outbox relay, which sends
 * that notice itself (test/stores/outbox.test.ts); a second notice from the consumer found nothing.
 */
import { createMessageBatch } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { siiAuthority } from "../../src/countries/cl";
import { openStore } from "../../src/db/document-store";
import { randomUlid } from "../../src/lib/ids";
import { handleIssuanceBatch } from "../../src/pipeline/consumer";
import { envelopePollBody } from "../../src/queues/issuance";
import { newCompany, newOwner } from "../helpers/api";

/** The webhook queue binding, recording what is sent to it (the platform's queue, not our code). */
function recordingQueue(sent: unknown[]): Queue {
  return {
    send: async (body: unknown) => void sent.push(body),
    sendBatch: async (messages: Iterable<{ body: unknown }>) => void sent.push(...[...messages].map((m) => m.body)),
  } as unknown as Queue;
}

describe("the issuance consumer's fan-out notice", () => {
  it("is sent for a company whose batch ran on D1's partition 0, not for one whose batch ran on a document store", async () => {
    const owner = await newOwner("Fan-out notices");
    const inStore = await newCompany(owner);
    const inD1 = await newCompany(owner);
    const open = (await openStore(env, inStore)).ordinal;
    const sent: unknown[] = [];
    const messages = [
      { id: "poll-store", timestamp: new Date(), attempts: 1, body: envelopePollBody(`env_p${open}_${randomUlid()}`, inStore) },
      { id: "poll-d1", timestamp: new Date(), attempts: 1, body: envelopePollBody(`env_${randomUlid()}`, inD1) },
    ];
    await handleIssuanceBatch(createMessageBatch<unknown>("dte-issuance", messages), { ...env, WEBHOOK_QUEUE: recordingQueue(sent) }, siiAuthority(env));
    expect(sent).toEqual([{ v: 1, type: "fanout", company_id: inD1 }]);
  });
});
