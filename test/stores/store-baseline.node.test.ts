/** The stores' baseline (src/storage/db/document-store/baseline.ts) is generated from their Drizzle tables: it must be current. */
import { describe, expect, it } from "vitest";
import { STORE_TABLES } from "../../src/storage/db/document-store/baseline";
import { storeTableStatements } from "../../scripts/store-schema";

describe("src/storage/db/document-store/baseline.ts", () => {
  it("was generated from the Drizzle tables of the stores (run `npm run db:generate:stores` after a change)", async () => {
    expect([...STORE_TABLES]).toEqual(await storeTableStatements());
  });
});
