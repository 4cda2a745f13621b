import type { Context } from "hono";

/** Catalogs change only with a deploy: clients and shared caches may keep them an hour. */
export const CATALOG_CACHE_CONTROL = "public, max-age=3600, stale-while-revalidate=86400";

async function digest(text: string): Promise<string> {
  const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  let hex = "";
  for (const b of hash.subarray(0, 12)) hex += b.toString(16).padStart(2, "0");
  return `"${hex}"`;
}

/** True when an If-None-Match header (a list, weak or strong, or `*`) matches the ETag. */
export function matchesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(",").some((t) => {
    const v = t.trim().replace(/^W\//, "");
    return v === "*" || v === etag;
  });
}

/**
 * Answers `body` as JSON with an ETag (hash of the body) and Cache-Control, or 304 without a body
 * when the client's If-None-Match already names it.
 */
export async function cachedJson(c: Context, body: unknown): Promise<Response> {
  const text = JSON.stringify(body);
  const etag = await digest(text);
  const headers = { ETag: etag, "Cache-Control": CATALOG_CACHE_CONTROL, Vary: "Accept-Encoding" };
  if (matchesEtag(c.req.header("If-None-Match"), etag)) return c.body(null, 304, headers);
  return c.body(text, 200, { ...headers, "Content-Type": "application/json; charset=UTF-8" });
}
