/**
 * A read never creates a store: an id naming a partition the directory does not know for
 * the company (`rcv_p999999_…`, `dlv_p999999_…`) answers 404 in our envelope, like a missing row, and
 * no Durable Object is made for it. The same reads of a partition that exists reach its store.
 * A queue message naming such a partition (a document or an envelope id `…_p999999_…`) is dropped
 * with an error log (acked: nothing can be there, so retrying it would only make the store), and the
 * lookups the pipeline and reception use refuse it (`UnknownPartitionError`, or nothing found).
 */
import { createExecutionContext, createMessageBatch, getQueueResult, listDurableObjectIds } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { knownStoreForId, openStore, partitionFor, partitionKnown, storeName, UnknownPartitionError } from "../../src/storage/db/document-store";
import { receivedDocuments } from "../../src/storage/db/schema";
import { randomUlid } from "../../src/lib/ids";
import { siiAuthority } from "../../src/countries/cl";
import { handleIssuanceBatch } from "../../src/invoices/pipeline/consumer";
import { handleWebhookBatch } from "../../src/webhooks/consumer";
import { envelopePollBody, invoiceBody } from "../../src/invoices/pipeline/messages";
import { receivedByIds } from "../../src/reception/stores";
import { call, expectError, newCompany, newOwner } from "../helpers/api";

const storeExists = async (companyId: string, ordinal: number) => {
  const id = env.DOCUMENT_STORE.idFromName(storeName(companyId, ordinal)).toString();
  return (await listDurableObjectIds(env.DOCUMENT_STORE)).some((d) => d.toString() === id);
};

async function companyWithOpenStore() {
  const owner = await newOwner("Unknown partitions");
  const companyId = await newCompany(owner);
  const open = await openStore(env, companyId);
  await open.db.select({ id: receivedDocuments.id }).from(receivedDocuments).limit(1);
  return { owner, companyId, open: open.ordinal };
}

describe("an id naming a partition the company does not have", () => {
  it("answers 404 for received documents and makes no store", async () => {
    const { owner, companyId, open } = await companyWithOpenStore();
    const id = `rcv_p999999_${randomUlid()}`;
    expectError(await call("GET", `/api/reception/invoices/${id}?company_id=${companyId}`, { key: owner.key }), 404, "RECEIVED_DOCUMENT_NOT_FOUND");
    expectError(await call("POST", `/api/reception/invoices/${id}/download/xml?company_id=${companyId}`, { key: owner.key }), 404, "RECEIVED_DOCUMENT_NOT_FOUND");
    expectError(await call("POST", `/api/reception/invoices/${id}/send_response?company_id=${companyId}`, { key: owner.key, json: { action: "ACD" } }), 404, "RECEIVED_DOCUMENT_NOT_FOUND");
    // The next partition the company will open is not there yet either.
    expectError(await call("GET", `/api/reception/invoices/rcv_p${open + 1}_${randomUlid()}?company_id=${companyId}`, { key: owner.key }), 404, "RECEIVED_DOCUMENT_NOT_FOUND");
    expect(await storeExists(companyId, 999999)).toBe(false);
    expect(await storeExists(companyId, open + 1)).toBe(false);
    expect(await partitionKnown(env, companyId, 999999)).toBe(false);
    // The method sees stores that exist: the open one, used once above.
    expect(await storeExists(companyId, open)).toBe(true);
  });

  it("answers 404 for webhook deliveries and makes no store", async () => {
    const { owner, companyId, open } = await companyWithOpenStore();
    for (const ordinal of [999999, open + 1]) {
      const res = await call("GET", `/api/companies/${companyId}/webhook-deliveries/dlv_p${ordinal}_${randomUlid()}`, { key: owner.key });
      expectError(res, 404, "WEBHOOK_DELIVERY_NOT_FOUND");
      expect(await storeExists(companyId, ordinal)).toBe(false);
    }
    // A delivery id of the open partition is read there: a missing row, same answer.
    expectError(await call("GET", `/api/companies/${companyId}/webhook-deliveries/dlv_p${open}_${randomUlid()}`, { key: owner.key }), 404, "WEBHOOK_DELIVERY_NOT_FOUND");
    expect(await partitionKnown(env, companyId, open)).toBe(true);
  });
});

describe("the pipeline and reception given a partition the company does not have", () => {
  it("partitionFor refuses it and knownStoreForId finds nothing; the open partition is served", async () => {
    const { companyId, open } = await companyWithOpenStore();
    await expect(partitionFor(env, companyId, 999999)).rejects.toBeInstanceOf(UnknownPartitionError);
    await expect(partitionFor(env, companyId, open + 1)).rejects.toBeInstanceOf(UnknownPartitionError);
    expect(await knownStoreForId(env, companyId, `inv_p999999_${randomUlid()}`)).toBeNull();
    expect((await partitionFor(env, companyId, open)).ordinal).toBe(open);
    // Another company's partition of the same ordinal does not count for this one.
    const other = await newCompany(await newOwner("Unknown partitions, other"));
    await expect(partitionFor(env, other, open)).rejects.toBeInstanceOf(UnknownPartitionError);
    expect(await storeExists(companyId, 999999)).toBe(false);
    expect(await storeExists(other, open)).toBe(false);
  });

  it("a document's and an envelope's message naming it are acked, not retried, and make no store", async () => {
    const { companyId, open } = await companyWithOpenStore();
    const messages: { id: string; timestamp: Date; attempts: number; body: unknown }[] = [
      { id: "m-doc", timestamp: new Date(), attempts: 1, body: invoiceBody(`inv_p999999_${randomUlid()}`, companyId) },
      { id: "m-env", timestamp: new Date(), attempts: 1, body: envelopePollBody(`env_p${open + 1}_${randomUlid()}`, companyId) },
    ];
    const batch = createMessageBatch<unknown>("dte-issuance", messages);
    await handleIssuanceBatch(batch, env, siiAuthority(env));
    const result = await getQueueResult(batch, createExecutionContext());
    expect(result.explicitAcks.sort()).toEqual(["m-doc", "m-env"]);
    expect(result.retryMessages).toEqual([]);
    expect(await storeExists(companyId, 999999)).toBe(false);
    expect(await storeExists(companyId, open + 1)).toBe(false);
  });

  it("received documents looked up by ids of such a partition are simply not found; those of the open one are", async () => {
    const { companyId, open } = await companyWithOpenStore();
    const found = await receivedByIds(env, companyId, [`rcv_p999999_${randomUlid()}`, `rcv_p${open}_${randomUlid()}`]);
    expect(found.size).toBe(0);
    expect(await storeExists(companyId, 999999)).toBe(false);
  });
});

describe("a webhook delivery message naming a partition the company does not have", () => {
  it("is acked (no delivery can be there), not retried, and makes no store", async () => {
    const { companyId, open } = await companyWithOpenStore();
    const messages: { id: string; timestamp: Date; attempts: number; body: unknown }[] = [
      { id: "w-named", timestamp: new Date(), attempts: 1, body: { v: 1, type: "deliver", delivery_id: `dlv_p${open}_${randomUlid()}`, company_id: companyId, partition: 999999 } },
      { id: "w-by-id", timestamp: new Date(), attempts: 1, body: { v: 1, type: "deliver", delivery_id: `dlv_p${open + 1}_${randomUlid()}`, company_id: companyId } },
    ];
    const batch = createMessageBatch<unknown>("dte-webhooks", messages);
    await handleWebhookBatch(batch, env);
    const result = await getQueueResult(batch, createExecutionContext());
    expect(result.explicitAcks.sort()).toEqual(["w-by-id", "w-named"]);
    expect(result.retryMessages).toEqual([]);
    expect(await storeExists(companyId, 999999)).toBe(false);
    expect(await storeExists(companyId, open + 1)).toBe(false);
  });
});
