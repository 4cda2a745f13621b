// `npm run demo`: from a fresh clone to an accepted factura PDF on disk, offline. Starts the service
// (`npm start`) unless one already answers at DTE_API_URL, creates a test key, makes a test signing
// certificate (a fake person, RUT 11111111-1; never a real taxpayer's), and runs
// examples/issue-invoice.ts with the typed client. Everything lands in demo-output/.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { createDteClient } from "../clients/typescript";
import { issueInvoice } from "../examples/issue-invoice";
import { makeFakeCertificate, makeFakePfx } from "../test/helpers/fake-certificates";

const root = path.resolve(import.meta.dirname, "..");
const out = path.join(root, "demo-output");
const base = (process.env.DTE_API_URL ?? `http://127.0.0.1:${process.env.PORT ?? "8787"}`).replace(/\/$/, "");
const say = (line: string) => console.log(`\u25b8 ${line}`);

async function answers(url: string): Promise<boolean> {
  try {
    return (await fetch(url)).ok;
  } catch {
    return false;
  }
}

let server: ChildProcess | undefined;
if (await answers(`${base}/health`)) {
  say(`using the service already running at ${base}`);
} else {
  say(`starting the service (npm start) on ${base} …`);
  server = spawn(process.execPath, [path.join(root, "scripts/start.mjs")], { cwd: root, env: { ...process.env, PORT: new URL(base).port || "8787", LOG_LEVEL: "error" }, stdio: "ignore", detached: true });
  const until = Date.now() + 120_000;
  while (!(await answers(`${base}/health`))) {
    if (Date.now() > until) throw new Error(`the service did not answer at ${base}/health within 2 minutes; run \`npm start\` to see why`);
    await new Promise((r) => setTimeout(r, 500));
  }
}
const stop = () => server?.pid && process.kill(-server.pid, "SIGTERM");

try {
  say("creating a test API key (npm run apikey:create -- --client Demo --role OWNER)");
  const created = JSON.parse(execFileSync(process.execPath, [path.join(root, "node_modules/tsx/dist/cli.mjs"), "scripts/apikey-create.ts", "--client", "Demo", "--role", "OWNER", "--name", "demo"], { cwd: root, encoding: "utf8" })) as { api_key: string };
  const apiKey = created.api_key;

  say("making a test signing certificate (.pfx, fake person with RUT 11111111-1)");
  mkdirSync(out, { recursive: true });
  const cert = await makeFakeCertificate({ rut: "11111111-1", cn: "PERSONA DE PRUEBA", notBefore: new Date(Date.now() - 86_400_000), notAfter: new Date(Date.now() + 365 * 86_400_000) });
  const pfx = makeFakePfx(cert, "demo1234", "modern");
  writeFileSync(path.join(out, "firma-prueba.pfx"), pfx);

  const client = createDteClient({ baseUrl: base, apiKey });
  const done = await issueInvoice({ client, pfx, password: "demo1234", log: say });
  const file = path.join(out, `factura-${done.folio}.pdf`);
  writeFileSync(file, done.pdf);
  writeFileSync(path.join(out, "api-key.txt"), `${apiKey}\n`);

  console.log(`
\u2714 ${done.status}: ${path.relative(process.cwd(), file)} (factura folio ${done.folio}, invoice ${done.invoiceId}, company ${done.companyId})

Where to look next:
  - the API reference, with "try it":  ${base}/docs   (npm start keeps the service up)
  - your test key:                     demo-output/api-key.txt  (send it as X-Api-Key)
  - the same steps in TypeScript:      examples/issue-invoice.ts (typed client: clients/typescript)
  - the same steps with curl:          README.md, "Try it with curl"
  - the test certificate:              demo-output/firma-prueba.pfx, password demo1234
`);
} finally {
  stop();
}
