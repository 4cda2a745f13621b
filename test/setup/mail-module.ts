/**
 * Loads cloudflare:email before a test file runs. src/lib/mail.ts imports it on the first mail sent;
 * in the tests that import goes through vitest's module runner over RPC, and a first mail sent by
 * background work (a queue consumer, a store's alarm, waitUntil) as a test file's environment
 * closes failed the whole run ("Closing rpc while \"resolve\" was pending", once, after
 * test/pipeline/paths.test.ts). Loaded here, every later mail finds it in memory.
 */
import { emailMessageClass } from "../../src/lib/mail";

await emailMessageClass();
