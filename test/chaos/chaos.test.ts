import { env, exports } from "cloudflare:workers";
import { afterAll, describe, expect, it } from "vitest";
import { newOwner } from "../helpers/api";
import { makeFakeCertificate, makeFakePfx } from "../helpers/fake-certificates";
import { received } from "../webhooks/helpers";
import { runChaos } from "../../scripts/chaos/driver";
import { checkInvariants, formatReport, type DocumentView, type ReceivedEvent } from "../../scripts/chaos/invariants";

/**
 * The short, seeded version of `npm run chaos`: the same driver and invariants, a few
 * dozen documents, the fault hook in the test Worker (vitest.config.ts builds it from the chaos entry, scripts/chaos/worker.ts)
 * with small budgets, the simulated SII's scenarios at random. Webhooks go to the recording receiver.
 * CHAOS_DOCUMENTS (vitest.config.ts) is 30, and 300 under `npm run test:full`.
 */
const fetchWorker = (path: string, init?: RequestInit) => exports.default.fetch(new Request(`http://localhost${path}`, init));
const SEED = 15_2026;
const DOCUMENTS = Number(env.CHAOS_DOCUMENTS ?? "30");
const hookPath = (companyId: string) => `/hooks/chaos-${SEED}-${companyId}`;
const paths: string[] = [];

const keys: string[] = [];

afterAll(async () => {
  await fetchWorker("/__chaos/plan", { method: "POST", body: "{}" });
  for (const key of keys) await fetchWorker("/simulator/sii/scenario", { method: "DELETE", headers: { "X-Api-Key": key } });
});

describe("chaos run, short", () => {
  it("every document ends final, no folio twice or skipped without cause, no webhook event lost", async () => {
    keys.push((await newOwner("Chaos A")).key, (await newOwner("Chaos B")).key);
    const cert = await makeFakeCertificate({ rut: "11111111-1", notBefore: new Date(Date.now() - 86_400_000), notAfter: new Date(Date.now() + 365 * 86_400_000) });
    const result = await runChaos({
      fetch: fetchWorker,
      keys,
      companies: 3,
      documents: DOCUMENTS,
      concurrency: 5,
      seed: SEED,
      pfx: makeFakePfx(cert, "pw", "modern"),
      pfxPassword: "pw",
      receiver: {
        url: (id) => {
          paths.push(hookPath(id));
          return `http://127.0.0.1:4010${hookPath(id)}`;
        },
        events: async () => (await Promise.all(paths.map((p) => received(p)))).flat().map(toEvent),
      },
      faults: {
        d1: 0.03,
        r2: 0.05,
        store: 0.2,
        duplicate: 0.15,
        reorder: 0.15,
        kill: 0.02,
        do_restart: 0.2,
        after: 0.5,
        scopes: ["queue", "scheduled"],
        budget: { d1: 6, r2: 4, store: 8, duplicate: 6, reorder: 6, kill: 3, do_restart: 4 },
      },
      siiScenarioEveryMs: 1500,
      quiescenceTimeoutMs: 5_000 * DOCUMENTS,
    });
    const text = formatReport(result.report, { injected: result.injected, sii_scenarios: result.sii_scenarios, client_errors: result.client_errors });
    console.log(text);
    expect(result.report.failures, text).toEqual([]);
    expect(result.quiescent, text).toBe(true);
    expect(result.report.documents, text).toBe(DOCUMENTS);
    // the faults did happen (the run is not vacuous)
    expect(Object.values(result.injected).reduce((a, b) => a + b, 0), text).toBeGreaterThan(0);
    // and among them calls on the document stores and the control directory failed, before or after their work
    expect(result.injected.store, text).toBeGreaterThan(0);
    expect(result.client_errors, text).toEqual({});
    // Accepted facturas carry their delivery to the buyer (the check above is not vacuous).
    expect(Object.values(result.report.buyer_deliveries).reduce((a, b) => a + b, 0), text).toBeGreaterThan(0);
  }, 10_000 * DOCUMENTS);

  it("the delivery invariant: an accepted factura without a delivery, or one FAILED, fails the run; boletas and unfinished ones take none", () => {
    const doc = (id: string, over: Partial<DocumentView>): DocumentView => ({ id, company_id: "c", invoice_type: "33", status: "ACCEPTED", folio: Number(id.slice(1)), fiscal_status: "EPR", fiscal_message: null, ...over });
    const events = (docs: DocumentView[]) => docs.filter((d) => d.status === "ACCEPTED").map((d) => ({ webhook_id: `w${d.id}`, type: "invoice.accepted", data_id: d.id }));
    const docs = [doc("d1", { buyer_delivery: { state: "SENT" } }), doc("d2", { buyer_delivery: null }), doc("d3", { buyer_delivery: { state: "FAILED" } }), doc("b1", { invoice_type: "39", folio: 1, buyer_delivery: null }), doc("d4", { buyer_delivery: { state: "PENDING" } })];
    const r = checkInvariants({ issued: docs.map((d) => d.id), documents: docs, received: events(docs) });
    expect(r.buyer_deliveries).toEqual({ SENT: 1, NONE: 1, FAILED: 1, PENDING: 1 });
    expect(r.failures).toEqual(["1 accepted documents whose delivery to the buyer never started: d2", "1 deliveries to the buyer FAILED: d3"]);
    const fine = [docs[0]!, docs[3]!, { ...docs[4]!, id: "d2", folio: 2 }];
    expect(checkInvariants({ issued: fine.map((d) => d.id), documents: fine, received: events(fine) }).failures).toEqual([]);
  });
});

function toEvent(r: { headers: Record<string, string>; body: string }): ReceivedEvent {
  const body = JSON.parse(r.body) as { type: string; data?: { id?: string } };
  return { webhook_id: r.headers["webhook-id"]!, type: body.type, data_id: body.data?.id ?? null };
}
