/**
 * A seeded pseudo-random generator (mulberry32: small, fast, good enough to pick faults and shape
 * test loads; never for secrets). The same seed gives the same sequence, so a chaos run or a load
 * simulation can be repeated. Shared by the chaos hook and driver (src/operations/chaos, scripts/chaos) and the
 * load simulation (bench/scale/load.mjs, which Node imports with its type stripping: keep this file
 * free of TypeScript-only syntax that is not erasable, and free of imports).
 */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
