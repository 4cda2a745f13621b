import { describe, expect, it } from "vitest";
import { DAY, NOW, freshAllocator } from "./helpers";

/** The right to a folio, taken at POST and turned into the folio by the pipeline. */
describe("folio reservations", () => {
  it("at most as many reservations as folios left; allocation consumes them", async () => {
    const { stub } = freshAllocator();
    await stub.addRange({ cafId: "R", from: 1, to: 3, authorizedAt: "2026-11-01", expiresAt: null });
    const r = await Promise.all(["a", "b", "c", "d", "e"].map((id) => stub.reserve(id, { now: NOW })));
    expect(r.map((x) => x.ok)).toEqual([true, true, true, false, false]);
    expect(r[3]).toMatchObject({ ok: false, reason: "EXHAUSTED", message: "every folio left is reserved by the 3 documents accepted before this one" });
    expect(await stub.reserve("a", { now: NOW })).toMatchObject({ ok: true, replay: true });
    expect((await stub.status({ now: NOW })).reserved).toBe(3);
    // A document without a reservation cannot take a reserved folio.
    expect(await stub.allocate("intruder", { now: NOW })).toMatchObject({ ok: false, reason: "RESERVED" });
    const a = await stub.allocate("a", { now: NOW });
    expect(a).toMatchObject({ ok: true, folio: 1, replay: false });
    expect((await stub.status({ now: NOW })).reserved).toBe(2);
    // After its allocation the document's reservation is a replay, never a second folio.
    expect(await stub.reserve("a", { now: NOW })).toMatchObject({ ok: true, replay: true });
    expect((await stub.status({ now: NOW })).reserved).toBe(2);
  });

  it("a released reservation gives its folio to the next document", async () => {
    const { stub } = freshAllocator();
    await stub.addRange({ cafId: "R", from: 1, to: 1, authorizedAt: "2026-11-01", expiresAt: null });
    expect(await stub.reserve("a", { now: NOW })).toMatchObject({ ok: true });
    expect(await stub.reserve("b", { now: NOW })).toMatchObject({ ok: false, reason: "EXHAUSTED" });
    expect(await stub.release("a")).toBe(true);
    expect(await stub.release("a")).toBe(false);
    expect(await stub.reserve("b", { now: NOW })).toMatchObject({ ok: true });
    expect(await stub.allocate("b", { now: NOW })).toMatchObject({ ok: true, folio: 1 });
  });

  it("a reservation left behind lapses after a day", async () => {
    const { stub } = freshAllocator();
    await stub.addRange({ cafId: "R", from: 1, to: 1, authorizedAt: "2026-11-01", expiresAt: null });
    expect(await stub.reserve("lost", { now: NOW })).toMatchObject({ ok: true });
    expect(await stub.reserve("b", { now: NOW + DAY / 2 })).toMatchObject({ ok: false });
    expect(await stub.reserve("b", { now: NOW + DAY + 1 })).toMatchObject({ ok: true, replay: false });
  });

  it("[CAF-DATE] an issue date before the CAF's authorisation date is refused", async () => {
    const { stub } = freshAllocator();
    await stub.addRange({ cafId: "OLD", from: 1, to: 1, authorizedAt: "2026-10-01", expiresAt: null });
    await stub.addRange({ cafId: "NEW", from: 2, to: 5, authorizedAt: "2026-11-20", expiresAt: null });
    expect(await stub.reserve("a", { now: NOW, issueDate: "2026-09-30" })).toMatchObject({ ok: false, reason: "BEFORE_AUTHORIZATION", authorizedAt: "2026-10-01" });
    expect(await stub.reserve("a", { now: NOW, issueDate: "2026-10-15" })).toMatchObject({ ok: true, authorizedAt: "2026-10-01" });
    // The next one would come from the range authorised on 2026-11-20.
    expect(await stub.reserve("b", { now: NOW, issueDate: "2026-10-15" })).toMatchObject({ ok: false, reason: "BEFORE_AUTHORIZATION", authorizedAt: "2026-11-20" });
    expect(await stub.reserve("b", { now: NOW, issueDate: "2026-11-22" })).toMatchObject({ ok: true });
  });

  it("no ranges or only expired ones: the allocator's own reasons", async () => {
    const { stub } = freshAllocator();
    expect(await stub.reserve("a", { now: NOW })).toMatchObject({ ok: false, reason: "NO_RANGES" });
    await stub.addRange({ cafId: "X", from: 1, to: 5, authorizedAt: "2026-01-01", expiresAt: "2026-07-01T00:00:00Z" });
    expect(await stub.reserve("a", { now: NOW })).toMatchObject({ ok: false, reason: "EXPIRED" });
  });
});
