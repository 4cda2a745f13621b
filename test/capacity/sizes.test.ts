/**
 * The capacity benchmark's D1 sizing (bench/capacity/sizes.ts): one row sized by hand from SQLite's
 * record format, and the logical growth of a table of 2,000 rows against the physical growth D1
 * reports (`size_after`): pages hold some free space, so physical ≥ logical, but not by much.
 */
import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import { diff, physicalSize, schemaOf, snapshot } from "../../bench/capacity/sizes";

it("sizes one row as SQLite's record format does", async () => {
  await env.DB.exec("CREATE TABLE cap_one (id TEXT PRIMARY KEY, n INTEGER, body TEXT)");
  const tables = (await schemaOf(env.DB)).filter((t) => t.name === "cap_one");
  const before = await snapshot(env.DB, tables);
  await env.DB.prepare("INSERT INTO cap_one (id, n, body) VALUES ('a', 1, 'xyz')").run();
  const d = diff(before, await snapshot(env.DB, tables)).get("cap_one")!;
  // Record: header size (1) + serial types of 'a' (15), 1 (9), 'xyz' (19), one byte each = 4;
  // body 1 + 0 + 3 = 4; 8 bytes. Table cell: payload length (1) + rowid (1) + 8 + cell pointer (2) = 12.
  expect(d.tableGrowth).toBe(12);
  // The primary-key index: record of ('a', rowid 1): header 3 + body 1 (the integer 1 is serial type
  // 9, no body) = 4; cell 1 + 4 + 2 = 7.
  expect(d.indexGrowth).toBe(7);
  expect(d).toMatchObject({ inserted: 1, updated: 0, deleted: 0, bytesWritten: 19 });
});

it("the logical growth of 2,000 rows is close below D1's physical growth", async () => {
  await env.DB.exec("CREATE TABLE cap_many (id TEXT PRIMARY KEY, company TEXT NOT NULL, n INTEGER NOT NULL, body TEXT NOT NULL)");
  await env.DB.exec("CREATE INDEX cap_many_company ON cap_many (company, n)");
  const tables = (await schemaOf(env.DB)).filter((t) => t.name === "cap_many");
  const before = await snapshot(env.DB, tables);
  const size0 = await physicalSize(env.DB);
  for (let i = 0; i < 2000; i += 50) {
    await env.DB.batch(Array.from({ length: 50 }, (_, j) => env.DB.prepare("INSERT INTO cap_many VALUES (?, ?, ?, ?)").bind(`doc_${String(i + j).padStart(6, "0")}`, `cmp_${(i + j) % 7}`, i + j, "x".repeat(300 + ((i + j) % 100)))));
  }
  const d = diff(before, await snapshot(env.DB, tables)).get("cap_many")!;
  const physical = (await physicalSize(env.DB)) - size0;
  const logical = d.tableGrowth + d.indexGrowth;
  expect(d.inserted).toBe(2000);
  expect(physical).toBeGreaterThanOrEqual(logical);
  expect(physical).toBeLessThan(1.5 * logical);
});
