/**
 * The health report: each binding probed (D1 answers a query, R2 a HEAD, the folio allocator, the
 * document store and the control directory Durable Objects an RPC each; queue producers cannot be probed without sending, so they are reported as bound or
 * not), with the environment and the SII mode. Each probe has a deadline; nothing is written.
 */
import { folioAllocatorFor } from "../folios/allocator-api";

export type CheckStatus = "ok" | "error";
export interface Check {
  status: CheckStatus;
  /** Why a probe failed (an error message, never configuration values). */
  error?: string;
}

const PROBE_DEADLINE_MS = 3000;

async function probe(work: () => Promise<unknown>): Promise<Check> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([work(), new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${PROBE_DEADLINE_MS} ms`)), PROBE_DEADLINE_MS)))]);
    return { status: "ok" };
  } catch (e) {
    return { status: "error", error: (e instanceof Error ? e.message : String(e)).slice(0, 200) };
  } finally {
    clearTimeout(timer);
  }
}

/** Whether a queue producer binding is there (a queue cannot be probed without sending). */
export const isBoundQueue = (binding: unknown): binding is Queue => !!binding && typeof (binding as Queue).send === "function";

const bound = (binding: unknown): Check => (isBoundQueue(binding) ? { status: "ok" } : { status: "error", error: "binding missing" });

export async function healthReport(env: Env) {
  const [d1, r2, durableObject, documentStore, controlDirectory] = await Promise.all([
    probe(() => env.DB.prepare("SELECT 1").first()),
    probe(() => env.FILES.head("health/probe")),
    probe(() => folioAllocatorFor(env.FOLIO_ALLOCATOR, "health", "0").status()),
    // A store of its own name (no company is called "health"): its schema version and size.
    probe(() => env.DOCUMENT_STORE.get(env.DOCUMENT_STORE.idFromName("health:0")).describe()),
    // An object of its own name (no key or company is called that): how many entries it holds.
    probe(() => env.CONTROL_DIRECTORY.get(env.CONTROL_DIRECTORY.idFromName("health")).describe()),
  ]);
  const checks = { d1, r2, issuance_queue: bound(env.ISSUANCE_QUEUE), webhook_queue: bound(env.WEBHOOK_QUEUE), email_events_queue: bound(env.EMAIL_EVENTS_QUEUE), folio_allocator: durableObject, document_store: documentStore, control_directory: controlDirectory };
  const ok = Object.values(checks).every((c) => c.status === "ok");
  const siiMode = env.SII_MODE as "simulator" | "certification" | "production"; // assertConfigured checked it
  return { status: ok ? ("ok" as const) : ("degraded" as const), environment: env.ENVIRONMENT, sii_mode: siiMode, checks };
}
