// `npm run keys:rotate [-- --persist-to DIR] [--page N]`
// Re-seals every stored secret (certificate .pfx and password, webhook secrets, CAF files) under the
// current master key version: the first entry of MASTER_KEY in .dev.vars (`2:<new>,1:<old>` while
// rotating). Resumable and idempotent: progress is kept in D1 (key_rotations), and a value already
// under the current key is left alone, so an interrupted run is simply run again.
// Works on the local state (that of `npm start`). Deployed workers rotate by themselves: the cron
// runs the same steps every 5 minutes after `wrangler secret put MASTER_KEY` (README "Deploy").
// Prints one JSON summary on stdout.
import { parseArgs } from "node:util";
import { getPlatformProxy } from "wrangler";
import { ensureDevVars, wrangler } from "./local-env.mjs";
import { createDb } from "../src/storage/db/client";
import { rotateAll } from "../src/accounts/secrets/rotation";
import { parseKeyRing } from "../src/lib/secrets";

const { values } = parseArgs({ options: { "persist-to": { type: "string" }, page: { type: "string", default: "50" } } });

const vars = ensureDevVars();
try {
  parseKeyRing(vars.MASTER_KEY ?? "");
} catch (e) {
  process.stderr.write(`keys:rotate: .dev.vars: ${(e as Error).message}\n`);
  process.exit(2);
}
const persistTo = values["persist-to"];
wrangler(["d1", "migrations", "apply", "DB", "--local", ...(persistTo ? ["--persist-to", persistTo] : [])]);
// `wrangler dev --persist-to DIR` keeps its state under DIR/v3.
const proxy = await getPlatformProxy<Env>({ persist: persistTo ? { path: `${persistTo}/v3` } : true });
try {
  const env = { ...proxy.env, MASTER_KEY: vars.MASTER_KEY } as Env;
  let version = 0;
  const resealed = await rotateAll(createDb(env.DB), env, Math.max(1, Number(values.page)), (step) => {
    version = step.version;
    if (step.resealed > 0) process.stderr.write(`re-sealed ${step.resealed} value(s) (${step.phase})\n`);
  });
  process.stdout.write(`${JSON.stringify({ key_version: version, resealed, done: true })}\n`);
} finally {
  await proxy.dispose();
}
