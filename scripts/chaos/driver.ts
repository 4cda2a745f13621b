/**
 * The chaos run (issue 15): companies of several clients issue documents of mixed types (some of
 * them cancelled by notes) from many concurrent clients while the fault hook (scripts/chaos/hook.ts) and
 * the simulated SII's scenario control inject faults at random; then it waits for quiescence and
 * checks the invariants (invariants.ts). Runs against any `fetch` to the service: `npm run chaos`
 * (scripts/chaos/run.ts, over HTTP against `wrangler dev`) and test/chaos/chaos.test.ts (in workerd).
 */
import { checkInvariants, FINAL, type ChaosReport, type DocumentView, type ReceivedEvent } from "./invariants";
import { computeDv } from "../../src/countries/cl/documents/rut";
import { seeded } from "./hook";

export type Fetch = (path: string, init?: RequestInit) => Promise<Response>;

export interface ChaosOptions {
  fetch: Fetch;
  /** One OWNER key per client; companies are spread over them. */
  keys: string[];
  companies: number;
  documents: number;
  concurrency: number;
  seed: number;
  /** A signing certificate for every company (the simulator accepts a self-signed one). */
  pfx: Uint8Array;
  pfxPassword: string;
  /** Webhook receiver: the URL for a company, and what it received so far. */
  receiver: { url(companyId: string): string; events(): Promise<ReceivedEvent[]> };
  /** Fault probabilities and budgets sent to the hook (see FaultPlan). */
  faults: Record<string, unknown>;
  /** Mean time between SII scenario changes (ms); 0: none. */
  siiScenarioEveryMs: number;
  /** Give up waiting for quiescence after this long. */
  quiescenceTimeoutMs: number;
  /** Called while waiting (e.g. to fire the cron trigger); optional. */
  tick?: () => Promise<void>;
  log?: (line: string) => void;
}

export interface ChaosResult {
  report: ChaosReport;
  injected: Record<string, number>;
  sii_scenarios: Record<string, number>;
  client_errors: Record<string, number>;
  issue_seconds: number;
  recovery_seconds: number;
  quiescent: boolean;
}

interface Company {
  id: string;
  rut: string;
  key: string;
  webhook: string;
  /** Accepted facturas not yet cancelled, candidates for a cancelling note. */
  cancellable: string[];
}

const TYPES = ["33", "34", "39", "61"];

export async function runChaos(options: ChaosOptions): Promise<ChaosResult> {
  const o = { ...options, fetch: patient(options.fetch) };
  const random = seeded(o.seed);
  const log = o.log ?? (() => undefined);
  const perType = Math.ceil(o.documents / o.companies) + 20;
  const companies: Company[] = [];
  for (let i = 0; i < o.companies; i++) companies.push(await setUpCompany(o, o.keys[i % o.keys.length]!, i, perType, random));
  log(`${companies.length} companies of ${o.keys.length} clients ready (${perType} folios of each of ${TYPES.join(", ")})`);

  const plan = { seed: o.seed, until: Date.now() + 24 * 3600_000, ...o.faults };
  await control(o.fetch, "/__chaos/plan", plan);
  // The plan lives in the Worker's memory: a reload (wrangler dev rebuilds when a source file
  // changes) drops it. Each tick checks, sets it again and carries the counts of the lost isolate.
  const carried: Record<string, number> = {};
  let lastSeen: Record<string, number> = {};
  const keepPlan = async () => {
    const now = (await (await o.fetch("/__chaos/plan")).json()) as { plan: unknown; injected: Record<string, number> };
    if (now.plan) {
      lastSeen = now.injected;
      return;
    }
    for (const [k, v] of Object.entries(lastSeen)) carried[k] = (carried[k] ?? 0) + v;
    lastSeen = {};
    log("the Worker was reloaded and lost the fault plan; setting it again");
    await control(o.fetch, "/__chaos/plan", plan);
  };
  const scenarios: Record<string, number> = {};
  let issuing = true;
  let lastScenarioAt = 0;
  const siiChaos = (async () => {
    while (issuing && o.siiScenarioEveryMs > 0) {
      await sleep(o.siiScenarioEveryMs * (0.5 + random()));
      if (!issuing) break;
      try {
        await keepPlan();
        const mode = await siiScenario(o.fetch, companies, random);
        scenarios[mode] = (scenarios[mode] ?? 0) + 1;
        lastScenarioAt = Date.now();
      } catch (e) {
        log(`SII scenario not set: ${String(e)}`);
      }
    }
  })();

  const started = Date.now();
  const issued: string[] = [];
  const clientErrors: Record<string, number> = {};
  let next = 0;
  await Promise.all(
    Array.from({ length: o.concurrency }, async () => {
      while (next < o.documents) {
        const i = next++;
        const company = companies[Math.floor(random() * companies.length)]!;
        const r = await issueOne(o.fetch, company, i, random);
        if (r.id) issued.push(r.id);
        else clientErrors[r.error!] = (clientErrors[r.error!] ?? 0) + 1;
        if (i % 500 === 499) log(`${i + 1}/${o.documents} posted`);
      }
    }),
  );
  issuing = false;
  await siiChaos;
  const issueSeconds = (Date.now() - started) / 1000;
  log(`${issued.length} documents accepted for processing in ${issueSeconds.toFixed(1)} s; faults stop now`);

  // The last fault: the hook stops, the SII's scenarios are cleared.
  const hook = (await (await o.fetch("/__chaos/plan")).json()) as { injected: Record<string, number>; last_fault_at: string | null };
  for (const [k, v] of Object.entries(carried)) hook.injected[k] = (hook.injected[k] ?? 0) + v;
  await control(o.fetch, "/__chaos/plan", {});
  // Each client's scenarios are its own (outside local development the simulator keys them by client).
  for (const key of o.keys) await o.fetch("/simulator/sii/scenario", { method: "DELETE", headers: { "X-Api-Key": key } });
  const lastFault = Math.max(hook.last_fault_at ? Date.parse(hook.last_fault_at) : 0, lastScenarioAt, Date.now());

  const quiescent = await untilQuiescent(o, companies, issued.length, log);
  const recoverySeconds = (Date.now() - lastFault) / 1000;
  const documents = (await Promise.all(companies.map((c) => listDocuments(o.fetch, c)))).flat();
  const report = checkInvariants({ issued, documents, received: await o.receiver.events() });
  if (!quiescent) report.failures.push(`not quiescent after ${o.quiescenceTimeoutMs / 1000} s`);
  return { report, injected: hook.injected, sii_scenarios: scenarios, client_errors: clientErrors, issue_seconds: issueSeconds, recovery_seconds: recoverySeconds, quiescent };
}

// ---- setup ---------------------------------------------------------------------------------------

async function setUpCompany(o: ChaosOptions, key: string, i: number, perType: number, random: () => number): Promise<Company> {
  const body = String(60_000_000 + Math.floor(random() * 9_000_000) + i);
  const rut = `${body}-${computeDv(body)}`;
  const company = await expectJson(o.fetch, "/api/companies", key, 201, {
    legal_name: `CHAOS ${i} SPA`,
    tax_identification_document_code: "RUT",
    tax_identification_document_number: rut,
    country: "CL",
    start_activities_date: "2020-01-01",
  });
  const id = company.id_company as string;
  const form = new FormData();
  form.append("certificate", new File([o.pfx as Uint8Array<ArrayBuffer>], "firma.pfx"));
  form.append("password", o.pfxPassword);
  const cert = await o.fetch(`/api/companies/${id}/certificates`, { method: "POST", headers: { "X-Api-Key": key }, body: form });
  if (cert.status !== 201) throw new Error(`certificate upload: ${cert.status} ${await cert.text()}`);
  for (const type of TYPES) await expectJson(o.fetch, `/api/companies/${id}/enumeration/refetch`, key, 201, { document_type: type, quantity: Math.min(10_000, perType) });
  const hook = await expectJson(o.fetch, `/api/companies/${id}/webhooks`, key, 201, { url: o.receiver.url(id), events: ["*"], description: "chaos" });
  return { id, rut, key, webhook: hook.id as string, cancellable: [] };
}

async function expectJson(fetch: Fetch, path: string, key: string, status: number, json: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(path, { method: "POST", headers: { "X-Api-Key": key, "Content-Type": "application/json" }, body: JSON.stringify(json) });
  if (res.status !== status) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

async function control(fetch: Fetch, path: string, json: unknown) {
  const res = await fetch(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(json) });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()} (is the service the chaos entry, scripts/chaos/worker.ts?)`);
  return res.json();
}

// ---- faults at the SII ---------------------------------------------------------------------------

/**
 * One random scenario of the simulated SII, set with the key of a company's client: an outage or slow
 * verdicts for that client's companies, rejections or objections for the company.
 */
async function siiScenario(fetch: Fetch, companies: Company[], random: () => number): Promise<string> {
  const { rut, key } = companies[Math.floor(random() * companies.length)]!;
  const failures = ["http503", "error500", "reset"];
  const pick = random();
  const body =
    pick < 0.35
      ? { mode: "down", count: 1 + Math.floor(random() * 6), failure: failures[Math.floor(random() * 3)] }
      : pick < 0.6
        ? { mode: "delay", count: 1 + Math.floor(random() * 5), polls: 1 + Math.floor(random() * 3) }
        : pick < 0.85
          ? { mode: "reject", count: 1 + Math.floor(random() * 3), rut }
          : { mode: "object", count: 1 + Math.floor(random() * 3), rut };
  const res = await fetch("/simulator/sii/scenario", { method: "POST", headers: { "Content-Type": "application/json", "X-Api-Key": key }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`scenario ${JSON.stringify(body)}: ${res.status} ${await res.text()}`);
  return body.mode;
}

// ---- issuing -------------------------------------------------------------------------------------

function today(): string {
  return new Date().toLocaleString("sv-SE", { timeZone: "America/Santiago" }).slice(0, 19);
}

const ISSUER = (rut: string) => ({
  legal_name: "CHAOS SPA",
  document_type: "RUT",
  document_number: rut,
  address: { country: "CL", city: "Santiago", address: "Calle 1" },
  tax_information: { activity: "Servicios", activity_codes: [620200] },
});
const UNLISTED = { legal_name: "CLIENTE DE PRUEBA LTDA", document_type: "RUT", document_number: "77879240-0", address: { country: "CL", city: "Ñuñoa", address: "Irarrázaval 2401" }, tax_information: { activity: "Comercio" } };
/** A buyer with an exchange address in the (simulated) taxpayer directory: its documents are mailed to it. */
const LISTED = { ...UNLISTED, legal_name: "COMERCIAL LOS ANDES SPA", document_number: "76086428-5" };
/** One document in 8 goes to the listed buyer (each one mailed: an envelope signed and a PDF rendered). */
const recipientOf = (i: number) => (i % 8 === 0 ? LISTED : UNLISTED);

function documentBody(type: string, rut: string, i: number, original?: { folio: number; buyer: string }) {
  const base = { invoice_date: today(), external_reference: `chaos-${i}-${type}`, issuer: ISSUER(rut) };
  if (type === "39") return { ...base, invoice_type: "39", items: [{ quantity: 1, unit_price: 1000 + (i % 97), description: "Pan amasado" }] };
  // A note goes to the buyer of the factura it cancels.
  const RECIPIENT = original ? (original.buyer === LISTED.document_number ? LISTED : UNLISTED) : recipientOf(i);
  if (type === "34") return { ...base, invoice_type: "34", recipient: RECIPIENT, items: [{ quantity: 3, unit_price: 12000, description: "Servicio exento" }] };
  if (type === "61")
    return {
      ...base,
      invoice_type: "61",
      recipient: RECIPIENT,
      reason_code: "ANU",
      billing_reference: [{ number: original!.folio, invoice_type: "33", invoice_date: today().slice(0, 10), reason: "Anula factura" }],
      // A cancellation of our own document carries its exact total (issue 18): the factura's 35,700 on one exempt line.
      items: [{ quantity: 1, unit_price: 35700, description: "Anula factura", taxes: [{ type: "EXE" }] }],
    };
  return { ...base, invoice_type: "33", recipient: RECIPIENT, items: [{ quantity: 2, unit_price: 15000, description: "Servicio mensual", code_unit_of_measure: "UN" }] };
}

/** One document (a cancelling note for about 1 in 10, when an accepted factura is at hand), retried on 5xx with its Idempotency-Key. */
async function issueOne(fetch: Fetch, company: Company, i: number, random: () => number): Promise<{ id?: string; error?: string }> {
  const pick = random();
  let type = pick < 0.5 ? "33" : pick < 0.7 ? "39" : pick < 0.9 ? "34" : "61";
  let original: { id: string; folio: number; buyer: string } | undefined;
  if (type === "61") {
    original = await cancellable(fetch, company);
    if (!original) type = "33";
  }
  const body = JSON.stringify(documentBody(type, company.rut, i, original));
  const headers = { "X-Api-Key": company.key, "Content-Type": "application/json", "Idempotency-Key": `chaos-${company.id}-${i}` };
  for (let attempt = 0; ; attempt++) {
    let res: Response;
    try {
      res = await fetch(`/api/companies/${company.id}/invoices`, { method: "POST", headers, body });
    } catch (e) {
      if (attempt > 20) return { error: `network: ${String(e)}` };
      await sleep(200);
      continue;
    }
    const json = (await res.json().catch(() => ({}))) as { id?: string; error?: { code: string } };
    if (res.status === 202) {
      if (type === "33") company.cancellable.push(json.id!);
      return { id: json.id };
    }
    if (res.status === 429 && attempt < 200) {
      // Over a rate limit (issue 15): a well-behaved client waits as long as Retry-After says.
      await sleep(1000 * Math.min(60, Number(res.headers.get("Retry-After") ?? 1) || 1));
      continue;
    }
    if (res.status >= 500 && attempt < 20) {
      await sleep(200 * (attempt + 1));
      continue;
    }
    // A claim left unsettled by a failed attempt is taken over once its lease ends (CLAIM_LEASE_MS, 60 s): a patient client outlasts it.
    if (json.error?.code === "IDEMPOTENCY_KEY_IN_USE" && attempt < 60) {
      await sleep(Math.max(1000 * (Number(res.headers.get("Retry-After")) || 1), 200 * Math.min(attempt + 1, 10)));
      continue;
    }
    return { error: `${res.status} ${json.error?.code ?? ""}` };
  }
}

/** An accepted factura of the company not yet cancelled (taken out of the pool). */
async function cancellable(fetch: Fetch, company: Company): Promise<{ id: string; folio: number; buyer: string } | undefined> {
  for (let tries = 0; tries < 3 && company.cancellable.length > 0; tries++) {
    const id = company.cancellable.shift()!;
    const res = await fetch(`/api/companies/${company.id}/invoices/${id}`, { headers: { "X-Api-Key": company.key } });
    if (!res.ok) continue;
    const doc = (await res.json()) as { status: string; folio: number | null; recipient: { tax_id: string } };
    if (doc.status === "ACCEPTED" && doc.folio !== null) return { id, folio: doc.folio, buyer: doc.recipient.tax_id };
    if (!(FINAL as readonly string[]).includes(doc.status)) company.cancellable.push(id); // not yet: later
  }
  return undefined;
}

// ---- the end -------------------------------------------------------------------------------------

async function total(fetch: Fetch, company: Company, path: string): Promise<number> {
  const res = await fetch(`/api/companies/${company.id}/${path}`, { headers: { "X-Api-Key": company.key } });
  if (!res.ok) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { total: number }).total;
}

/** Until no document is in progress, no delivery pending and every final document's event arrived. */
async function untilQuiescent(o: ChaosOptions, companies: Company[], issued: number, log: (l: string) => void): Promise<boolean> {
  const started = Date.now();
  let lastTick = Date.now();
  for (;;) {
    let busy = 0;
    let pending = 0;
    const byStatus: Record<string, number> = {};
    try {
      for (const c of companies) {
        for (const s of ["RECEIVED", "GENERATED", "SIGNED", "SENT"]) {
          const n = await total(o.fetch, c, `invoices?status=${s}&per_page=1`);
          busy += n;
          if (n) byStatus[s] = (byStatus[s] ?? 0) + n;
        }
        pending += await total(o.fetch, c, `webhooks/${c.webhook}/deliveries?status=PENDING&per_page=1`);
      }
    } catch (e) {
      busy = -1; // the API itself failed: keep waiting
      log(`status check failed: ${String(e)}`);
    }
    if (busy === 0 && pending === 0) {
      const documents = (await Promise.all(companies.map((c) => listDocuments(o.fetch, c)))).flat();
      const report = checkInvariants({ issued: [], documents, received: await o.receiver.events() });
      if (documents.length >= issued && report.webhooks.lost.length === 0) return true;
      await sleep(2000);
    }
    if (Date.now() - started > o.quiescenceTimeoutMs) return false;
    if (o.tick && Date.now() - lastTick > 30_000) {
      lastTick = Date.now();
      await o.tick();
      log(`waiting: ${busy} documents in progress ${JSON.stringify(byStatus)}, ${pending} deliveries pending (${Math.round((Date.now() - started) / 1000)} s)`);
    }
    await sleep(500);
  }
}

async function listDocuments(fetch: Fetch, company: Company): Promise<DocumentView[]> {
  const out: DocumentView[] = [];
  for (let page = 1; ; page++) {
    const res = await fetch(`/api/companies/${company.id}/invoices?per_page=100&page=${page}`, { headers: { "X-Api-Key": company.key } });
    if (!res.ok) throw new Error(`list: ${res.status} ${await res.text()}`);
    const body = (await res.json()) as { data: DocumentView[]; last_page: number };
    out.push(...body.data);
    if (page >= body.last_page) return out;
  }
}

// ---- small helpers -------------------------------------------------------------------------------

/**
 * A fetch that tries again when the connection itself fails (the local dev server drops one now and
 * then under load): every call of the driver is safe to repeat (issuance carries an Idempotency-Key).
 */
function patient(fetch: Fetch): Fetch {
  return async (path, init) => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await fetch(path, init);
      } catch (e) {
        if (attempt >= 10) throw e;
        await sleep(250 * (attempt + 1));
      }
    }
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

