declare global {
  namespace Cloudflare {
    /** Bindings the test configuration (vitest.config.ts) adds to the Worker's own (worker-configuration.d.ts). */
    interface Env {
      TEST_MIGRATIONS: import("cloudflare:test").D1Migration[];
      /** Official SII XSD files by name, read by vitest.config.ts from ../shared/sii-schemas or SII_SCHEMAS_DIR. */
      SII_SCHEMAS: Record<string, string>;
      /** SII CAF public certificates (DER, base64) by file name, from ../shared/sii-keys or SII_KEYS_DIR. */
      SII_KEYS: Record<string, string>;
      /** A rate limiter of 3 requests a minute (vitest.config.ts), swapped in for a real one by the rate-limit tests. */
      TEST_TIGHT_LIMITER: RateLimit;
      /** The fuzz's request count and seed (test/fuzz/fuzz.test.ts). */
      FUZZ_REQUESTS?: string;
      FUZZ_SEED?: string;
      /** How many documents the short chaos run issues (test/chaos/chaos.test.ts). */
      CHAOS_DOCUMENTS?: string;
    }
  }
}
export {};
