import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { indexStore } from "../../src/storage/db/document-store";
import { externalReferences } from "../../src/storage/db/document-store/tables";
import { claimReference, releaseReference } from "../../src/invoices/references";
import { randomUlid } from "../../src/lib/ids";

/** external_reference unique per company across partitions, in the company's index store. */
const company = () => `cmp_${randomUlid()}`;
const inv = () => `inv_p1_${randomUlid()}`;
const stillHeld = async () => true;
const gone = async () => false;

describe("external references in the company's index store", () => {
  it("the first claim wins; another document is refused with the holder; the holder may claim again", async () => {
    const c = company();
    const [a, b] = [inv(), inv()];
    expect(await claimReference(env, c, "ERP-1", a, stillHeld)).toEqual({ ok: true });
    expect(await claimReference(env, c, "ERP-1", b, stillHeld)).toEqual({ ok: false, holder: a });
    expect(await claimReference(env, c, "ERP-1", a, stillHeld)).toEqual({ ok: true });
    // Per company: another company's ERP-1 is its own.
    expect(await claimReference(env, company(), "ERP-1", b, stillHeld)).toEqual({ ok: true });
  });

  it("a released reference (its document FAILED) can be claimed by the next document", async () => {
    const c = company();
    const [a, b] = [inv(), inv()];
    await claimReference(env, c, "ERP-2", a, stillHeld);
    await releaseReference(env, c, "ERP-2", b); // not the holder: nothing happens
    expect(await claimReference(env, c, "ERP-2", b, stillHeld)).toEqual({ ok: false, holder: a });
    await releaseReference(env, c, "ERP-2", a);
    expect(await claimReference(env, c, "ERP-2", b, stillHeld)).toEqual({ ok: true });
  });

  it("a holder that no longer holds it (failed without releasing, or never stored) is taken over", async () => {
    const c = company();
    const [a, b] = [inv(), inv()];
    await claimReference(env, c, "ERP-3", a, stillHeld);
    const asked: string[] = [];
    expect(await claimReference(env, c, "ERP-3", b, async (holder) => (asked.push(holder), false))).toEqual({ ok: true });
    expect(asked).toEqual([a]);
    expect(await indexStore(env, c).select({ invoiceId: externalReferences.invoiceId }).from(externalReferences)).toEqual([{ invoiceId: b }]);
  });

  it("concurrent claims of a free reference: exactly one wins", async () => {
    const c = company();
    const ids = Array.from({ length: 10 }, inv);
    const results = await Promise.all(ids.map((id) => claimReference(env, c, "ERP-4", id, stillHeld)));
    const winners = ids.filter((_, i) => results[i]!.ok);
    expect(winners).toHaveLength(1);
    for (const r of results) if (!r.ok) expect(r.holder).toBe(winners[0]);
  });

  it("concurrent take-overs of a released holder's reference: exactly one wins", async () => {
    const c = company();
    const first = inv();
    await claimReference(env, c, "ERP-5", first, stillHeld);
    const ids = Array.from({ length: 8 }, inv);
    const results = await Promise.all(ids.map((id) => claimReference(env, c, "ERP-5", id, async (holder) => holder !== first)));
    const winners = ids.filter((_, i) => results[i]!.ok);
    expect(winners).toHaveLength(1);
    expect(await indexStore(env, c).select({ invoiceId: externalReferences.invoiceId }).from(externalReferences)).toEqual([{ invoiceId: winners[0] }]);
  });
});
