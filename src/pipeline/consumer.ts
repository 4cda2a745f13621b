import { createDb } from "../db/client";
import { findDocumentType } from "../countries/cl/document-types";
import { isFinal, noteProblem, transition, type InvoiceRow } from "../domain/invoices/state";
import type { Env } from "../env";
import { AuthorityError, type TaxAuthority } from "../countries/port";
import { backoffSeconds, enqueueEnvelopePoll, pipelineMessage, type EnvelopePollMessage, type InvoiceMessage } from "./messages";
import { allocateFolios, assignFolio, claimEnvelope, type Allocation, pollEnvelope, reload, RetryableStepError, sendEnvelope, signDocument, TerminalStepError, type StepDeps } from "./steps";
import { and, eq, inArray } from "drizzle-orm";
import { envelopes, invoices } from "../db/schema";

/**
 * Delay before the next status poll of an envelope, per authority: the simulator answers at once,
 * so its first polls are immediate; the real SII takes seconds to minutes, so polls start at 2 s and
 * back off to 5 minutes.
 */
export function pollDelaySeconds(polls: number, mode: string): number {
  if (mode === "simulator" && polls < 8) return 0;
  return polls < 3 ? 2 : Math.min(300, 2 ** (polls - 1));
}

function describe(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function log(level: "info" | "warn" | "error", msg: string, fields: Record<string, unknown>) {
  const line = JSON.stringify({ level, msg, ...fields });
  if (level === "error") console.error(line);
  else if (level === "warn") console.warn(line);
  else console.log(line);
}

/**
 * The issuance queue consumer. Each invoice message runs the steps that are due (folio, stamp and
 * signature); the documents of the batch that are ready are grouped per company and envelope kind
 * and sent together; poll messages follow envelopes to their verdict. Every step is idempotent, so
 * duplicate deliveries do nothing twice; failures retry with backoff and jitter.
 */
export async function handleIssuanceBatch(batch: MessageBatch<unknown>, env: Env, authority: TaxAuthority): Promise<void> {
  const deps: StepDeps = { db: createDb(env.DB), env, authority, now: () => new Date() };
  const invoiceMsgs: { msg: Message<unknown>; body: InvoiceMessage }[] = [];
  const pollMsgs: { msg: Message<unknown>; body: EnvelopePollMessage }[] = [];
  for (const msg of batch.messages) {
    const parsed = pipelineMessage.safeParse(msg.body);
    if (!parsed.success) {
      log("error", "malformed pipeline message dropped", { id: msg.id, body: JSON.stringify(msg.body).slice(0, 500) });
      msg.ack();
      continue;
    }
    if (parsed.data.type === "invoice") invoiceMsgs.push({ msg, body: parsed.data });
    else pollMsgs.push({ msg, body: parsed.data });
  }

  // Phase 0: the current rows; folios for the RECEIVED ones, one allocator call per company and type.
  const rows = new Map<string, InvoiceRow>();
  const allocations = new Map<string, Allocation>();
  try {
    for (let i = 0; i < invoiceMsgs.length; i += 90) {
      const ids = invoiceMsgs.slice(i, i + 90).map((m) => m.body.invoice_id);
      for (const r of await deps.db.select().from(invoices).where(inArray(invoices.id, ids))) rows.set(r.id, r);
    }
    const groups = new Map<string, InvoiceRow[]>();
    for (const r of rows.values()) {
      if (r.status !== "RECEIVED") continue;
      const k = `${r.companyId}|${r.documentType}`;
      groups.set(k, [...(groups.get(k) ?? []), r]);
    }
    await Promise.all(
      [...groups.values()].map(async (g) => {
        for (const [id, a] of await allocateFolios(deps, g[0]!.companyId, g[0]!.documentType, [...new Set(g.map((r) => r.id))])) allocations.set(id, a);
      }),
    );
  } catch (e) {
    // Fall back to one document at a time below (each step is idempotent).
    log("warn", "batch folio allocation failed; continuing per document", { error: describe(e) });
  }

  // Phase 1: folio, stamp and signature, per document.
  const ready = new Map<string, { msg: Message<unknown>; inv: InvoiceRow }[]>();
  await Promise.all(
    invoiceMsgs.map(async ({ msg, body }) => {
      let inv: InvoiceRow | undefined;
      try {
        inv = rows.get(body.invoice_id) ?? (await reload(deps, body.invoice_id));
        if (isFinal(inv.status) || inv.status === "SENT") {
          msg.ack();
          return;
        }
        inv = await assignFolio(deps, inv, allocations.get(inv.id));
        inv = await signDocument(deps, inv);
        if (inv.status !== "SIGNED") {
          msg.ack();
          return;
        }
        const key = `${inv.companyId}|${findDocumentType(inv.documentType)!.envelope}`;
        ready.set(key, [...(ready.get(key) ?? []), { msg, inv }]);
      } catch (e) {
        await onStepError(deps, msg, body.invoice_id, e);
      }
    }),
  );

  // Phase 2: group ready documents into envelopes and send them.
  await Promise.all(
    [...ready.values()].map(async (group) => {
      const companyId = group[0]!.inv.companyId;
      try {
        await claimEnvelope(deps, companyId, group.filter((g) => !g.inv.envelopeId).map((g) => g.inv.id));
      } catch (e) {
        for (const g of group) await onStepError(deps, g.msg, g.inv.id, e);
        return;
      }
      const byEnvelope = new Map<string, Message<unknown>[]>();
      for (const g of group) {
        const fresh = await reload(deps, g.inv.id);
        if (fresh.status !== "SIGNED" || !fresh.envelopeId) {
          g.msg.ack();
          continue;
        }
        byEnvelope.set(fresh.envelopeId, [...(byEnvelope.get(fresh.envelopeId) ?? []), g.msg]);
      }
      for (const [envelopeId, msgs] of byEnvelope) {
        try {
          const sent = await sendEnvelope(deps, companyId, envelopeId);
          if (sent) await enqueueEnvelopePoll(env, envelopeId, companyId, pollDelaySeconds(0, env.SII_MODE));
          for (const m of msgs) m.ack();
        } catch (e) {
          if (e instanceof AuthorityError && !e.retryable) {
            await rejectEnvelope(deps, envelopeId, e);
            for (const m of msgs) m.ack();
            continue;
          }
          const members = await deps.db.select({ id: invoices.id }).from(invoices).where(eq(invoices.envelopeId, envelopeId));
          for (const m of members) await noteProblem(deps.db, m.id, `Sending failed, will retry: ${describe(e)}`);
          const attempts = Math.max(...msgs.map((m) => m.attempts));
          log("warn", "envelope send failed; retrying", { envelope_id: envelopeId, attempts, error: describe(e) });
          for (const m of msgs) m.retry({ delaySeconds: backoffSeconds(attempts) });
        }
      }
    }),
  );

  // Polls.
  await Promise.all(
    pollMsgs.map(async ({ msg, body }) => {
      try {
        const state = await pollEnvelope(deps, body.envelope_id);
        if (state === "PENDING") {
          const row = await deps.db.query.envelopes.findFirst({ where: eq(envelopes.id, body.envelope_id) });
          await enqueueEnvelopePoll(env, body.envelope_id, body.company_id, pollDelaySeconds(row?.polls ?? 0, env.SII_MODE));
        }
        msg.ack();
      } catch (e) {
        log("warn", "envelope poll failed; retrying", { envelope_id: body.envelope_id, attempts: msg.attempts, error: describe(e) });
        msg.retry({ delaySeconds: backoffSeconds(msg.attempts) });
      }
    }),
  );
}

/** The authority refused the upload itself (schema, signature...): its documents are rejected. */
async function rejectEnvelope(deps: StepDeps, envelopeId: string, e: AuthorityError) {
  const members = await deps.db.select().from(invoices).where(and(eq(invoices.envelopeId, envelopeId), eq(invoices.status, "SIGNED")));
  for (const m of members) {
    await transition(deps.db, m.id, ["SIGNED"], { status: "REJECTED", fiscalStatus: e.fiscalStatus ?? "RECHAZO", fiscalMessage: e.message, lastError: e.message }, e.message);
  }
  log("warn", "envelope refused by the tax authority", { envelope_id: envelopeId, error: e.message });
}

async function onStepError(deps: StepDeps, msg: Message<unknown>, invoiceId: string, e: unknown) {
  if (e instanceof TerminalStepError) {
    log("warn", "document failed", { invoice_id: invoiceId, error: e.message });
    msg.ack();
    return;
  }
  // Everything but an authority refusal marked final is worth retrying (bugs included: the DLQ and the sweep follow).
  const retryable = !(e instanceof AuthorityError && !e.retryable);
  await noteProblem(deps.db, invoiceId, describe(e)).catch(() => undefined);
  if (retryable) {
    log(e instanceof RetryableStepError || e instanceof AuthorityError ? "warn" : "error", "step failed; retrying", { invoice_id: invoiceId, attempts: msg.attempts, error: describe(e), stack: e instanceof Error && !(e instanceof RetryableStepError) ? e.stack : undefined });
    msg.retry({ delaySeconds: backoffSeconds(msg.attempts) });
  } else {
    msg.ack();
  }
}

/**
 * Dead-letter consumer: messages that exhausted their retries. The document keeps its state (it is
 * never dropped and its folio is kept); the failure is recorded and the cron sweep re-drives it.
 */
export async function handleDeadLetters(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  const db = createDb(env.DB);
  for (const msg of batch.messages) {
    const parsed = pipelineMessage.safeParse(msg.body);
    if (parsed.success && parsed.data.type === "invoice") {
      await noteProblem(db, parsed.data.invoice_id, `Gave up after ${msg.attempts} delivery attempts at ${new Date().toISOString()}; the periodic sweep will try again.`);
    }
    log("error", "dead-lettered pipeline message", { id: msg.id, body: JSON.stringify(msg.body).slice(0, 500), attempts: msg.attempts });
    msg.ack();
  }
}
