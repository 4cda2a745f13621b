/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): the secret is `whsec_` + base64 of
 * 32 random bytes; each request carries `webhook-id`, `webhook-timestamp` (Unix seconds) and
 * `webhook-signature` = space-separated `v1,<base64 HMAC-SHA256(secret, "{id}.{timestamp}.{body}")>`,
 * one per secret in force (two while a rotated secret overlaps). Any receiver library of the
 * specification verifies it; the tests use the `standardwebhooks` package as the independent check.
 */
import { base64ToBytes, bytesToBase64 } from "../lib/base64";

const PREFIX = "whsec_";
const encoder = new TextEncoder();

export function newWebhookSecret(): string {
  return PREFIX + bytesToBase64(crypto.getRandomValues(new Uint8Array(32)));
}

function secretBytes(secret: string): Uint8Array<ArrayBuffer> {
  return base64ToBytes(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret);
}

/** Imported HMAC keys by secret (per isolate, bounded). */
const keys = new Map<string, Promise<CryptoKey>>();
function hmacKey(secret: string): Promise<CryptoKey> {
  let k = keys.get(secret);
  if (!k) {
    if (keys.size >= 1000) keys.clear();
    keys.set(secret, (k = crypto.subtle.importKey("raw", secretBytes(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"])));
    k.catch(() => keys.delete(secret));
  }
  return k;
}

export async function signature(secret: string, id: string, timestamp: number, body: string): Promise<string> {
  const key = await hmacKey(secret);
  const mac = await crypto.subtle.sign("HMAC", key, encoder.encode(`${id}.${timestamp}.${body}`));
  return `v1,${bytesToBase64(mac)}`;
}

/** The three headers of one delivery attempt, signed with every secret in force. */
export async function signedHeaders(secrets: string[], id: string, timestamp: number, body: string): Promise<Record<string, string>> {
  const signatures = await Promise.all(secrets.map((s) => signature(s, id, timestamp, body)));
  return { "webhook-id": id, "webhook-timestamp": String(timestamp), "webhook-signature": signatures.join(" ") };
}
