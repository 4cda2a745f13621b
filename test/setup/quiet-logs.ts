/**
 * The Worker's info and debug lines (src/lib/log.ts: one per request and queue message) stay inside
 * workerd during the tests: vitest hands every console line to its runner over RPC, and a line still
 * in flight when a test file's environment closes fails the whole run ("Closing rpc while
 * onUserConsoleLog was pending", seen once after test/api/tenancy.test.ts's 489 requests). Warnings
 * and errors are still printed. A test that reads the lines (test/operations, test/security) spies
 * on the console with its own implementation, which sees every line as before.
 */
const QUIET = /^\{"level":"(?:info|debug)"/;
const MARK = Symbol.for("dte.test.quietLogs");

const current = console.log as typeof console.log & { [MARK]?: true };
if (!current[MARK]) {
  const quiet = Object.assign((...args: unknown[]) => {
    if (typeof args[0] === "string" && QUIET.test(args[0])) return;
    current.apply(console, args);
  }, { [MARK]: true as const });
  console.log = quiet;
}
