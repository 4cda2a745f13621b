#!/usr/bin/env node
// End-to-end issuance against the service as `npm start` runs it (wrangler dev: local D1, R2,
// Queues, Durable Objects and the built-in SII simulator), in a temporary state directory:
// - POST latency: ISSUANCE_BENCH_TOTAL facturas (default 2,000) posted by 64 concurrent clients;
//   p50/p95/p99 of the POST round trip (target p99 <= 30 ms);
// - throughput: documents per second from the first POST to the last ACCEPTED (target >= 300/s);
// - exactness: every document ACCEPTED, folios distinct and consecutive (1..N).
// It starts and stops wrangler itself (SIGTERM to the CLI process only) and deletes its data.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import forge from "node-forge";
import { pct, quietEnv as quiet, root, run, sleep, startWranglerDev, wranglerJs } from "./lib.mjs";

const TOTAL = Number(process.env.ISSUANCE_BENCH_TOTAL ?? 2000);
const CLIENTS = Number(process.env.ISSUANCE_BENCH_CLIENTS ?? 64);
const DEADLINE_MS = Number(process.env.ISSUANCE_BENCH_DEADLINE_MS ?? 8 * 60_000);

function fakePfx() {
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

function rutDv(body) {
  let sum = 0;
  let w = 2;
  for (let i = body.length - 1; i >= 0; i--) {
    sum += Number(body[i]) * w;
    w = w === 7 ? 2 : w + 1;
  }
  const r = 11 - (sum % 11);
  return r === 11 ? "0" : r === 10 ? "K" : String(r);
}

async function main() {
  const dir = mkdtempSync(path.join(tmpdir(), "dte-bench-"));
  spawnSync(process.execPath, [wranglerJs, "d1", "migrations", "apply", "DB", "--local", "--persist-to", dir], { cwd: root, env: quiet, stdio: "ignore" });
  const { base, stop } = await startWranglerDev({ args: ["--persist-to", dir], readyPath: "/health" });
  try {
    const made = spawnSync(process.execPath, [path.join(root, "node_modules/tsx/dist/cli.mjs"), "scripts/apikey-create.ts", "--client", "bench", "--role", "OWNER", "--persist-to", dir], { cwd: root, env: quiet, encoding: "utf8" });
    if (made.status !== 0) throw new Error(`apikey:create failed: ${made.stderr}`);
    const key = JSON.parse(made.stdout).api_key;
    const H = { "X-Api-Key": key, "Content-Type": "application/json" };
    const body = String(70_000_000 + Math.floor(Math.random() * 9_000_000));
    const rut = `${body}-${rutDv(body)}`;
    const company = await (await fetch(`${base}/api/companies`, { method: "POST", headers: H, body: JSON.stringify({ legal_name: "BENCH SPA", tax_identification_document_code: "RUT", tax_identification_document_number: rut, country: "CL", start_activities_date: "2020-01-01" }) })).json();
    const cid = company.id_company;
    const form = new FormData();
    form.append("certificate", new Blob([fakePfx()]), "bench.pfx");
    form.append("password", "bench");
    const cert = await fetch(`${base}/api/companies/${cid}/certificates`, { method: "POST", headers: { "X-Api-Key": key }, body: form });
    if (cert.status !== 201) throw new Error(`certificate upload: ${cert.status} ${await cert.text()}`);
    const caf = await fetch(`${base}/api/companies/${cid}/enumeration/refetch`, { method: "POST", headers: H, body: JSON.stringify({ document_type: "33", quantity: TOTAL }) });
    if (caf.status !== 201) throw new Error(`CAF: ${caf.status} ${await caf.text()}`);

    const now = new Date().toLocaleString("sv-SE", { timeZone: "America/Santiago" });
    const invoice = (i) => ({
      invoice_type: "33",
      invoice_date: now,
      external_reference: `bench-${i}`,
      issuer: { legal_name: "BENCH SPA", document_type: "RUT", document_number: rut, address: { country: "CL", city: "Santiago", address: "Calle 1" }, tax_information: { activity: "Servicios", activity_codes: [620200] } },
      recipient: { legal_name: "CLIENTE DE PRUEBA LTDA", document_type: "RUT", document_number: "77879240-0", address: { country: "CL", city: "Ñuñoa", address: "Irarrázaval 2401" }, tax_information: { activity: "Comercio" } },
      items: [
        { quantity: 2, unit_price: 15000, description: "Servicio mensual", code_unit_of_measure: "UN" },
        { quantity: 1, unit_price: 4990, description: "Despacho" },
      ],
    });

    // Warm-up (first requests compile the bundle's code paths).
    for (let i = 0; i < 3; i++) await fetch(`${base}/api/companies/${cid}/invoices`, { method: "POST", headers: H, body: JSON.stringify(invoice(`warm-${i}`)) });

    const latencies = [];
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (next < TOTAL - 3) {
          const i = next++;
          const t0 = performance.now();
          const res = await fetch(`${base}/api/companies/${cid}/invoices`, { method: "POST", headers: H, body: JSON.stringify(invoice(i)) });
          latencies.push(performance.now() - t0);
          if (res.status !== 202) throw new Error(`POST ${i}: ${res.status} ${await res.text()}`);
          await res.arrayBuffer();
        }
      }),
    );
    const postedMs = performance.now() - started;
    let accepted = 0;
    for (;;) {
      const page = await (await fetch(`${base}/api/companies/${cid}/invoices?status=ACCEPTED&per_page=1`, { headers: H })).json();
      accepted = page.total;
      const failed = (await (await fetch(`${base}/api/companies/${cid}/invoices?status=FAILED&per_page=1`, { headers: H })).json()).total;
      const rejected = (await (await fetch(`${base}/api/companies/${cid}/invoices?status=REJECTED&per_page=1`, { headers: H })).json()).total;
      if (failed || rejected) throw new Error(`${failed} failed, ${rejected} rejected`);
      if (accepted >= TOTAL) break;
      if (performance.now() - started > DEADLINE_MS) throw new Error(`only ${accepted}/${TOTAL} accepted after ${DEADLINE_MS} ms`);
      await sleep(250);
    }
    const totalMs = performance.now() - started;
    const folios = [];
    for (let page = 1; folios.length < TOTAL; page++) {
      const res = await (await fetch(`${base}/api/companies/${cid}/invoices?per_page=100&page=${page}`, { headers: H })).json();
      if (res.data.length === 0) break;
      for (const d of res.data) folios.push(d.folio);
    }
    const sortedF = [...folios].sort((a, b) => a - b);
    const duplicates = sortedF.length - new Set(sortedF).size;
    const gaps = sortedF.filter((f, i) => f !== i + 1).length;
    latencies.sort((a, b) => a - b);
    const r = {
      documents: TOTAL,
      clients: CLIENTS,
      post_p50_ms: +pct(latencies, 50).toFixed(1),
      post_p95_ms: +pct(latencies, 95).toFixed(1),
      post_p99_ms: +pct(latencies, 99).toFixed(1),
      post_rate_per_s: +((TOTAL - 3) / (postedMs / 1000)).toFixed(1),
      end_to_end_docs_per_s: +(TOTAL / (totalMs / 1000)).toFixed(1),
      end_to_end_seconds: +(totalMs / 1000).toFixed(1),
      folio_duplicates: duplicates,
      folio_gaps: gaps,
    };
    console.log(JSON.stringify(r, null, 2));
    console.log(`targets: end-to-end >= 300 docs/s: ${r.end_to_end_docs_per_s >= 300 ? "met" : "NOT met"}; POST p99 <= 30 ms: ${r.post_p99_ms <= 30 ? "met" : "NOT met"}`);
    if (duplicates || gaps) process.exitCode = 1;
  } finally {
    stop();
    await sleep(1500);
    rmSync(dir, { recursive: true, force: true });
  }
}

run(main);
