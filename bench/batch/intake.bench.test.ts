/**
 * Worker time at intake, per document, inside workerd (real D1, R2 and Durable Objects): a batch of
 * BATCH_BENCH_DOCS boletas in one `POST …/invoice-batches` against the same boletas through single
 * POSTs, each as a ratio to one RSA-2048 signature timed in the same run. Worker time is the step's
 * wall time less the time its binding calls were in flight (bench/capacity/meter.ts); the queue
 * messages are caught by the counting producer, so no pipeline work runs during the steps.
 * Prints `RESULTS {...}` for bench/batch.bench.mjs.
 */
import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import worker from "../../src/index";
import { Meter } from "../capacity/meter";
import { readyIssuer, nowLocal, type Issuer } from "../../test/helpers/issuer";

const knobs = env as unknown as { BATCH_BENCH_DOCS?: string };
const DOCS = Number(knobs.BATCH_BENCH_DOCS || 500);
const SINGLES = 40;

const meter = new Meter();
const wenv = meter.wrap(env);
const background: Promise<unknown>[] = [];
const ctx = { waitUntil: (p: Promise<unknown>) => void background.push(p), passThroughOnException() {}, props: {} } as unknown as ExecutionContext;

let iss: Issuer;

const party = (rut: string) => ({ legal_name: "EMPRESA DE PRUEBA SPA", document_type: "RUT", document_number: rut, address: { country: "CL", region: "13", city: "Santiago", address: "Av. Siempre Viva 123" }, tax_information: { activity: "Venta al por menor", activity_codes: [477399] } });
const boleta = (i: number) => ({ invoice_type: "39", invoice_date: nowLocal(), external_reference: `bench-${i}-${crypto.randomUUID().slice(0, 8)}`, issuer: party(iss.rut), items: [{ quantity: 1 + (i % 3), unit_price: 1000 + (i % 97), description: "Pan amasado" }, { quantity: 1, unit_price: 450, description: "Diario", taxes: [{ type: "EXE" }] }] });

async function post(path: string, body: unknown): Promise<{ status: number; json: any }> {
  const res = await worker.fetch!(new Request(`http://localhost${path}`, { method: "POST", headers: { "X-Api-Key": iss.owner.key, "Content-Type": "application/json" }, body: JSON.stringify(body) }) as any, wenv, ctx);
  const json = await res.json();
  do {
    await Promise.all(background.splice(0));
    await new Promise((r) => setTimeout(r, 0));
  } while (background.length > 0);
  return { status: res.status, json };
}

/** Worker time of one step: wall time less the time binding calls were in flight. */
async function cpu(fn: () => Promise<unknown>): Promise<number> {
  const { counts } = await meter.step(fn);
  return Math.max(0, counts.wallMs - counts.waitMs);
}

async function rsaSignMs(): Promise<number> {
  const key = (await crypto.subtle.generateKey({ name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" }, false, ["sign", "verify"])) as CryptoKeyPair;
  const message = new Uint8Array(2500).fill(7);
  for (let i = 0; i < 50; i++) await crypto.subtle.sign("RSASSA-PKCS1-v1_5", key.privateKey, message);
  const n = 400;
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await crypto.subtle.sign("RSASSA-PKCS1-v1_5", key.privateKey, message);
  return (performance.now() - t0) / n;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

it("intake: a batch against single POSTs, per document, in RSA signatures", async () => {
  iss = await readyIssuer(["39"], DOCS * 3 + SINGLES * 2 + 100);
  // Warm-up: both paths once (the first requests compile their code paths).
  for (let i = 0; i < 5; i++) expect((await post(`${iss.base}/invoices`, boleta(i))).status).toBe(202);
  expect((await post(`${iss.base}/invoice-batches`, { rows: Array.from({ length: 50 }, (_, i) => boleta(i)) })).status).toBe(202);
  const rsaMs = await rsaSignMs();
  const singles: number[] = [];
  for (let i = 0; i < SINGLES; i++) singles.push(await cpu(async () => expect((await post(`${iss.base}/invoices`, boleta(i))).status).toBe(202)));
  const batches: number[] = [];
  for (let round = 0; round < 3; round++) {
    const rows = Array.from({ length: DOCS }, (_, i) => boleta(i));
    batches.push(await cpu(async () => {
      const res = await post(`${iss.base}/invoice-batches`, { rows });
      expect(res.status, JSON.stringify(res.json).slice(0, 500)).toBe(202);
      expect(res.json.documents).toBe(DOCS);
    }));
  }
  const queued = meter.take("ISSUANCE_QUEUE");
  const batchPerDoc = median(batches) / DOCS;
  const singleMs = median(singles);
  const results = {
    rsa_sign_ms: +rsaMs.toFixed(3),
    single_post_worker_ms: +singleMs.toFixed(2),
    single_post_rsa_ratio: +(singleMs / rsaMs).toFixed(2),
    batch_documents: DOCS,
    batch_worker_ms: +median(batches).toFixed(1),
    batch_worker_ms_per_document: +batchPerDoc.toFixed(3),
    batch_rsa_ratio_per_document: +(batchPerDoc / rsaMs).toFixed(2),
    intake_target_met: batchPerDoc / rsaMs <= 3,
    queue_messages_sent: queued.length,
  };
  console.log(`intake per document: single POST ${results.single_post_worker_ms} ms (${results.single_post_rsa_ratio}× RSA), batch of ${DOCS} ${results.batch_worker_ms_per_document} ms (${results.batch_rsa_ratio_per_document}× RSA; target ≤ 3×)`);
  console.log(`RESULTS ${JSON.stringify({ intake: results })}`);
}, 900_000);
