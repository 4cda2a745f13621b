/**
 * The test runtime's outbound fetch handler (miniflare `outboundService`, running in Node): a local
 * webhook receiver. Every request the Worker sends to any host other than `receiver.control` is
 * recorded and answered as the path's behaviour says (status, delay before answering, body).
 * Tests (inside workerd) drive it over HTTP at `http://receiver.control/`:
 *   POST /behaviour {path, status?, delay_ms?, body?}   GET /requests?path=…   (recorded, oldest first)
 * Paths are unique per test, so files running in parallel do not see each other's requests.
 */
export interface Recorded {
  url: string;
  path: string;
  method: string;
  headers: Record<string, string>;
  body: string;
  at: number;
}
interface Behaviour {
  status: number;
  delayMs: number;
  body: string;
}

const recorded: Recorded[] = [];
const behaviours = new Map<string, Behaviour>();

async function control(req: Request, url: URL): Promise<Response> {
  if (req.method === "POST" && url.pathname === "/behaviour") {
    const b = (await req.json()) as { path: string; status?: number; delay_ms?: number; body?: string };
    behaviours.set(b.path, { status: b.status ?? 200, delayMs: b.delay_ms ?? 0, body: b.body ?? "ok" });
    return Response.json({ ok: true });
  }
  if (req.method === "GET" && url.pathname === "/requests") {
    const path = url.searchParams.get("path");
    return Response.json(recorded.filter((r) => r.path === path));
  }
  return new Response("unknown control call", { status: 404 });
}

export async function webhookReceiver(req: Request): Promise<Response> {
  const url = new URL(req.url);
  if (url.hostname === "receiver.control") return control(req, url);
  const body = await req.text();
  recorded.push({ url: req.url, path: url.pathname, method: req.method, headers: headersOf(req.headers), body, at: Date.now() });
  const b = behaviours.get(url.pathname) ?? { status: 200, delayMs: 0, body: "ok" };
  if (b.delayMs > 0) await new Promise((r) => setTimeout(r, b.delayMs));
  return new Response(b.status === 204 || b.status === 304 ? null : b.body, { status: b.status });
}

/** A plain object of the headers (Headers' iterator is not in every type set the tests compile with). */
function headersOf(h: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  h.forEach((v, k) => (out[k] = v));
  return out;
}
