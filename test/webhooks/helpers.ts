import { expect } from "vitest";
import { Webhook } from "standardwebhooks";
import { call, type Actor } from "../helpers/api";

/** A request the test receiver recorded (its own type, from receiver.node.ts). */
export type { Recorded as Received } from "./receiver.node";
import type { Recorded as Received } from "./receiver.node";

let counter = 0;
/** A receiver URL whose path no other test uses. */
export function receiverUrl(name: string): { url: string; path: string } {
  const path = `/hooks/${name}-${Date.now().toString(36)}-${(counter++).toString(36)}`;
  return { url: `http://127.0.0.1:4010${path}`, path };
}

export async function behave(path: string, b: { status?: number; delay_ms?: number; body?: string }) {
  const res = await fetch("http://receiver.control/behaviour", { method: "POST", body: JSON.stringify({ path, ...b }) });
  expect(res.status).toBe(200);
}

export async function received(path: string): Promise<Received[]> {
  return (await (await fetch(`http://receiver.control/requests?path=${encodeURIComponent(path)}`)).json()) as Received[];
}

/** Waits until `predicate` holds for the requests the path received (the real queue delivers them). */
export async function until(path: string, predicate: (r: Received[]) => boolean, timeoutMs = 30_000): Promise<Received[]> {
  const start = Date.now();
  for (;;) {
    const r = await received(path);
    if (predicate(r)) return r;
    if (Date.now() - start > timeoutMs) throw new Error(`receiver ${path} got ${r.length} requests: ${JSON.stringify(r.map((x) => JSON.parse(x.body).type))}`);
    await new Promise((res) => setTimeout(res, 150));
  }
}

export const types = (r: Received[]) => r.map((x) => (JSON.parse(x.body) as { type: string }).type);

/** Verifies a recorded delivery with the Standard Webhooks reference library; returns the payload. */
export function verified(secret: string, r: Received): any {
  return new Webhook(secret).verify(r.body, r.headers);
}

export async function register(actor: Actor, companyId: string, body: Record<string, unknown>) {
  const res = await call("POST", `/api/companies/${companyId}/webhooks`, { key: actor.key, json: body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; secret: string; url: string; events: string[] };
}
