/**
 * The capacity model's measurements (docs/capacity.md), inside workerd with real D1, R2, Durable
 * Objects and the SII simulator. The service's own code runs unchanged: the HTTP app
 * (`worker.fetch`), the issuance pipeline's step functions in the order the queue consumer calls
 * them (src/invoices/pipeline/consumer.ts: rows + folios, prepare (stamp + sign), envelope stored and
 * documents recorded SIGNED, upload, then polls in a later batch), the webhook consumer and the
 * email() handler, each given an `Env` whose bindings count what they are asked (meter.ts). Queue
 * messages are caught by the counting producers and handed to the real consumers by this file.
 *
 * Per document kind, one warm-up document and REPS measured ones, one at a time; per step the
 * median of each figure. Then a batched run: BATCH_DOCS boletas through the real consumer
 * (handleIssuanceBatch) in queue batches of 50, per-document averages. Bytes stored per document
 * come from sizing every row and index entry before and after (sizes.ts) and from D1's size_after.
 * CPU is reported in ms and as a ratio to one RSA-2048 PKCS#1 v1.5 signature timed in the same run.
 */
import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import worker from "../../src/index";
import { app } from "../../src/app";
import { internalSimulatorEnv } from "../../src/config";
import { createDb } from "../../src/storage/db/client";
import { siiAuthority } from "../../src/countries/cl";
import { SiiClient } from "../../src/countries/cl/sii/client";
import { handleIssuanceBatch } from "../../src/invoices/pipeline/consumer";
import { handleWebhookBatch } from "../../src/webhooks/consumer";
import { enqueueEnvelopePolls } from "../../src/invoices/pipeline/messages";
import { notifyStore } from "../../src/webhooks/messages";
import { allocateFolios, pollEnvelope, prepareDocument, recordSigned, reload, sendPrepared, storeEnvelope, type StepDeps } from "../../src/invoices/pipeline/steps";
import { partitionedId, partitionsOf, storeForId, storeName } from "../../src/storage/db/document-store";
import { StoreD1, type StoreRpc } from "../../src/storage/db/document-store/client";
import { sql } from "drizzle-orm";
import { call } from "../../test/helpers/api";
import { readyIssuer, nowLocal, type Issuer } from "../../test/helpers/issuer";
import { receiverUrl, register } from "../../test/webhooks/helpers";
import { envelope, fakeCredentials, signedDte, simulatorCaf } from "../../test/sii/helpers";
import { emailMessage, receiver } from "../../test/reception/helpers";
import { mailWithEnvelope } from "../reception/mail";
import { storeRows } from "../../test/helpers/store";
import { forgetCompanyControl } from "../../src/accounts/companies/control-cache";
import { forgetAccess } from "../../src/accounts/access/cache";
import { forgetDirectory } from "../../src/storage/db/document-store";
import { Meter, add, batchOf, zero, type Counts } from "./meter";
import { diff, physicalSize, schemaOf, snapshot, type Snapshot, type TableDelta, type TableInfo } from "./sizes";

const knobs = env as unknown as { CAPACITY_REPS?: string; CAPACITY_BATCH_DOCS?: string };
const REPS = Number(knobs.CAPACITY_REPS || 5);
const BATCH_DOCS = Number(knobs.CAPACITY_BATCH_DOCS || 200);
const SIM_TABLE = /^sim_/; // the SII simulator's tables: the tax authority's side, not the service's storage

interface StepFigures extends Counts {
  d1BytesWritten: number;
  d1RowsInserted: number;
  /** Logical bytes written to the sized document stores (rows and index entries, as for D1). */
  storeBytesWritten: number;
}

const meter = new Meter();
const wenv = meter.wrap(env);
// What a request hands to waitUntil (the API key's last-use touch, once a minute per key) belongs to
// that request: `post` awaits it inside the step, as the runtime keeps the request alive for it. A
// no-op waitUntil left the touch's D1 call running into the next step ("binding calls still in flight").
const background: Promise<unknown>[] = [];
const ctx = { waitUntil: (p: Promise<unknown>) => void background.push(p), passThroughOnException() {}, props: {} } as unknown as ExecutionContext;
// The simulated SII answers with the unwrapped bindings: its work is the tax authority's, timed as
// outbound I/O. Its calls are the in-process ones of the service's own client (siiClientFor), which
// the simulator's gate lets in.
const simulatorCtx = { waitUntil() {}, passThroughOnException() {}, props: {} } as unknown as ExecutionContext;
const sii = new SiiClient({ mode: "simulator", fetcher: meter.external(async (req) => app.fetch(req, internalSimulatorEnv(env), simulatorCtx)) });
const authority = siiAuthority(wenv, ctx, sii);

let tables: TableInfo[];
let last: Snapshot;
/** Document stores sized like D1: each company's store its documents are in, once it exists. Their tables are named `<label>:<table>`. */
const sizedStores: { label: string; name: string; db: D1Database; tables: TableInfo[] }[] = [];

/** Sizes the store of `companyId`'s partition `ordinal` from now on, once (its first snapshot is the baseline of its next step). */
async function sizeStore(label: string, companyId: string, ordinal: number) {
  const name = storeName(companyId, ordinal);
  if (sizedStores.some((s) => s.name === name)) return;
  const db = new StoreD1(() => env.DOCUMENT_STORE.get(env.DOCUMENT_STORE.idFromName(name)) as unknown as StoreRpc).asD1();
  const store = { label, name, db, tables: await schemaOf(db) };
  sizedStores.push(store);
  // Its rows so far are the baseline of the next step (a store added later is not its growth).
  for (const [t, rows] of await snapshot(db, store.tables)) last.set(`${label}:${t}`, rows);
}

/** D1's tables and the sized stores' (`<label>:<table>`). */
async function snapshotAll(): Promise<Snapshot> {
  const out = await snapshot(env.DB, tables);
  for (const s of sizedStores) for (const [t, rows] of await snapshot(s.db, s.tables)) out.set(`${s.label}:${t}`, rows);
  return out;
}
const isStoreTable = (name: string) => name.includes(":");
/** The D1 round trips (SQL text) of each step of the current document, in step order. */
let stepSql: string[][] = [];
/** Net growth of the service's tables since the start of the current document, per table. */
let perDocGrowth = new Map<string, TableDelta>();
let r2PerDoc = 0;

/** One step: counts, plus what it wrote to D1 (rows sized before and after). */
async function step<T>(fn: () => Promise<T>): Promise<{ value: T; f: StepFigures }> {
  const { value, counts } = await meter.step(fn);
  stepSql.push(meter.d1Sql);
  const now = await snapshotAll();
  let bytes = 0;
  let inserted = 0;
  let storeBytes = 0;
  for (const [name, d] of diff(last, now)) {
    if (SIM_TABLE.test(name)) continue;
    if (isStoreTable(name)) storeBytes += d.bytesWritten;
    else {
      bytes += d.bytesWritten;
      inserted += d.inserted;
    }
    const g = perDocGrowth.get(name) ?? { inserted: 0, updated: 0, deleted: 0, bytesWritten: 0, tableGrowth: 0, indexGrowth: 0 };
    for (const k of Object.keys(g) as (keyof TableDelta)[]) g[k] += d[k];
    perDocGrowth.set(name, g);
  }
  r2PerDoc += counts.r2BytesWritten;
  last = now;
  return { value, f: { ...counts, d1BytesWritten: bytes, d1RowsInserted: inserted, storeBytesWritten: storeBytes } };
}

/**
 * Awaits what the request handed to waitUntil, including what those promises hand to it in turn or
 * what is handed after the body was read (one turn of the event loop each time), so that no binding
 * call of this step runs into the next one.
 */
async function drainBackground(): Promise<void> {
  do {
    await Promise.all(background.splice(0));
    await new Promise((resolve) => setTimeout(resolve, 0));
  } while (background.length > 0);
}

async function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: any; bytes: number }> {
  const res = await worker.fetch!(new Request(`http://localhost${path}`, { method: "POST", headers: { "X-Api-Key": issuerKey, "Content-Type": "application/json", ...headers }, body: JSON.stringify(body) }) as any, wenv, ctx);
  const buf = new Uint8Array(await res.arrayBuffer());
  await drainBackground();
  const type = res.headers.get("Content-Type") ?? "";
  return { status: res.status, json: type.includes("json") ? JSON.parse(new TextDecoder().decode(buf)) : null, bytes: buf.length };
}

let issuerKey = "";

function party(rut: string) {
  return { legal_name: "EMPRESA DE PRUEBA SPA", document_type: "RUT", document_number: rut, address: { country: "CL", region: "13", city: "Santiago", address: "Av. Siempre Viva 123" }, tax_information: { activity: "Venta de artículos de oficina", activity_codes: [477399] } };
}
const buyer = { legal_name: "CLIENTE DE PRUEBA LTDA", document_type: "RUT", document_number: "77879240-0", address: { country: "CL", city: "Ñuñoa", address: "Irarrázaval 2401" }, tax_information: { activity: "Comercio" } };
const lines = (n: number) => Array.from({ length: n }, (_, i) => ({ quantity: 1 + (i % 3), unit_price: 1000 + 10 * i, description: `Artículo de prueba número ${i + 1}`, code_unit_of_measure: "UN" }));

interface Kind {
  name: string;
  type: number;
  body: (rut: string, i: number) => unknown;
}

/** Folios of facturas issued so far (each cancellation annuls one of them). */
const facturaFolios: number[] = [];

const KINDS: Kind[] = [
  { name: "factura 33, 1 line", type: 33, body: (rut, i) => ({ invoice_type: "33", invoice_date: nowLocal(), external_reference: `cap-a-${i}`, issuer: party(rut), recipient: buyer, items: lines(1) }) },
  { name: "factura 33, 10 lines", type: 33, body: (rut, i) => ({ invoice_type: "33", invoice_date: nowLocal(), external_reference: `cap-b-${i}`, issuer: party(rut), recipient: buyer, items: lines(10) }) },
  // 60 lines is the most a factura may carry (SII Formato DTE: Detalle occurs 1..60); 100 is refused at intake.
  { name: "factura 33, 60 lines", type: 33, body: (rut, i) => ({ invoice_type: "33", invoice_date: nowLocal(), external_reference: `cap-c-${i}`, issuer: party(rut), recipient: buyer, items: lines(60) }) },
  { name: "boleta 39, 2 lines", type: 39, body: (rut) => ({ invoice_type: "39", invoice_date: nowLocal(), issuer: party(rut), items: lines(2) }) },
  {
    name: "cancellation 61 (ANU)",
    type: 61,
    body: (rut) => ({ invoice_type: "61", reason_code: "ANU", invoice_date: nowLocal(), issuer: party(rut), recipient: buyer, billing_reference: [{ number: facturaFolios.shift(), invoice_type: "33", invoice_date: nowLocal().slice(0, 10) }], items: [{ quantity: 1, unit_price: 1000, description: "Anula factura" }] }),
  },
];

const STEPS = ["intake (POST)", "assign folio", "sign (stamp + XMLDSig)", "envelope: build, sign, store; record SIGNED", "send envelope (upload)", "poll status", "webhook fan-out", "webhook deliveries", "PDF render on read"] as const;
type StepName = (typeof STEPS)[number];

/** One document of `kind` through every step, one at a time, as the queue consumer would run it. */
async function oneDocument(iss: Issuer, kind: Kind, i: number): Promise<{ figures: Map<StepName, StepFigures>; deliveries: number; perDoc: Map<string, TableDelta>; r2: number; sql: string[][] }> {
  perDocGrowth = new Map();
  stepSql = [];
  r2PerDoc = 0;
  const figures = new Map<StepName, StepFigures>();
  // With an Idempotency-Key, as an ERP retrying safely would send it (its record lives 24 hours).
  const intake = await step(() => post(`${iss.base}/invoices`, kind.body(iss.rut, i), { "Idempotency-Key": `cap-${i}-${Date.now()}` }));
  expect(intake.value.status, JSON.stringify(intake.value.json)).toBe(202);
  figures.set("intake (POST)", intake.f);
  const id = intake.value.json.id as string;
  await sizeStore("issuer's store", iss.companyId, storeForId(env, iss.companyId, id)!.ordinal);
  const msgs = meter.take("ISSUANCE_QUEUE");
  expect(msgs).toHaveLength(1);

  // One consumer batch (src/invoices/pipeline/consumer.ts, phases 0–2) for this one document.
  // The document lives in the store its id names; D1 keeps companies, certificates, CAFs.
  const home = storeForId(wenv, iss.companyId, id)!;
  const deps: StepDeps = { db: createDb(wenv.DB), store: home.db, ordinal: home.ordinal, env: wenv, authority, now: () => new Date() };
  const folio = await step(async () => {
    const inv = await reload(deps, id);
    return { inv, alloc: (await allocateFolios(deps, inv.companyId, inv.documentType, [inv.id])).get(inv.id) };
  });
  figures.set("assign folio", folio.f);
  const prepared = await step(() => prepareDocument(deps, folio.value.inv, folio.value.alloc));
  figures.set("sign (stamp + XMLDSig)", prepared.f);
  const envelopeId = partitionedId("env", home.ordinal);
  const stored = await step(async () => {
    const s = await storeEnvelope(deps, iss.companyId, envelopeId, [prepared.value]);
    return { s, moved: await recordSigned(deps, iss.companyId, envelopeId, [prepared.value]) };
  });
  expect(stored.value.moved).toHaveLength(1);
  figures.set("envelope: build, sign, store; record SIGNED", stored.f);
  const sent = await step(async () => {
    await sendPrepared(deps, stored.value.s, [prepared.value], stored.value.moved);
    await enqueueEnvelopePolls(wenv, [{ envelopeId, companyId: iss.companyId, delaySeconds: 0 }]);
  });
  figures.set("send envelope (upload)", sent.f);
  meter.take("ISSUANCE_QUEUE");

  // Polls come in a later batch (a new StepDeps: nothing cached from the batch above).
  const polled = await step(async () => {
    const deps2: StepDeps = { db: createDb(wenv.DB), store: storeForId(wenv, iss.companyId, id)!.db, ordinal: home.ordinal, env: wenv, authority, now: () => new Date() };
    for (let n = 0; ; n++) {
      const { state } = await pollEnvelope(deps2, envelopeId);
      if (state !== "PENDING") break;
      if (n > 20) throw new Error("envelope still pending after 20 polls");
    }
  });
  figures.set("poll status", polled.f);
  const [final] = await storeRows<{ status: string; folio: number }>(iss.companyId, sql`SELECT status, folio FROM invoices WHERE id = ${id}`);
  expect(final?.status).toBe("ACCEPTED");
  if (kind.type === 33) facturaFolios.push(final!.folio);

  // The webhook consumer: the fan-out notice, then its deliveries.
  await relayedNotice(iss.companyId);
  const fanout = await step(() => handleWebhookBatch(batchOf("dte-webhooks", meter.take("WEBHOOK_QUEUE")), wenv));
  figures.set("webhook fan-out", fanout.f);
  const deliveries = meter.take("WEBHOOK_QUEUE");
  const delivered = await step(() => handleWebhookBatch(batchOf("dte-webhooks", deliveries), wenv));
  figures.set("webhook deliveries", delivered.f);
  expect(delivered.f.outboundCalls).toBe(deliveries.length);

  const pdf = await step(() => post(`${iss.base}/invoices/${id}/download-pdf/A4`, undefined));
  expect(pdf.value.status).toBe(200);
  figures.set("PDF render on read", pdf.f);
  return { figures, deliveries: deliveries.length, perDoc: perDocGrowth, r2: r2PerDoc, sql: stepSql };
}

/** The D1 round trips of one measured document, step by step, as SQL text (what each step asks of D1 and why). */
function sqlList(name: string, sql: string[][], which = "the last measured"): string[] {
  const out = [`D1 round trips of ${which} ${name}, per step (statements of one batch joined by ⨾):`, ""];
  STEPS.forEach((s, i) => {
    const trips = sql[i] ?? [];
    out.push(`- ${s}: ${trips.length}`);
    for (const t of trips) out.push(`  - \`${t.length > 220 ? `${t.slice(0, 220)}…` : t}\``);
  });
  return out;
}

/** The D1 round trips of a batched step, tallied by SQL text, most frequent first. */
function sqlTally(name: string, sql: string[], docs: number): string[] {
  const tally = new Map<string, number>();
  for (const t of sql) tally.set(t, (tally.get(t) ?? 0) + 1);
  return [`- ${name}: ${sql.length} round trips for ${docs} documents`, ...[...tally].sort((a, b) => b[1] - a[1]).map(([t, n]) => `  - ${n}× \`${t.length > 220 ? `${t.slice(0, 220)}…` : t}\``)];
}

/** Adds a storage row per table that grew to `storage`; returns the growth of D1's tables and of the stores'. */
function growthRows(name: string, growth: Map<string, TableDelta>, storage: string[]): [number, number] {
  let d1 = 0;
  let stores = 0;
  for (const [table, g] of [...growth].sort()) {
    if (g.tableGrowth + g.indexGrowth === 0 && g.inserted === 0) continue;
    storage.push(`| ${name} | ${table} | ${g.inserted - g.deleted} | ${g.tableGrowth} | ${g.indexGrowth} |`);
    if (isStoreTable(table)) stores += g.tableGrowth + g.indexGrowth;
    else d1 += g.tableGrowth + g.indexGrowth;
  }
  return [d1, stores];
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Counts: the median of the measured documents. Times (1 ms clock resolution in workerd): the mean. */
function medianFigures(all: StepFigures[]): StepFigures {
  const out = { ...zero(), d1BytesWritten: 0, d1RowsInserted: 0, storeBytesWritten: 0 } as StepFigures;
  for (const k of Object.keys(out) as (keyof StepFigures)[]) out[k] = k === "wallMs" || k === "waitMs" ? all.reduce((s, f) => s + f[k], 0) / all.length : median(all.map((f) => f[k]));
  return out;
}

const fmt = (n: number, d = 0) => n.toFixed(d);

/** Worker time = wall − waiting on bindings and outbound calls. */
const cpu = (f: Counts) => Math.max(0, f.wallMs - f.waitMs);

function row(name: string, f: StepFigures, rsaMs: number) {
  return `| ${name} | ${f.d1RoundTrips} | ${f.d1Statements} | ${f.d1RowsRead} | ${f.d1RowsWritten} | ${f.d1RowsInserted} | ${fmt(f.d1BytesWritten)} | ${f.r2ClassA}/${f.r2ClassB} | ${fmt(f.r2BytesWritten)} | ${f.doCalls} | ${f.storeCalls} | ${f.storeStatements} | ${f.storeRowsRead} | ${f.storeRowsWritten} | ${fmt(f.storeBytesWritten)} | ${fmt(f.storeBytesGrown)} | ${f.queueMessages} | ${f.outboundCalls} | ${fmt(cpu(f), 1)} | ${fmt(cpu(f) / rsaMs, 1)} |`;
}

const HEADER = "| step | D1 round trips | D1 statements | rows read | rows written | rows inserted | D1 bytes written | R2 writes/reads | R2 bytes written | folio + directory DO calls | store calls | store statements | store rows read | store rows written | store bytes written | store bytes grown (pages) | queue msgs | outbound HTTP | Worker ms | × RSA sign |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|";

/** Mean of one RSA-2048 PKCS#1 v1.5 signature (SHA-256) of a DTE-sized message. */
async function rsaSignMs(): Promise<number> {
  const key = (await crypto.subtle.generateKey({ name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" }, false, ["sign", "verify"])) as CryptoKeyPair;
  const message = new Uint8Array(2500).fill(65);
  for (let i = 0; i < 50; i++) await crypto.subtle.sign("RSASSA-PKCS1-v1_5", key.privateKey, message);
  const n = 400;
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await crypto.subtle.sign("RSASSA-PKCS1-v1_5", key.privateKey, message);
  return (performance.now() - t0) / n;
}

it("capacity: per-document cost of each step", async () => {
  // Webhook deliveries leave through the global fetch: counted and timed as outbound I/O.
  const outbound = globalThis.fetch;
  globalThis.fetch = ((input: RequestInfo | URL, init?: RequestInit) => meter.externalInStep((req) => outbound(req))(new Request(input, init))) as typeof fetch;
  const iss = await readyIssuer([33, 39, 61], 1000);
  issuerKey = iss.owner.key;
  const hook = receiverUrl("capacity");
  await register(iss.owner, iss.companyId, { url: hook.url, events: ["*"] });
  const rcv = await receiver();
  const address = (await call("GET", `/api/companies/${rcv.companyId}/settings`, { key: rcv.owner.key })).body.reception_email as string;
  await new Promise((r) => setTimeout(r, 2000)); // setup's own queue work (CAF events) settles first
  tables = await schemaOf(env.DB);
  last = await snapshotAll();

  const rsaMs = await rsaSignMs();
  const out: string[] = [];
  out.push(`RSA-2048 signature (PKCS#1 v1.5, SHA-256, 2,500-byte message), mean of 400: ${rsaMs.toFixed(3)} ms`);
  out.push("");
  const storage: string[] = ["| document | table | rows | table bytes | index bytes |", "|---|---|--:|--:|--:|"];
  const totals: string[] = ["| document | D1 bytes (rows + indexes) | store bytes (rows + indexes) | R2 bytes | webhook deliveries | all steps: D1 statements | rows written | folio + directory DO calls | store calls | store statements | store rows written | store bytes grown | queue msgs | Worker ms | × RSA sign |", "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"];
  let n = 0;
  for (const kind of KINDS) {
    const runs: Awaited<ReturnType<typeof oneDocument>>[] = [];
    // The warm-up starts with the company's control cache and the key lookups dropped: a company's first document in an isolate.
    forgetCompanyControl(iss.companyId);
    forgetAccess();
    forgetDirectory();
    for (let r = 0; r <= REPS; r++) runs.push(await oneDocument(iss, kind, n++));
    const measured = runs.slice(1); // the first one warms the isolate's caches (certificate, CAF, SII token)
    out.push(`### ${kind.name}`, "", HEADER);
    let sum = { ...zero(), d1BytesWritten: 0, d1RowsInserted: 0, storeBytesWritten: 0 } as StepFigures;
    for (const s of STEPS) {
      const f = medianFigures(measured.map((m) => m.figures.get(s)!));
      sum = { ...add(sum, f), d1BytesWritten: sum.d1BytesWritten + f.d1BytesWritten, d1RowsInserted: sum.d1RowsInserted + f.d1RowsInserted, storeBytesWritten: sum.storeBytesWritten + f.storeBytesWritten };
      out.push(row(s, f, rsaMs));
    }
    out.push(row("**all steps**", sum, rsaMs), "");
    out.push(...sqlList(kind.name, measured[measured.length - 1]!.sql), "");
    const cold = runs[0]!.figures;
    out.push(`The warm-up ${kind.name}, its company's control cache and the key lookups dropped first (the company's first document in an isolate; the opened certificate and parsed CAF stay cached): D1 round trips/statements per step: ${STEPS.map((s) => `${s} ${cold.get(s)!.d1RoundTrips}/${cold.get(s)!.d1Statements}`).join(", ")}; all steps ${STEPS.reduce((t, s) => t + cold.get(s)!.d1RoundTrips, 0)}/${STEPS.reduce((t, s) => t + cold.get(s)!.d1Statements, 0)}.`, "");
    out.push(...sqlList(kind.name, runs[0]!.sql, "the warm-up (cold)"), "");
    const pick = measured[Math.floor(measured.length / 2)]!;
    const [d1, st] = growthRows(kind.name, pick.perDoc, storage);
    totals.push(`| ${kind.name} | ${d1} | ${st} | ${pick.r2} | ${pick.deliveries} | ${sum.d1Statements} | ${sum.d1RowsWritten} | ${sum.doCalls} | ${sum.storeCalls} | ${sum.storeStatements} | ${sum.storeRowsWritten} | ${fmt(sum.storeBytesGrown)} | ${sum.queueMessages} | ${fmt(cpu(sum), 1)} | ${fmt(cpu(sum) / rsaMs, 1)} |`);
    if (kind.type === 39) out.push(await crossCheck(iss, kind, n++, measured), "");
  }

  await receivedEnvelopes(rcv.companyId, address, rsaMs, { out, storage, totals });

  out.push("### per document, all steps", "", ...totals, "", "### D1 and document store storage per document (net growth, one measured document; `<store>:<table>` names a store's table)", "", ...storage, "");
  out.push(...(await batched(iss, rsaMs, "one webhook endpoint subscribed to every event")));
  // The same without webhooks: a company with no endpoint (its events are still recorded and fanned out).
  const plain = await readyIssuer([39], BATCH_DOCS + 10);
  issuerKey = plain.owner.key;
  await new Promise((r) => setTimeout(r, 2000));
  out.push("", ...(await batched(plain, rsaMs, "no webhook endpoint")));
  if (meter.outsideSteps.length > 0) out.push("", `Outbound calls made outside the steps (the runtime's own consumers, not counted): ${meter.outsideSteps.length}, to ${[...new Set(meter.outsideSteps)].join(", ")}`);
  console.log(`\n${out.join("\n")}\n`);
});

/** Reception: an EnvioDTE of one DTE through the email() handler, one warm-up and REPS measured; its rows of the tables. */
async function receivedEnvelopes(companyId: string, address: string, rsaMs: number, tables: { out: string[]; storage: string[]; totals: string[] }) {
  const signer = await fakeCredentials();
  const caf = await simulatorCaf({ documentType: 33, from: 1, to: 100 });
  const recep: StepFigures[] = [];
  let recepGrowth = new Map<string, TableDelta>();
  let recepR2 = 0;
  for (let r = 0; r <= REPS; r++) {
    const xml = (await envelope([await signedDte(caf, r + 1, signer)], signer)).xml;
    const raw = mailWithEnvelope(address, xml);
    perDocGrowth = new Map();
    r2PerDoc = 0;
    const got = await step(() => worker.email!(emailMessage(raw, address, "p@proveedor.cl"), wenv));
    // The receiver's messages live in its document stores.
    const [rec] = await storeRows<{ outcome: string; documents: number }>(companyId, "SELECT outcome, documents FROM inbound_messages ORDER BY created_at DESC, id DESC LIMIT 1");
    expect(rec).toEqual({ outcome: "STORED", documents: 1 });
    if (r === 0) await sizeStore("receiver's store", companyId, (await partitionsOf(env, companyId))[0]!.ordinal);
    if (r > 0) recep.push(got.f);
    if (r === 1) [recepGrowth, recepR2] = [perDocGrowth, r2PerDoc];
    // Counted above, not run: its events, and the check of each DTE's status at the SII (these
    // DTEs were never sent to it, so the check would retry for 48 hours in the boletas' batches).
    meter.take("WEBHOOK_QUEUE");
    meter.take("ISSUANCE_QUEUE");
  }
  const rf = medianFigures(recep);
  tables.out.push("### received EnvioDTE of 1 DTE (e-mail)", "", HEADER, row("email() intake: parse, verify, store", rf, rsaMs), "");
  const [rd1, rst] = growthRows("received EnvioDTE, 1 DTE", recepGrowth, tables.storage);
  tables.totals.push(`| received EnvioDTE, 1 DTE | ${rd1} | ${rst} | ${recepR2} | – | ${rf.d1Statements} | ${rf.d1RowsWritten} | ${rf.doCalls} | ${rf.storeCalls} | ${rf.storeStatements} | ${rf.storeRowsWritten} | ${fmt(rf.storeBytesGrown)} | ${rf.queueMessages} | ${fmt(cpu(rf), 1)} | ${fmt(cpu(rf) / rsaMs, 1)} |`);
}

/**
 * The step-by-step replay against the real consumer: one more document of `kind` through
 * handleIssuanceBatch as a batch of one must ask D1, R2, the allocator and the queues exactly what
 * the replayed steps (folio, sign, envelope, upload) asked. Then its polls and webhooks are drained.
 */
async function crossCheck(iss: Issuer, kind: Kind, i: number, measured: { figures: Map<StepName, StepFigures> }[]): Promise<string> {
  expect((await post(`${iss.base}/invoices`, kind.body(iss.rut, i))).status).toBe(202);
  const { counts } = await meter.step(() => handleIssuanceBatch(batchOf("dte-issuance", meter.take("ISSUANCE_QUEUE")), wenv, authority));
  const replayed = (["assign folio", "sign (stamp + XMLDSig)", "envelope: build, sign, store; record SIGNED", "send envelope (upload)"] as const).map((s) => medianFigures(measured.map((m) => m.figures.get(s)!))).reduce<Counts>((a, b) => add(a, b), zero());
  const keys = ["d1RoundTrips", "d1Statements", "d1RowsWritten", "r2ClassA", "doCalls", "storeCalls", "storeStatements", "storeRowsWritten", "queueMessages", "outboundCalls"] as const;
  const outbound = meter.outbound;
  for (const k of keys) expect(counts[k], `${k}: the consumer vs the replayed steps (the consumer's outbound calls: ${outbound.join(", ")})`).toBe(replayed[k]);
  for (let pending = meter.take("ISSUANCE_QUEUE"); pending.length > 0; pending = meter.take("ISSUANCE_QUEUE")) await handleIssuanceBatch(batchOf("dte-issuance", pending), wenv, authority);
  await relayedNotice(iss.companyId);
  for (let pending = meter.take("WEBHOOK_QUEUE"); pending.length > 0; pending = meter.take("WEBHOOK_QUEUE")) await handleWebhookBatch(batchOf("dte-webhooks", pending), wenv);
  last = await snapshotAll();
  return `Cross-check: one ${kind.name} through the real consumer (handleIssuanceBatch, a batch of one) made ${keys.map((k) => `${counts[k]} ${k}`).join(", ")}: the same as the replayed steps above.`;
}

/**
 * The fan-out notice of a company's events: since 2026-11-26 a document store's events stay in the
 * store, whose alarm sends the notice naming the store (src/operations/objects/document-store/
 * fanout-notice.ts) from the store's own env, which this meter does not wrap (about one notice per
 * event-writing call, none of them a D1 statement). The same notice is put into the metered queue,
 * uncounted, for every partition of the company, so that the fan-out that follows is measured.
 */
async function relayedNotice(companyId: string): Promise<void> {
  for (const p of await partitionsOf(env, companyId)) if (p.ordinal >= 1) await notifyStore(wenv, companyId, p.ordinal);
}

/** BATCH_DOCS boletas through the real queue consumer in batches of 50: per-document averages and physical D1 growth. */
async function batched(iss: Issuer, rsaMs: number, label: string): Promise<string[]> {
  const boleta = KINDS[3]!;
  const size0 = await physicalSize(env.DB);
  const before = await snapshotAll();
  const steps: [string, Counts][] = [];
  const intake = await meter.step(async () => {
    for (let i = 0; i < BATCH_DOCS; i++) expect((await post(`${iss.base}/invoices`, boleta.body(iss.rut, i))).status).toBe(202);
  });
  steps.push(["intake (POST), one request per document", intake.counts]);
  const trips: Record<"intake" | "consumer" | "polls" | "fan-out" | "deliveries", string[]> = { intake: meter.d1Sql, consumer: [], polls: [], "fan-out": [], deliveries: [] };
  let pending = meter.take("ISSUANCE_QUEUE");
  let consumer = zero();
  let polls = zero();
  for (let round = 0; pending.length > 0; round++) {
    if (round > 30) throw new Error(`${pending.length} messages still pending: ${JSON.stringify(pending).slice(0, 500)}`);
    for (let i = 0; i < pending.length; i += 50) {
      const chunk = pending.slice(i, i + 50);
      const isPoll = (chunk[0] as { type: string }).type === "envelope.poll";
      const { counts } = await meter.step(() => handleIssuanceBatch(batchOf("dte-issuance", chunk), wenv, authority));
      trips[isPoll ? "polls" : "consumer"].push(...meter.d1Sql);
      if (isPoll) polls = add(polls, counts);
      else consumer = add(consumer, counts);
    }
    pending = meter.take("ISSUANCE_QUEUE");
  }
  steps.push(["issuance consumer: folio, sign, envelope, upload (batches of 50)", consumer], ["issuance consumer: polls", polls]);
  await relayedNotice(iss.companyId);
  const accepted = await storeRows(iss.companyId, sql`SELECT id FROM invoices WHERE company_id = ${iss.companyId} AND document_type = 39 AND status = 'ACCEPTED'`);
  expect(accepted.length).toBeGreaterThanOrEqual(BATCH_DOCS);
  let fan = zero();
  let deliver = zero();
  let deliveries = 0;
  for (let pendingHooks = meter.take("WEBHOOK_QUEUE"); pendingHooks.length > 0; pendingHooks = meter.take("WEBHOOK_QUEUE")) {
    for (let i = 0; i < pendingHooks.length; i += 50) {
      const chunk = pendingHooks.slice(i, i + 50);
      const isFanout = chunk.every((m) => (m as { type: string }).type === "fanout");
      const { counts } = await meter.step(() => handleWebhookBatch(batchOf("dte-webhooks", chunk), wenv));
      trips[isFanout ? "fan-out" : "deliveries"].push(...meter.d1Sql);
      if (isFanout) fan = add(fan, counts);
      else {
        deliver = add(deliver, counts);
        deliveries += chunk.length;
      }
    }
  }
  steps.push(["webhook consumer: fan-out", fan], [`webhook consumer: ${deliveries} deliveries`, deliver]);
  // A company new to this run (no webhooks): its store appeared with the load, all of it is growth.
  await sizeStore(`${label}: issuer's store`, iss.companyId, (await partitionsOf(env, iss.companyId))[0]!.ordinal);
  const after = await snapshotAll();
  const size1 = await physicalSize(env.DB);
  let logical = 0;
  let logicalSim = 0;
  let logicalStore = 0;
  for (const [name, d] of diff(before, after)) {
    if (SIM_TABLE.test(name)) logicalSim += d.tableGrowth + d.indexGrowth;
    else if (isStoreTable(name)) logicalStore += d.tableGrowth + d.indexGrowth;
    else logical += d.tableGrowth + d.indexGrowth;
  }
  const per = (x: number) => x / BATCH_DOCS;
  const out = [`### ${BATCH_DOCS} boletas through the real consumers, queue batches of 50, ${label}: per document`, "", "| step | D1 round trips | D1 statements | rows read | rows written | R2 writes/reads | R2 bytes written | folio + directory DO calls | store calls | store statements | store rows read | store rows written | store bytes grown | issuance / webhook queue msgs | outbound HTTP | Worker ms | × RSA sign |", "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"];
  let all = zero();
  for (const [name, c] of steps) {
    all = add(all, c);
    out.push(`| ${name} | ${fmt(per(c.d1RoundTrips), 2)} | ${fmt(per(c.d1Statements), 2)} | ${fmt(per(c.d1RowsRead), 1)} | ${fmt(per(c.d1RowsWritten), 1)} | ${fmt(per(c.r2ClassA), 2)}/${fmt(per(c.r2ClassB), 2)} | ${fmt(per(c.r2BytesWritten))} | ${fmt(per(c.doCalls), 3)} | ${fmt(per(c.storeCalls), 2)} | ${fmt(per(c.storeStatements), 2)} | ${fmt(per(c.storeRowsRead), 1)} | ${fmt(per(c.storeRowsWritten), 1)} | ${fmt(per(c.storeBytesGrown))} | ${fmt(per(c.queueMessages - c.webhookQueueMessages), 2)} / ${fmt(per(c.webhookQueueMessages), 2)} | ${fmt(per(c.outboundCalls), 3)} | ${fmt(per(cpu(c)), 2)} | ${fmt(per(cpu(c)) / rsaMs, 2)} |`);
  }
  out.push(`| **all** | ${fmt(per(all.d1RoundTrips), 2)} | ${fmt(per(all.d1Statements), 2)} | ${fmt(per(all.d1RowsRead), 1)} | ${fmt(per(all.d1RowsWritten), 1)} | ${fmt(per(all.r2ClassA), 2)}/${fmt(per(all.r2ClassB), 2)} | ${fmt(per(all.r2BytesWritten))} | ${fmt(per(all.doCalls), 3)} | ${fmt(per(all.storeCalls), 2)} | ${fmt(per(all.storeStatements), 2)} | ${fmt(per(all.storeRowsRead), 1)} | ${fmt(per(all.storeRowsWritten), 1)} | ${fmt(per(all.storeBytesGrown))} | ${fmt(per(all.queueMessages - all.webhookQueueMessages), 2)} / ${fmt(per(all.webhookQueueMessages), 2)} | ${fmt(per(all.outboundCalls), 3)} | ${fmt(per(cpu(all)), 2)} | ${fmt(per(cpu(all)) / rsaMs, 2)} |`, "");
  out.push(`D1 per boleta: ${fmt(per(logical))} bytes of rows and index entries in the service's tables (+ ${fmt(per(logicalSim))} in the simulator's sim_* tables); physical growth (size_after, every table, pages): ${fmt(per(size1 - size0))} bytes, i.e. ${fmt((size1 - size0) / (logical + logicalSim), 2)}× the logical bytes. The issuer's document store per boleta: ${fmt(per(logicalStore))} bytes of rows and index entries (its index store, which keeps Idempotency-Key records, is not sized).`);
  out.push("", `D1 round trips of the ${BATCH_DOCS} boletas (${label}), by SQL text:`, "", ...Object.entries(trips).flatMap(([k, v]) => sqlTally(k, v, BATCH_DOCS)));
  return out;
}
