import type { Env as AppEnv } from "../src/env";

declare global {
  namespace Cloudflare {
    interface GlobalProps {
      mainModule: typeof import("../src/index");
      durableNamespaces: "FolioAllocator";
    }
    interface Env extends AppEnv {
      TEST_MIGRATIONS: import("cloudflare:test").D1Migration[];
      /** Official SII XSD files by name, read by vitest.config.ts from ../shared/sii-schemas or SII_SCHEMAS_DIR. */
      SII_SCHEMAS: Record<string, string>;
      /** SII CAF public certificates (DER, base64) by file name, from ../shared/sii-keys or SII_KEYS_DIR. */
      SII_KEYS: Record<string, string>;
    }
  }
}
export {};
