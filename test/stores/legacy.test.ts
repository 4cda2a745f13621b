/**
 * The legacy partition's switch from D1 to the stores (issue 16, migration 0015): until the data
 * migration finishes the issued documents group, partition 0 is D1; writes that land in D1 while the
 * migration copies are copied again; once finished, D1 refuses writes to those tables and a writer
 * that chose D1 just before runs again against the store. No write is lost.
 */
import { env } from "cloudflare:workers";
import { eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { storeFor } from "../../src/db/document-store";
import { isLegacyMoved, legacyPartition, partitionsWithLegacy, withPartition, withPartitionOfId } from "../../src/db/document-store/legacy";
import { invoices } from "../../src/db/schema";
import { randomUlid } from "../../src/lib/ids";
import { migrateToStores } from "../../src/operations/store-migration";
import { newCompany, newOwner } from "../helpers/api";

const id = (prefix: string) => `${prefix}_${randomUlid()}`;

async function seed(companyId: string) {
  const ids = [id("inv"), id("inv")];
  for (const inv of ids) {
    await env.DB.prepare(
      `INSERT INTO invoices (id, company_id, document_type, status, issue_date, recipient_rut, recipient_name, currency, total, body) VALUES (?, ?, 33, 'SENT', '2026-10-01', '77879240-0', 'Cliente', 'CLP', '1190', '{}')`,
    ).bind(inv, companyId).run();
    await env.DB.prepare("INSERT INTO invoice_events (id, invoice_id, status) VALUES (?, ?, 'SENT')").bind(id("evt"), inv).run();
  }
  await env.DB.prepare("INSERT INTO cancellations (cancelled_invoice_id, credit_note_id) VALUES (?, ?)").bind(ids[0], ids[1]).run();
  return ids as [string, string];
}

const TABLES = [
  ["invoices", "company_id = ?", "id"],
  ["invoice_events", "invoice_id IN (SELECT id FROM invoices WHERE company_id = ?)", "id"],
  ["cancellations", "cancelled_invoice_id IN (SELECT id FROM invoices WHERE company_id = ?)", "cancelled_invoice_id"],
] as const;

async function rowsOf(companyId: string) {
  const out: Record<string, { d1: unknown[]; store: unknown[] }> = {};
  const store = storeFor(env, companyId, 0).db.$client;
  for (const [t, where, key] of TABLES) {
    const d1 = (await env.DB.prepare(`SELECT * FROM ${t} WHERE ${where} ORDER BY ${key}`).bind(companyId).all()).results;
    const inStore = (await store.prepare(`SELECT * FROM ${t} WHERE ${where.replace("(SELECT id FROM invoices WHERE company_id = ?)", "(SELECT id FROM invoices)")} ORDER BY ${key}`).bind(...(where.includes("SELECT") ? [] : [companyId])).all()).results;
    out[t] = { d1, store: inStore };
  }
  return out;
}

describe("the legacy partition", () => {
  it("is D1 until the group switches; writes racing the migration are all in the store afterwards, later ones refused by D1", async () => {
    const owner = await newOwner();
    const companyId = await newCompany(owner);
    const [a, b] = await seed(companyId);
    expect((await legacyPartition(env, companyId, "documents")).inD1).toBe(true);
    expect((await partitionsWithLegacy(env, companyId, "documents")).map((p) => [p.ordinal, p.inD1])).toEqual([[0, true]]);
    // Read through the handle: partition 0 answers from D1.
    const viaD1 = await withPartitionOfId(env, companyId, a, "documents", (p) => p.db.select({ status: invoices.status }).from(invoices).where(eq(invoices.id, a)));
    expect(viaD1).toEqual([{ status: "SENT" }]);

    // A writer that picks its partition now and writes only after the switch.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const picked: boolean[] = [];
    const late = withPartition(env, companyId, 0, "documents", async (p) => {
      picked.push(p.inD1);
      await gate;
      return p.db.update(invoices).set({ fiscalMessage: "late writer" }).where(eq(invoices.id, b)).returning({ id: invoices.id });
    });

    // A stale writer writing to D1 while the migration copies (a bounded burst: a writer that never
    // pauses would hold the switch back for as long as it writes, by design).
    let written = 0;
    const burst = (async () => {
      for (let i = 0; i < 30; i++) {
        await env.DB.prepare("UPDATE invoices SET attempts = attempts + 1 WHERE id = ?").bind(a).run();
        written++;
        if (written === 3) await env.DB.prepare("DELETE FROM cancellations WHERE cancelled_invoice_id = ?").bind(a).run();
      }
    })();

    let steps = 0;
    let burstDone = false;
    void burst.then(() => (burstDone = true));
    for (;;) {
      const step = await migrateToStores(env, 3, ["documents"]);
      steps++;
      if (step.done) break;
      expect(steps).toBeLessThan(500);
    }
    expect(burstDone).toBe(true);
    await burst;
    expect(written).toBe(30);
    const refused = await env.DB.prepare("UPDATE invoices SET attempts = attempts + 1 WHERE id = ?").bind(a).run().then(() => null, (e: unknown) => e);
    expect(isLegacyMoved(refused), String(refused)).toBe(true);

    release();
    expect(await late).toEqual([{ id: b }]);
    expect(picked).toEqual([true, false]);

    // Every write that D1 accepted is in the store, the deletion too; the late writer's only in the store.
    const rows = await rowsOf(companyId);
    const [inStore] = (await storeFor(env, companyId, 0).db.select().from(invoices).where(eq(invoices.id, a)));
    expect(inStore!.attempts).toBe(written);
    expect(rows.cancellations!.store).toEqual([]);
    expect(rows.invoice_events!.store).toEqual(rows.invoice_events!.d1);
    const storeB = (rows.invoices!.store as { id: string; fiscal_message: string | null }[]).find((r) => r.id === b);
    const d1B = (rows.invoices!.d1 as { id: string; fiscal_message: string | null }[]).find((r) => r.id === b);
    expect(storeB!.fiscal_message).toBe("late writer");
    expect(d1B!.fiscal_message).toBeNull();
    expect((rows.invoices!.store as unknown[]).filter((r) => (r as { id: string }).id === a)).toEqual((rows.invoices!.d1 as unknown[]).filter((r) => (r as { id: string }).id === a));

    // From now on partition 0 is the store, and D1 refuses writes to every table of the group.
    expect((await legacyPartition(env, companyId, "documents")).inD1).toBe(false);
    expect((await partitionsWithLegacy(env, companyId, "documents")).map((p) => [p.ordinal, p.inD1])).toEqual([[0, false]]);
    for (const statement of [
      env.DB.prepare("INSERT INTO invoice_events (id, invoice_id, status) VALUES (?, ?, 'ACCEPTED')").bind(id("evt"), a),
      env.DB.prepare("INSERT INTO envelopes (id, company_id, kind, xml_key, document_count, status) VALUES (?, ?, 'EnvioDTE', 'k', 1, 'SENT')").bind(id("env"), companyId),
      env.DB.prepare("INSERT INTO cancellations (cancelled_invoice_id, credit_note_id) VALUES (?, ?)").bind(a, b),
      env.DB.prepare("DELETE FROM invoice_events WHERE invoice_id = ?").bind(a),
      env.DB.prepare("UPDATE invoices SET status = 'ACCEPTED' WHERE id = ?").bind(a),
    ]) {
      const err = await statement.run().then(() => null, (e: unknown) => e);
      expect(isLegacyMoved(err), String(err)).toBe(true);
    }
    expect((await storeFor(env, companyId, 0).db.all(sql`SELECT status FROM invoices WHERE id = ${a}`))).toEqual([{ status: "SENT" }]);
  });
});
