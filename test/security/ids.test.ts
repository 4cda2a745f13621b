import { describe, expect, it } from "vitest";
import { newId } from "../../src/lib/ids";

/** Crockford base32 random part (last 16 characters) as a bigint. */
function randomPart(id: string): bigint {
  const alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
  let n = 0n;
  for (const ch of id.slice(-16)) n = n * 32n + BigInt(alphabet.indexOf(ch));
  return n;
}

describe("ids visible outside are fully random", () => {
  it("ids minted in the same millisecond are not neighbours of each other", () => {
    const ids = Array.from({ length: 200 }, () => newId("cmp"));
    expect(new Set(ids).size).toBe(200);
    let neighbours = 0;
    for (let i = 1; i < ids.length; i++) {
      const diff = randomPart(ids[i]!) - randomPart(ids[i - 1]!);
      if (diff > -1000n && diff < 1000n) neighbours++;
    }
    expect(neighbours).toBe(0);
    expect(ids[0]).toMatch(/^cmp_[0-9A-HJKMNP-TV-Z]{26}$/);
  });

  it("internal event ids stay monotonic, so ordering by id keeps insert order", () => {
    const ids = Array.from({ length: 50 }, () => newId("evt"));
    expect([...ids].sort()).toEqual(ids);
  });
});
