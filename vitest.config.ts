import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { readdirSync, readFileSync, existsSync } from "node:fs";
import path from "node:path";
import { parse } from "smol-toml";
import { webhookReceiver } from "./test/webhooks/receiver.node";

/**
 * The official SII schemas are read from ../shared/sii-schemas (present in CI) or from the folder
 * named by SII_SCHEMAS_DIR, and handed to the tests as a binding. Tests that validate XML fail
 * (never skip) when the folder is missing.
 */
function readSchemas(): Record<string, string> {
  const dir = process.env.SII_SCHEMAS_DIR ?? path.resolve(import.meta.dirname, "../shared/sii-schemas");
  if (!existsSync(dir)) return {};
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir)) {
    if (name.endsWith(".xsd")) out[name] = readFileSync(path.join(dir, name), "latin1");
  }
  return out;
}

function readSiiKeys(): Record<string, string> {
  const dir = process.env.SII_KEYS_DIR ?? path.resolve(import.meta.dirname, "../shared/sii-keys");
  if (!existsSync(dir)) return {};
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir)) {
    if (name.endsWith(".cer")) out[name] = readFileSync(path.join(dir, name)).toString("base64");
  }
  return out;
}

/**
 * The rate limiters of wrangler.toml as miniflare options, with a limit the suite never reaches (its
 * concurrency tests make thousands of requests a minute with one key), plus a tight one (3 a minute)
 * that test/api/rate-limits.test.ts puts in place of a real one to reach a limit in a few requests.
 */
function rateLimiters() {
  const config = parse(readFileSync(path.resolve(import.meta.dirname, "wrangler.toml"), "utf8")) as { ratelimits?: { name: string; namespace_id: string; simple: { limit: number; period: 10 | 60 } }[] };
  const declared = Object.fromEntries((config.ratelimits ?? []).map((r) => [r.name, { namespace_id: r.namespace_id, simple: { ...r.simple, limit: 1_000_000 } }]));
  return { ...declared, TEST_TIGHT_LIMITER: { namespace_id: "9001", simple: { limit: 3, period: 60 as const } } };
}

/**
 * `npm run test:full` sets TEST_FULL=1: the seeded loops that `npm test` runs short (the fuzz, the
 * chaos run) run at their full size.
 */
const FULL = process.env.TEST_FULL === "1";

type WranglerConsumer = { queue: string; max_batch_size?: number; max_batch_timeout?: number; max_retries?: number; dead_letter_queue?: string; retry_delay?: number };

/**
 * The queue consumers of wrangler.toml as miniflare options, with a batch window of a tenth of a
 * second instead of one to five: the local queue holds every batch for its whole window, and a
 * document passes through the issuance queue several times on its way to a verdict, so each hop
 * would add a second of waiting to every test that follows a document. Batch sizes, retries and
 * dead-letter queues stay as declared.
 */
function queueConsumers() {
  const config = parse(readFileSync(path.resolve(import.meta.dirname, "wrangler.toml"), "utf8")) as { queues?: { consumers?: WranglerConsumer[] } };
  return Object.fromEntries((config.queues?.consumers ?? []).map((c) => [c.queue, {
    maxBatchSize: c.max_batch_size,
    maxBatchTimeout: Math.min(c.max_batch_timeout ?? 5, 0.1),
    maxRetries: c.max_retries,
    deadLetterQueue: c.dead_letter_queue,
    retryDelay: c.retry_delay,
  }]));
}

/**
 * The Worker's test projects. "workers-shared" runs most files with one workerd runtime per worker,
 * reused from file to file (10 to 15 s to start and load the app, paid once per worker instead of once
 * per file): its D1, R2, queues and Durable Objects keep what earlier files wrote, and their leftover
 * background work (queue retries, alarms) may still run. Its files hold to that: they read and count
 * only their own companies and documents (fresh owners, companies and RUTs each). "workers" gives
 * each file of ISOLATED a runtime of its own, whose storage holds only what the file wrote: the files
 * that need a world of their own (see the list). "workers-shared" runs first (a worker keeps its
 * runtime only for a next file of its own project).
 */
async function workersProject(name: string, shared: boolean) {
  return {
    plugins: [
      cloudflareTest(async () => ({
        wrangler: { configPath: "./wrangler.toml" },
        // The chaos run's entry: the production Worker with the fault hook (inert until a test sets a fault plan).
        main: "./scripts/chaos/worker.ts",
        miniflare: {
          bindings: {
            ENVIRONMENT: "test",
            MASTER_KEY: "dGVzdC1vbmx5LW1hc3Rlci1rZXktMzItYnl0ZXMhISE=",
            API_KEY_PEPPER: "test-only-pepper-0123456789",
            TEST_MIGRATIONS: await readD1Migrations("./migrations"),
            SII_SCHEMAS: readSchemas(),
            SII_KEYS: readSiiKeys(),
            // Webhooks: a short timeout and retry schedule so tests see timeouts and retries quickly.
            WEBHOOK_TIMEOUT_MS: "1500",
            WEBHOOK_RETRY_SCHEDULE: "1,1,1",
            // The schema-driven fuzz (test/fuzz): `npm run fuzz` sets more requests and a new seed;
            // `npm run test:full` (TEST_FULL=1) runs 5,000 with the usual seed.
            FUZZ_REQUESTS: process.env.FUZZ_REQUESTS ?? (FULL ? "5000" : "400"),
            FUZZ_SEED: process.env.FUZZ_SEED ?? "1515",
            // The short chaos run (test/chaos/chaos.test.ts): 30 documents, 300 in the full run.
            CHAOS_DOCUMENTS: FULL ? "300" : "30",
          },
          ratelimits: rateLimiters(),
          queueConsumers: queueConsumers(),
          // Outbound fetch (webhook deliveries) goes to a recording receiver in Node.
          outboundService: webhookReceiver,
        },
      })),
    ],
    test: {
      name,
      // quiet-logs: the Worker's info lines stay in workerd (tests print its warnings and errors);
      // mail-module and resolve-cache: no module lookup over RPC from background work at a file's end.
      setupFiles: ["./test/setup/apply-migrations.ts", "./test/setup/composition-root.ts", "./test/setup/quiet-logs.ts", "./test/setup/mail-module.ts", "./test/setup/resolve-cache.ts"],
      include: shared ? ["test/**/*.test.ts"] : ISOLATED,
      exclude: ["test/**/*.node.test.ts", "**/node_modules/**", ...(shared ? ISOLATED : [])],
      isolate: !shared,
      sequence: { groupOrder: shared ? 0 : 1 },
      // Two runtimes side by side, whatever the core count (vitest's default is one less than the
      // cores: one on a 2-core machine). Most of a file's time is spent waiting on queues, alarms
      // and the simulated SII, not computing, so two workers nearly halve the run on two cores.
      maxWorkers: 2,
      testTimeout: 60_000,
      hookTimeout: 60_000,
    },
  };
}

/**
 * The files "workers" runs, each in a runtime of its own (see workersProject); "workers-shared" runs
 * every other Worker test file.
 */
const ISOLATED = [
  // Whole-world reads: a key rotation over every sealed row; a property run over list pages whose
  // totals failed next to other files' stores.
  "test/security/secrets-at-rest.test.ts",
  "test/stores/list-pages.test.ts",
  // The simulated SII's fixed test RUTs (test/sii/helpers.ts ISSUER_RUT, test/reception/helpers.ts
  // RECIPIENT): the simulator keeps documents by issuer RUT, type and folio, and its register lists
  // every document addressed to a RUT, so files with the same RUTs see each other's documents.
  "test/reception/attacks.test.ts",
  "test/reception/buyer-replies.test.ts",
  "test/reception/buyer-response.test.ts",
  "test/reception/cron.test.ts",
  "test/reception/email.test.ts",
  "test/reception/intake.test.ts",
  "test/reception/issued.test.ts",
  "test/reception/reply-mail.test.ts",
  "test/reception/sii-status.test.ts",
  "test/reception/stores.test.ts",
  "test/sii/authority.test.ts",
  "test/sii/reception-inject.test.ts",
  "test/sii/simulator-roundtrips.test.ts",
  "test/webhooks/events.test.ts",
  "test/client/answer-supplier-example.test.ts",
  "test/cessions/buyer.test.ts",
  "test/cessions/register-answers.test.ts",
  // Issues the reference's factura example, whose issuer is the fixed 76086428-5.
  "test/api/examples.test.ts",
  // Every sample posted at once to the fixed recipient, and concurrent CAF uploads: sharing a
  // runtime, their requests were cancelled as hung in a trial run (cause not pinned down).
  "test/pipeline/document-model.test.ts",
  "test/security/caf-ownership.test.ts",
  // Runtime-wide caches these files observe from their first state (the stores' directory cache,
  // the fan-out notices).
  "test/stores/directory-cache.test.ts",
  "test/stores/fanout-notices.test.ts",
];

/**
 * Three projects: "workers" and "workers-shared" run the tests inside workerd (the default; see
 * workersProject); "node" runs the
 * `*.node.test.ts` files, the tests that need Node-only tools (xmllint-wasm needs a Worker thread for
 * the official XSD validation of the Chilean XML; the import-graph test reads the sources). Both kinds
 * live beside the feature they test. `vitest run` runs them all; `--project "workers*"` both workerd ones.
 */
export default defineConfig({
  test: {
    // The default reporter, then the files that took longest (test/setup/slowest-files.reporter.ts).
    reporters: ["default", "./test/setup/slowest-files.reporter.ts"],
    projects: [
      await workersProject("workers-shared", true),
      await workersProject("workers", false),
      {
        test: {
          name: "node",
          environment: "node",
          // After the workers files, as a group of their own: a worker keeps its runtime for the next
          // file only when that file is of its own project, so interleaved node files would make the
          // workers project start a new runtime after each of them.
          sequence: { groupOrder: 2 },
          include: ["test/**/*.node.test.ts"],
          // Two side by side, as the workers projects: the XSD validations and the bundle builds take
          // most of this group's time, each on one thread.
          maxWorkers: 2,
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
