import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { folioAllocatorFor } from "../../src/folios/allocator-api";
import type { FolioAllocator } from "../../src/folios/allocator";

let counter = 0;

/** A fresh allocator (new company id) for one test: storage is shared within a test file. */
export function freshAllocator(documentType = "33"): { stub: DurableObjectStub<FolioAllocator>; companyId: string } {
  counter += 1;
  const companyId = `cmp_test${Date.now().toString(36)}${counter}`;
  return { stub: folioAllocatorFor(env.FOLIO_ALLOCATOR, companyId, documentType), companyId };
}

export const NOW = Date.parse("2026-11-22T12:00:00Z");
export const DAY = 86_400_000;

/** Loads the two non-contiguous ranges of the spec examples: 1-100 (A) and 201-300 (B). */
export async function loadTwoRanges(stub: DurableObjectStub<FolioAllocator>): Promise<void> {
  const a = await stub.addRange({ cafId: "A", from: 1, to: 100, authorizedAt: "2026-11-01", expiresAt: null });
  const b = await stub.addRange({ cafId: "B", from: 201, to: 300, authorizedAt: "2026-11-01", expiresAt: null });
  if (!a.ok || !b.ok) throw new Error(`could not load ranges: ${JSON.stringify([a, b])}`);
}

/** Every row of the allocator's own tables: proves "nothing modified". */
const TABLES = ["meta", "ranges", "allocations", "annulled", "next_folio_moves", "alerts"] as const;
export type StorageDump = Record<(typeof TABLES)[number], Record<string, unknown>[]>;

export async function dumpStorage(stub: DurableObjectStub<FolioAllocator>): Promise<StorageDump> {
  return runInDurableObject(stub, (_instance: FolioAllocator, state: DurableObjectState) => {
    const read = (t: string) => state.storage.sql.exec(`SELECT * FROM ${t} ORDER BY 1`).toArray() as Record<string, unknown>[];
    return Object.fromEntries(TABLES.map((t) => [t, read(t)])) as StorageDump;
  });
}
