/**
 * Bench-only worker (bench/folio.bench.mjs). It binds the production FolioAllocator class and
 * exposes a few loopback routes; each /alloc request triggers a batch of allocations through the
 * Durable Object stub.
 */
import { FolioAllocator } from "../../src/folios/allocator";
import { folioAllocatorFor, type AllocateResult } from "../../src/folios/allocator-api";

export { FolioAllocator };

type BenchEnv = Pick<Env, "DB" | "FOLIO_ALLOCATOR">;

function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
}

export default {
  async fetch(request: Request, env: BenchEnv): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname === "/health") return json({ ok: true });
    const body = request.method === "POST" ? ((await request.json()) as Record<string, unknown>) : {};
    const company = String(body.company ?? url.searchParams.get("company") ?? "");
    const documentType = String(body.documentType ?? url.searchParams.get("documentType") ?? "33");
    const stub = folioAllocatorFor(env.FOLIO_ALLOCATOR, company, documentType);
    switch (url.pathname) {
      case "/setup": {
        // D1 migrations of the project (sent by the bench script), so ENU rows reach event_outbox.
        for (const stmt of body.statements as string[]) await env.DB.prepare(stmt).run();
        return json({ ok: true });
      }
      case "/range":
        return json(
          await stub.addRange({
            cafId: String(body.cafId),
            from: Number(body.from),
            to: Number(body.to),
            authorizedAt: "2026-11-01",
            expiresAt: null,
          }),
        );
      case "/alloc": {
        // mode "many": the ids are split into chunks of rpcBatch, one allocateMany RPC per chunk,
        // all chunks concurrently. mode "single": one allocate RPC per id, all concurrently.
        const ids = body.ids as string[];
        const rpcBatch = Math.max(1, Number(body.rpcBatch ?? ids.length));
        let results: AllocateResult[];
        if (body.mode === "many") {
          const chunks: string[][] = [];
          for (let i = 0; i < ids.length; i += rpcBatch) chunks.push(ids.slice(i, i + rpcBatch));
          results = (await Promise.all(chunks.map((c) => stub.allocateMany(c)))).flat();
        } else {
          results = await Promise.all(ids.map((id) => stub.allocate(id)));
        }
        // Compact answer: folio per id, or the failure reason.
        return json(results.map((r) => (r.ok ? r.folio : r.reason)));
      }
      case "/status":
        return json(await stub.status());
      case "/outbox": {
        const rows = await env.DB.prepare("SELECT dedupe_key, payload FROM event_outbox WHERE company_id = ? ORDER BY dedupe_key")
          .bind(company)
          .all();
        return json(rows.results);
      }
      default:
        return json({ error: "not found" }, 404);
    }
  },
} satisfies ExportedHandler<BenchEnv>;
