/**
 * Webhook endpoints of a company: register, list, read, change, delete, rotate the secret. The secret
 * is shown once (on creation and rotation) and kept sealed with MASTER_KEY, bound to the endpoint id.
 * After a rotation the previous secret keeps signing beside the new one for 24 hours.
 */
import { and, asc, count, eq } from "drizzle-orm";
import type { Db } from "../storage/db/client";
import { webhookEndpoints } from "../storage/db/schema";
import { AppError } from "../lib/errors";
import { base64ToBytes, bytesToBase64 } from "../lib/base64";
import { newId } from "../lib/ids";
import { open, seal } from "../lib/secrets";
import { sealedAs } from "../storage/sealed";
import { suggestion } from "../lib/suggestion";
import { EVENT_TYPES, isEventType } from "./catalog";
import { forgetEndpoints } from "./endpoint-cache";
import { newWebhookSecret } from "./signing";
import { webhookUrlProblem } from "./url-policy";

export type EndpointRow = typeof webhookEndpoints.$inferSelect;
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;
export const MAX_ENDPOINTS_PER_COMPANY = 20;

export interface EndpointInput {
  url?: string;
  events?: string[];
  description?: string | null;
  enabled?: boolean;
}

function checkUrl(env: Env, url: string) {
  const problem = webhookUrlProblem(url, env.ENVIRONMENT === "production");
  if (problem) throw new AppError("WEBHOOK_URL_INVALID", `This URL cannot receive webhooks: ${problem}.`, [{ field: "url", message: problem }]);
}

/** The families of event types (`invoice` for invoice.accepted, …): a filter may name one as `invoice.*`. */
const familyOf = (type: string) => (type.includes(".") ? type.slice(0, type.indexOf(".")) : null);
const FAMILIES = new Set(EVENT_TYPES.filter((t) => t !== "webhook.test").flatMap((t) => familyOf(t) ?? []));
const isFamily = (e: string) => e.endsWith(".*") && FAMILIES.has(e.slice(0, -2));

/** What is wrong with an unknown entry of a filter, with the nearest known type or family. */
function unknownEventMessage(e: string): string {
  const family = e.endsWith(".*");
  const meant = family ? suggestion(e, [...FAMILIES].map((f) => `${f}.*`)) : suggestion(e, EVENT_TYPES);
  return `unknown event ${family ? "family" : "type"} ${e}${meant ? ` (did you mean \`${meant}\`?)` : ""}`;
}

function checkEvents(events: string[]): string[] {
  const unknown = events.filter((e) => e !== "*" && !isEventType(e) && !isFamily(e));
  if (unknown.length > 0) {
    throw new AppError("WEBHOOK_EVENT_UNKNOWN", `Unknown event type(s): ${unknown.join(", ")}. The catalogue is in the OpenAPI document's webhooks section; "*" means all, "invoice.*" a family.`, unknown.map((e) => ({ field: "events", message: unknownEventMessage(e) })));
  }
  if (events.includes("*")) return ["*"];
  // An event type its family already takes is dropped; families and types stay in the order given.
  const families = new Set(events.filter(isFamily).map((e) => e.slice(0, -2)));
  return [...new Set(events.filter((e) => isFamily(e) || !families.has(familyOf(e) ?? "")))];
}

const sealSecret = async (env: Env, endpointId: string, secret: string) => bytesToBase64(await seal(env.MASTER_KEY, new TextEncoder().encode(secret), sealedAs.webhookSecret(endpointId)));
const openSecret = async (env: Env, endpointId: string, sealed: string) => new TextDecoder().decode(await open(env.MASTER_KEY, base64ToBytes(sealed), sealedAs.webhookSecret(endpointId)));

/** Opened secrets by sealed value (per isolate, bounded): a batch of deliveries opens each once. */
const opened = new Map<string, Promise<string>>();
function openCached(env: Env, endpointId: string, sealed: string): Promise<string> {
  let p = opened.get(sealed);
  if (!p) {
    if (opened.size >= 1000) opened.clear();
    opened.set(sealed, (p = openSecret(env, endpointId, sealed)));
    p.catch(() => opened.delete(sealed));
  }
  return p;
}

/** The secrets that sign a delivery now: the current one, and the previous one while it overlaps. */
export async function signingSecrets(env: Env, row: EndpointRow, now = new Date()): Promise<string[]> {
  const secrets = [await openCached(env, row.id, row.secretEnc)];
  if (row.previousSecretEnc && row.previousUntil && Date.parse(row.previousUntil) > now.getTime()) secrets.push(await openCached(env, row.id, row.previousSecretEnc));
  return secrets;
}

/**
 * `company.livemode` is copied onto the endpoint: its deliveries say which mode they come from.
 * `id`: the new endpoint's (createdId: derived from the request's Idempotency-Key claim, so that a
 * retry whose first attempt stored the endpoint answers that one, with its secret, instead of a second).
 */
export async function createEndpoint(db: Db, env: Env, company: { id: string; livemode: boolean }, input: Required<Pick<EndpointInput, "url" | "events">> & EndpointInput, id = newId("whk")) {
  const companyId = company.id;
  checkUrl(env, input.url);
  const events = checkEvents(input.events);
  const [[{ n }], [stored]] = (await db.batch([
    db.select({ n: count() }).from(webhookEndpoints).where(and(eq(webhookEndpoints.companyId, companyId), eq(webhookEndpoints.status, "ACTIVE"))),
    db.select().from(webhookEndpoints).where(and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.companyId, companyId))),
  ])) as [[{ n: number }], EndpointRow[]];
  if (stored) return { row: stored, secret: await openCached(env, stored.id, stored.secretEnc) };
  if (n >= MAX_ENDPOINTS_PER_COMPANY) throw new AppError("WEBHOOK_LIMIT_REACHED", `A company may have at most ${MAX_ENDPOINTS_PER_COMPANY} webhook endpoints; delete one first.`);
  const secret = newWebhookSecret();
  const now = new Date().toISOString();
  const [row] = await db
    .insert(webhookEndpoints)
    .values({ id, companyId, url: input.url, description: input.description ?? null, events: JSON.stringify(events), enabled: input.enabled ?? true, livemode: company.livemode, secretEnc: await sealSecret(env, id, secret), createdAt: now, updatedAt: now })
    .returning();
  forgetEndpoints(companyId);
  return { row: row!, secret };
}

export async function getEndpoint(db: Db, companyId: string, id: string): Promise<EndpointRow> {
  const row = await db.query.webhookEndpoints.findFirst({ where: and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.companyId, companyId), eq(webhookEndpoints.status, "ACTIVE")) });
  if (!row) throw new AppError("WEBHOOK_NOT_FOUND", `Webhook endpoint ${id} does not exist for this company.`);
  return row;
}

export function listEndpoints(db: Db, companyId: string): Promise<EndpointRow[]> {
  return db.select().from(webhookEndpoints).where(and(eq(webhookEndpoints.companyId, companyId), eq(webhookEndpoints.status, "ACTIVE"))).orderBy(asc(webhookEndpoints.createdAt), asc(webhookEndpoints.id));
}

export async function updateEndpoint(db: Db, env: Env, companyId: string, id: string, input: EndpointInput): Promise<EndpointRow> {
  await getEndpoint(db, companyId, id);
  if (input.url !== undefined) checkUrl(env, input.url);
  const patch: Partial<EndpointRow> = { updatedAt: new Date().toISOString() };
  if (input.url !== undefined) patch.url = input.url;
  if (input.events !== undefined) patch.events = JSON.stringify(checkEvents(input.events));
  if (input.description !== undefined) patch.description = input.description;
  if (input.enabled !== undefined) {
    patch.enabled = input.enabled;
    patch.disabledReason = input.enabled ? null : "Disabled by the client";
    if (input.enabled) patch.failingSince = null;
  }
  const [row] = await db.update(webhookEndpoints).set(patch).where(and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.companyId, companyId))).returning();
  forgetEndpoints(companyId);
  return row!;
}

/** Deleted endpoints stop receiving (at once in this isolate, within ENDPOINT_CACHE_MS in others: ./endpoint-cache.ts); their delivery log is kept. */
export async function deleteEndpoint(db: Db, companyId: string, id: string): Promise<void> {
  await getEndpoint(db, companyId, id);
  await db.update(webhookEndpoints).set({ status: "DELETED", enabled: false, updatedAt: new Date().toISOString() }).where(and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.companyId, companyId)));
  forgetEndpoints(companyId);
}

export async function rotateSecret(db: Db, env: Env, companyId: string, id: string, now = new Date()) {
  const current = await getEndpoint(db, companyId, id);
  const secret = newWebhookSecret();
  const previousUntil = new Date(now.getTime() + ROTATION_OVERLAP_MS).toISOString();
  const [row] = await db
    .update(webhookEndpoints)
    .set({ secretEnc: await sealSecret(env, id, secret), previousSecretEnc: current.secretEnc, previousUntil, updatedAt: now.toISOString() })
    .where(and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.companyId, companyId)))
    .returning();
  forgetEndpoints(companyId);
  return { row: row!, secret, previousUntil };
}

/** Whether an endpoint's filter takes an event type. */
export function subscribes(row: Pick<EndpointRow, "events">, type: string): boolean {
  const events = JSON.parse(row.events) as string[];
  if (type === "webhook.test") return events.includes(type);
  const family = familyOf(type);
  return events.includes("*") || events.includes(type) || (family !== null && events.includes(`${family}.*`));
}
