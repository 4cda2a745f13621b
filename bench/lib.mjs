// Shared by the benchmarks that run the service (or a probe worker) under `wrangler dev`.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { createServer } from "node:net";
import path from "node:path";
import forge from "node-forge";
import { ensureDevVars, quietEnv, root, wranglerJs } from "../scripts/local-env.mjs";

/** Offline and quiet wrangler (no telemetry, no Request.cf download), as the local scripts run it. */
export { quietEnv, root, wranglerJs };
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * wrangler dev as the benches run it: quiet, and without wrangler's local observability (on by
 * default since wrangler 4.1xx: every invocation of every isolate streams its spans and logs to a
 * collector isolate that writes them to SQLite, for the local explorer). The scale bench's
 * profile found that collector as busy as a third of the service isolate, plus span work in every
 * binding call; none of it exists in production. X_LOCAL_OBSERVABILITY=true in the environment
 * keeps it.
 */
const benchEnv = { ...quietEnv, X_LOCAL_OBSERVABILITY: process.env.X_LOCAL_OBSERVABILITY ?? "false" };

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** The p-th percentile of an ascending list. */
export function pct(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/**
 * Starts `wrangler dev` on a free loopback port in `cwd` (extra CLI `args`, e.g. --persist-to) and
 * waits until `readyPath` answers 200. `stop()` sends SIGTERM to the wrangler CLI only, which shuts
 * workerd down cleanly; it also runs when the process exits.
 */
export async function startWranglerDev({ cwd = root, args = [], readyPath = "/" } = {}) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const dev = spawn(process.execPath, [wranglerJs, "dev", "--ip", "127.0.0.1", "--port", String(port), "--log-level", "error", "--show-interactive-dev-session=false", ...args], {
    cwd,
    env: benchEnv,
    stdio: ["ignore", "ignore", "inherit"],
  });
  const stop = () => {
    if (dev.exitCode === null) dev.kill("SIGTERM");
  };
  process.on("exit", stop);
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${base}${readyPath}`)).ok) break;
    } catch {}
    if (dev.exitCode !== null || dev.signalCode !== null) throw new Error(`wrangler dev exited (${dev.exitCode ?? dev.signalCode}) before it answered`);
    if (i > 120) {
      stop();
      throw new Error("wrangler dev did not start");
    }
    await sleep(500);
  }
  return { base, stop, pid: dev.pid };
}

/** Runs a benchmark's main, printing a failure and setting the exit code. */
export function run(main) {
  main().catch((e) => {
    console.error(e);
    process.exitCode = 1;
  });
}

/** A throwaway signing certificate (.pfx, password "bench") carrying the holder RUT 11111111-1. */
export function fakePfx() {
  const keys = forge.pki.rsa.generateKeyPair(2048);
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = "01";
  cert.validity.notBefore = new Date(Date.now() - 86_400_000);
  cert.validity.notAfter = new Date(Date.now() + 365 * 86_400_000);
  const attrs = [{ name: "commonName", value: "BENCH FAKE SIGNER" }, { name: "countryName", value: "CL" }];
  cert.setSubject(attrs);
  cert.setIssuer(attrs);
  const a = forge.asn1;
  const otherName = a.create(a.Class.CONTEXT_SPECIFIC, 0, true, [
    a.create(a.Class.UNIVERSAL, a.Type.OID, false, a.oidToDer("1.3.6.1.4.1.8321.1").getBytes()),
    a.create(a.Class.CONTEXT_SPECIFIC, 0, true, [a.create(a.Class.UNIVERSAL, a.Type.IA5STRING, false, "11111111-1")]),
  ]);
  cert.setExtensions([{ id: "2.5.29.17", critical: false, value: a.create(a.Class.UNIVERSAL, a.Type.SEQUENCE, true, [otherName]) }]);
  cert.sign(keys.privateKey, forge.md.sha256.create());
  const p12 = forge.pkcs12.toPkcs12Asn1(keys.privateKey, [cert], "bench", { algorithm: "aes256" });
  return Buffer.from(forge.asn1.toDer(p12).getBytes(), "binary");
}

export function rutDv(body) {
  let sum = 0;
  let w = 2;
  for (let i = body.length - 1; i >= 0; i--) {
    sum += Number(body[i]) * w;
    w = w === 7 ? 2 : w + 1;
  }
  const r = 11 - (sum % 11);
  return r === 11 ? "0" : r === 10 ? "K" : String(r);
}

/**
 * A company ready to issue facturas (33): created, with a throwaway certificate and `quantity` folios
 * from the simulated SII. Returns the headers, the company id and body makers for factura and boleta
 * `i`. Options: `rut` (default random), `pfx` (default a new one: generating it takes a while, so a
 * bench with many companies passes one), `cafs` (folios per document type, default `{ 33: quantity }`),
 * `beforeUse(companyId)` (run once the company exists, before anything else reads it).
 */
export async function readyCompany(base, key, quantity, { rut: given, pfx = fakePfx(), cafs = { 33: quantity }, beforeUse } = {}) {
  const H = { "X-Api-Key": key, "Content-Type": "application/json" };
  const body = String(70_000_000 + Math.floor(Math.random() * 9_000_000));
  const rut = given ?? `${body}-${rutDv(body)}`;
  const created = await fetch(`${base}/api/companies`, { method: "POST", headers: H, body: JSON.stringify({ legal_name: "BENCH SPA", tax_identification_document_code: "RUT", tax_identification_document_number: rut, country: "CL", start_activities_date: "2020-01-01" }) });
  if (created.status !== 201) throw new Error(`company: ${created.status} ${await created.text()}`);
  const cid = (await created.json()).id_company;
  // What the bench does to the company before any request reads it (e.g. its rate tier).
  if (beforeUse) {
    await beforeUse(cid);
    // A change made beside the running service (another wrangler on its state) closes the service's
    // open connections: the first request after it may find its socket closed. Settle before going on.
    for (let i = 0; i < 5; i++) if (await fetch(`${base}/health`).then((r) => r.ok, () => false)) break;
  }
  const form = new FormData();
  form.append("certificate", new Blob([pfx]), "bench.pfx");
  form.append("password", "bench");
  const cert = await fetch(`${base}/api/companies/${cid}/certificates`, { method: "POST", headers: { "X-Api-Key": key }, body: form });
  if (cert.status !== 201) throw new Error(`certificate upload: ${cert.status} ${await cert.text()}`);
  for (const [type, n] of Object.entries(cafs)) {
    if (n <= 0) continue;
    const caf = await fetch(`${base}/api/companies/${cid}/enumeration/refetch`, { method: "POST", headers: H, body: JSON.stringify({ document_type: type, quantity: n }) });
    if (caf.status !== 201) throw new Error(`CAF ${type}: ${caf.status} ${await caf.text()}`);
  }

  const now = new Date().toLocaleString("sv-SE", { timeZone: "America/Santiago" });
  const issuer = { legal_name: "BENCH SPA", document_type: "RUT", document_number: rut, address: { country: "CL", city: "Santiago", address: "Calle 1" }, tax_information: { activity: "Servicios", activity_codes: [620200] } };
  const invoice = (i) => ({
    invoice_type: "33",
    invoice_date: now,
    external_reference: `bench-${i}`,
    issuer,
    recipient: { legal_name: "CLIENTE DE PRUEBA LTDA", document_type: "RUT", document_number: "77879240-0", address: { country: "CL", city: "Ñuñoa", address: "Irarrázaval 2401" }, tax_information: { activity: "Comercio" } },
    items: [
      { quantity: 2, unit_price: 15000, description: "Servicio mensual", code_unit_of_measure: "UN" },
      { quantity: 1, unit_price: 4990, description: "Despacho" },
    ],
  });
  const boleta = (i) => ({ invoice_type: "39", invoice_date: now, external_reference: `bench-${i}`, issuer, items: [{ quantity: 1, unit_price: 1000 + (Number(String(i).replace(/\D/g, "")) % 97), description: "Pan amasado" }] });
  return { H, cid, rut, invoice, boleta };
}

/**
 * The service as `npm start` runs it, in a temporary state directory (or `dir`): migrations applied,
 * wrangler dev started (extra `vars` as --var, extra CLI `args`), one OWNER key. `cwd` is the source
 * tree to run (default this one; the scale bench also runs a baseline checkout). `stop()` stops
 * wrangler and deletes the data.
 */
export async function startService({ vars = {}, cwd = root, args = [], dir = mkdtempSync(path.join(tmpdir(), "dte-bench-")) } = {}) {
  ensureDevVars();
  spawnSync(process.execPath, [wranglerJs, "d1", "migrations", "apply", "DB", "--local", "--persist-to", dir], { cwd, env: quietEnv, stdio: "ignore" });
  const varArgs = Object.entries(vars).flatMap(([k, v]) => ["--var", `${k}:${v}`]);
  const { base, stop, pid } = await startWranglerDev({ cwd, args: ["--persist-to", dir, ...varArgs, ...args], readyPath: "/health" });
  const made = spawnSync(process.execPath, [path.join(root, "node_modules/tsx/dist/cli.mjs"), "scripts/apikey-create.ts", "--client", "bench", "--role", "OWNER", "--persist-to", dir], { cwd, env: quietEnv, encoding: "utf8" });
  if (made.status !== 0) {
    stop();
    throw new Error(`apikey:create failed: ${made.stderr}`);
  }
  return {
    base,
    dir,
    /** The wrangler CLI's process id (workerd runs below it). */
    pid,
    key: JSON.parse(made.stdout).api_key,
    /** `keep`: leave the state directory (to restart on it). */
    async stop({ keep = false } = {}) {
      stop();
      await sleep(1500);
      if (keep) return;
      if (process.env.BENCH_KEEP_STATE) console.error(`state kept in ${dir}`);
      else rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Posts `count` facturas from `clients` concurrent clients; returns the POST latencies (ms). */
export async function postInvoices(base, H, cid, invoice, count, clients, prefix = "") {
  const latencies = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < count) {
        const i = next++;
        const t0 = performance.now();
        const res = await fetch(`${base}/api/companies/${cid}/invoices`, { method: "POST", headers: H, body: JSON.stringify(invoice(`${prefix}${i}`)) });
        latencies.push(performance.now() - t0);
        if (res.status !== 202) throw new Error(`POST ${i}: ${res.status} ${await res.text()}`);
        await res.arrayBuffer();
      }
    }),
  );
  return latencies;
}

/** Waits until `count` documents of the company are ACCEPTED (none FAILED or REJECTED). */
export async function untilAccepted(base, H, cid, count, deadlineMs) {
  const started = performance.now();
  const total = async (status) => (await (await fetch(`${base}/api/companies/${cid}/invoices?status=${status}&per_page=1`, { headers: H })).json()).total;
  for (;;) {
    const [accepted, failed, rejected] = await Promise.all([total("ACCEPTED"), total("FAILED"), total("REJECTED")]);
    if (failed || rejected) throw new Error(`${failed} failed, ${rejected} rejected`);
    if (accepted >= count) return;
    if (performance.now() - started > deadlineMs) throw new Error(`only ${accepted}/${count} accepted after ${deadlineMs} ms`);
    await sleep(250);
  }
}
