import { createDb } from "../../storage/db/client";
import { envelopeTransition, isFinal, MOVES, noteProblem, type InvoiceRow } from "../state";
import { AuthorityError, type TaxAuthority } from "../../countries/port";
import { issuingCountry } from "../../countries";
import { enqueueEnvelopePolls, pipelineMessage, type EnvelopePollMessage, type InvoiceMessage } from "./messages";
import { backoffSeconds } from "../../lib/backoff";
import { allocateFolios, claimEnvelope, type Allocation, pollEnvelope, prepareDocument, type Prepared, recordSigned, releaseCancellations, reload, RetryableStepError, sendEnvelope, sendPrepared, storeEnvelope, type StoredEnvelope, TerminalStepError, type StepDeps } from "./steps";
import { ordinalOfId, partitionFor, UnknownPartitionError } from "../../storage/db/document-store";
import { envForMode } from "../../config";
import { companyContext, depsForStore, newEnvelopeId, releaseIfEnded, type AuthorityCompany } from "./steps";
import { chunked } from "../../lib/chunked";
import { checkBuyerResponses, type BuyerCheckWork } from "./buyer-checks";
import { deliverToBuyers, type BuyerDeliveryWork } from "./buyer-deliveries";
import { checkSiiStatuses, type SiiStatusWork } from "./sii-status-checks";
import { sendReplyMails, type ReplyMailWork } from "./reply-mails";
import { describeError, log } from "../../lib/log";
import { advanceCessions, type CessionWork } from "../cessions/pipeline";
import { eq, inArray } from "drizzle-orm";
import { invoices } from "../../storage/db/schema";
import { envelopeSized, expandGroup } from "../batches/groups";

/**
 * Delay before the next status poll of an envelope, per authority: the simulator answers at once,
 * so its first polls are immediate; the real SII takes seconds to minutes, so polls start at 2 s and
 * back off to 5 minutes.
 */
export function pollDelaySeconds(polls: number, mode: string): number {
  if (mode === "simulator" && polls < 8) return 0;
  return polls < 3 ? 2 : Math.min(300, 2 ** (polls - 1));
}

type InvoiceWork = { msg: Message<unknown>; body: InvoiceMessage };
type PollWork = { msg: Message<unknown>; body: EnvelopePollMessage };
type PreparedGroups = Map<string, { msg: Message<unknown>; p: Prepared }[]>;
type SignedGroups = Map<string, { msg: Message<unknown>; inv: InvoiceRow }[]>;

/**
 * The issuance queue consumer. Each invoice message runs the steps that are due (folio, stamp and
 * signature); the documents of the batch that are ready are grouped per company and envelope kind
 * and sent together; poll messages follow envelopes to their verdict. Every step is idempotent, so
 * duplicate deliveries do nothing twice; failures retry with backoff and jitter.
 */
/**
 * `authority`: one for every company (tests), or one per company (the Worker: test companies reach
 * the simulator, which applies the scenarios of the company's API client).
 */
export async function handleIssuanceBatch(batch: MessageBatch<unknown>, env: Env, authority: TaxAuthority | ((company: AuthorityCompany) => TaxAuthority)): Promise<void> {
  const db = createDb(env.DB);
  const base: StepDeps = { db, store: db, ordinal: 0, env, ...(typeof authority === "function" ? { authorityFor: authority } : { authority }), now: () => new Date() };
  const { invoiceMsgs, pollMsgs, buyerMsgs, deliveryMsgs, replyMsgs, siiStatusMsgs, cessionMsgs } = sortMessages(batch);
  await Promise.all([
    Promise.all([...perStore(invoiceMsgs, pollMsgs)].map(([key, work]) => handleStoreWork(base, key, work))),
    checkBuyerResponses(env, buyerMsgs),
    deliverToBuyers(env, deliveryMsgs),
    sendReplyMails(env, replyMsgs),
    checkSiiStatuses(env, siiStatusMsgs),
    advanceCessions(env, cessionMsgs),
  ]);
}

type StoreWork = { companyId: string; ordinal: number; invoiceMsgs: InvoiceWork[]; pollMsgs: PollWork[] };

/**
 * The batch's messages per document store (company and the partition their id names): each group
 * is handled with its own store, so its writes go to one store, batched as before. A message whose
 * id names no partition is not one of ours: dropped (logged).
 */
function perStore(invoiceMsgs: InvoiceWork[], pollMsgs: PollWork[]): Map<string, StoreWork> {
  const groups = new Map<string, StoreWork>();
  const add = (w: InvoiceWork | PollWork, id: string, into: "invoiceMsgs" | "pollMsgs") => {
    const ordinal = ordinalOfId(id);
    if (ordinal === null) {
      log("error", "pipeline message with an unknown id dropped", { id: w.msg.id, document: id });
      w.msg.ack();
      return;
    }
    const key = `${w.body.company_id}:${ordinal}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { companyId: w.body.company_id, ordinal, invoiceMsgs: [], pollMsgs: [] }));
    (g[into] as (InvoiceWork | PollWork)[]).push(w);
  };
  for (const w of invoiceMsgs) add(w, w.body.invoice_id, "invoiceMsgs");
  for (const w of pollMsgs) add(w, w.body.envelope_id, "pollMsgs");
  return groups;
}

/**
 * The phases for the documents and envelopes of one store. The events its moves record stay in the
 * store, which sends its own fan-out notice (fanout-notice.ts).
 */
async function handleStoreWork(base: StepDeps, key: string, work: StoreWork): Promise<void> {
  let deps: StepDeps;
  try {
    const partition = await partitionFor(base.env, work.companyId, work.ordinal);
    deps = depsForStore(base, partition.db, partition.ordinal);
  } catch (e) {
    if (e instanceof UnknownPartitionError) {
      // No document or envelope can be in a partition the company never had: the message is wrong, not late.
      log("error", "pipeline messages naming a partition the company does not have dropped", { store: key, messages: [...work.invoiceMsgs, ...work.pollMsgs].map((w) => w.msg.id) });
      for (const w of [...work.invoiceMsgs, ...work.pollMsgs]) w.msg.ack();
      return;
    }
    log("warn", "document store unavailable; retrying its messages", { store: key, error: describeError(e) });
    for (const w of [...work.invoiceMsgs, ...work.pollMsgs]) w.msg.retry({ delaySeconds: backoffSeconds(w.msg.attempts) });
    return;
  }
  const { rows, allocations } = await preallocateFolios(deps, work.invoiceMsgs);
  const { prepared, signed } = await prepareDocuments(deps, work.invoiceMsgs, rows, allocations);
  // Envelopes of at most the kind's limit (a batch's groups fill several).
  const kindOf = (key: string) => key.slice(key.indexOf("|") + 1);
  await sendPreparedGroups(deps, envelopeSized(prepared, kindOf, (g) => g.p.dte.xml.byteLength));
  await sendSignedGroups(deps, envelopeSized(signed, kindOf, () => null));
  await pollEnvelopes(deps, work.pollMsgs);
}

/** Parses the batch: malformed messages are dropped (logged), duplicates of one document or envelope acked. */
function sortMessages(batch: MessageBatch<unknown>): { invoiceMsgs: InvoiceWork[]; pollMsgs: PollWork[]; buyerMsgs: BuyerCheckWork[]; deliveryMsgs: BuyerDeliveryWork[]; replyMsgs: ReplyMailWork[]; siiStatusMsgs: SiiStatusWork[]; cessionMsgs: CessionWork[] } {
  const invoiceMsgs: InvoiceWork[] = [];
  const pollMsgs: PollWork[] = [];
  const buyerMsgs: BuyerCheckWork[] = [];
  const deliveryMsgs: BuyerDeliveryWork[] = [];
  const replyMsgs: ReplyMailWork[] = [];
  const siiStatusMsgs: SiiStatusWork[] = [];
  const cessionMsgs: CessionWork[] = [];
  for (const msg of batch.messages) {
    const parsed = pipelineMessage.safeParse(msg.body);
    if (!parsed.success) {
      log("error", "malformed pipeline message dropped", { id: msg.id, body: JSON.stringify(msg.body).slice(0, 500) });
      msg.ack();
      continue;
    }
    const body = parsed.data;
    if (body.type === "invoice.buyer_check") {
      if (buyerMsgs.some((m) => m.body.invoice_id === body.invoice_id)) msg.ack();
      else buyerMsgs.push({ msg, body });
    } else if (body.type === "invoice.buyer_delivery") {
      if (deliveryMsgs.some((m) => m.body.invoice_id === body.invoice_id)) msg.ack();
      else deliveryMsgs.push({ msg, body });
    } else if (body.type === "cession") {
      if (cessionMsgs.some((m) => m.body.cession_id === body.cession_id)) msg.ack();
      else cessionMsgs.push({ msg, body });
    } else if (body.type === "reception.reply_mail") {
      replyMsgs.push({ msg, body });
    } else if (body.type === "reception.sii_status") {
      if (siiStatusMsgs.some((m) => m.body.received_id === body.received_id)) msg.ack();
      else siiStatusMsgs.push({ msg, body });
    } else if (body.type === "invoice" || body.type === "invoice.group") {
      // The same document twice in one batch (a duplicate delivery): one message does the work.
      for (const w of body.type === "invoice" ? [{ msg, body }] : expandGroup(msg, body)) {
        if (invoiceMsgs.some((m) => m.body.invoice_id === w.body.invoice_id)) w.msg.ack();
        else invoiceMsgs.push(w);
      }
    } else if (pollMsgs.some((m) => m.body.envelope_id === body.envelope_id)) msg.ack();
    else pollMsgs.push({ msg, body });
  }
  return { invoiceMsgs, pollMsgs, buyerMsgs, deliveryMsgs, replyMsgs, siiStatusMsgs, cessionMsgs };
}

/** Phase 0: the current rows; folios for the RECEIVED ones, one allocator call per company and type. */
async function preallocateFolios(deps: StepDeps, invoiceMsgs: InvoiceWork[]) {
  const rows = new Map<string, InvoiceRow>();
  const allocations = new Map<string, Allocation>();
  try {
    for (const chunk of chunked(invoiceMsgs, 90)) {
      const ids = chunk.map((m) => m.body.invoice_id);
      for (const r of await deps.store.select().from(invoices).where(inArray(invoices.id, ids))) rows.set(r.id, r);
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
    log("warn", "batch folio allocation failed; continuing per document", { error: describeError(e) });
  }
  return { rows, allocations };
}

/** Phase 1: folio, stamp and signature in memory, per document; documents already SIGNED are set aside. */
async function prepareDocuments(deps: StepDeps, invoiceMsgs: InvoiceWork[], rows: Map<string, InvoiceRow>, allocations: Map<string, Allocation>) {
  const prepared: PreparedGroups = new Map();
  const signed: SignedGroups = new Map();
  const sent: { msg: Message<unknown>; inv: InvoiceRow }[] = [];
  const family = (inv: InvoiceRow) => `${inv.companyId}|${issuingCountry().documents.envelopeOf(inv.documentType)}`;
  await Promise.all(
    invoiceMsgs.map(async ({ msg, body }) => {
      try {
        const inv = rows.get(body.invoice_id) ?? (await reload(deps, body.invoice_id));
        if (isFinal(inv.status)) {
          await settleFinal(deps, msg, inv);
          return;
        }
        if (inv.status === "SENT") {
          sent.push({ msg, inv });
          return;
        }
        if (inv.status === "SIGNED") {
          signed.set(family(inv), [...(signed.get(family(inv)) ?? []), { msg, inv }]);
          return;
        }
        const p = await prepareDocument(deps, inv, allocations.get(inv.id));
        prepared.set(family(inv), [...(prepared.get(family(inv)) ?? []), { msg, p }]);
      } catch (e) {
        await onStepError(deps, msg, body.invoice_id, e);
      }
    }),
  );
  await resumePolls(deps, sent);
  return { prepared, signed };
}

/**
 * A document already final whose message comes again: acked, once a note that ended REJECTED or
 * FAILED has released what it may still hold; a failed release is retried without touching the
 * final document (its last_error stays the verdict's).
 */
async function settleFinal(deps: StepDeps, msg: Message<unknown>, inv: InvoiceRow) {
  try {
    await releaseIfEnded(deps, [inv]);
    msg.ack();
  } catch (e) {
    retryAfterFailure([msg], "releasing a final note's cancellation failed; retrying", { invoice_id: inv.id, error: describeError(e) });
  }
}

/**
 * A document already SENT whose message comes again (a redelivery after a crash between the upload
 * and queueing its envelope's first poll): its envelope is polled again rather than left to the
 * sweep. Extra polls are harmless (a finished envelope answers GONE).
 */
async function resumePolls(deps: StepDeps, sent: { msg: Message<unknown>; inv: InvoiceRow }[]) {
  const envelopes = new Map<string, string>();
  for (const { inv } of sent) if (inv.envelopeId) envelopes.set(inv.envelopeId, inv.companyId);
  try {
    if (envelopes.size > 0) {
      await enqueueEnvelopePolls(deps.env, [...envelopes].map(([envelopeId, companyId]) => ({ envelopeId, companyId, delaySeconds: pollDelaySeconds(0, deps.env.SII_MODE) })));
    }
    for (const { msg } of sent) msg.ack();
  } catch (e) {
    log("warn", "queueing polls of sent documents failed; retrying", { error: describeError(e) });
    for (const { msg } of sent) msg.retry({ delaySeconds: backoffSeconds(msg.attempts) });
  }
}

/**
 * Phase 2: the documents prepared here move to SIGNED under one envelope per company and family
 * (one D1 batch) and the envelope is built from memory and sent.
 */
async function sendPreparedGroups(deps: StepDeps, groups: PreparedGroups) {
  await Promise.all(
    [...groups.values()].map(async (group) => {
      const companyId = group[0]!.p.inv.companyId;
      const prepared = group.map((g) => g.p);
      let stored: StoredEnvelope;
      let moved: Prepared[];
      try {
        stored = await storeEnvelope(deps, companyId, newEnvelopeId(deps), prepared);
        moved = await recordSigned(deps, companyId, stored.envelopeId, prepared);
      } catch (e) {
        for (const g of group) await onStepError(deps, g.msg, g.p.inv.id, e);
        return;
      }
      const movedIds = new Set(moved.map((p) => p.inv.id));
      for (const g of group) if (!movedIds.has(g.p.inv.id)) g.msg.ack(); // a concurrent delivery moved it
      const msgs = group.filter((g) => movedIds.has(g.p.inv.id)).map((g) => g.msg);
      if (msgs.length === 0) return;
      await send(deps, stored.envelopeId, msgs, () => sendPrepared(deps, stored, prepared, moved));
    }),
  );
}

/**
 * Phase 3: documents recorded SIGNED earlier (retries, a crash before the upload): claimed by an
 * envelope when they have none, then sent from their stored XML.
 */
async function sendSignedGroups(deps: StepDeps, groups: SignedGroups) {
  await Promise.all(
    [...groups.values()].map(async (group) => {
      const companyId = group[0]!.inv.companyId;
      let fresh: Map<string, Pick<InvoiceRow, "id" | "status" | "envelopeId">>;
      try {
        await claimEnvelope(deps, companyId, group.filter((g) => !g.inv.envelopeId).map((g) => g.inv.id));
        fresh = await envelopesOf(deps, group.map((g) => g.inv.id));
      } catch (e) {
        // This group's store failed: its messages retry; the batch's other groups go on.
        for (const g of group) await onStepError(deps, g.msg, g.inv.id, e);
        return;
      }
      const byEnvelope = new Map<string, Message<unknown>[]>();
      for (const g of group) {
        const f = fresh.get(g.inv.id);
        if (!f || f.status !== "SIGNED" || !f.envelopeId) {
          g.msg.ack();
          continue;
        }
        byEnvelope.set(f.envelopeId, [...(byEnvelope.get(f.envelopeId) ?? []), g.msg]);
      }
      for (const [envelopeId, msgs] of byEnvelope) await send(deps, envelopeId, msgs, () => sendEnvelope(deps, companyId, envelopeId));
    }),
  );
}

/** The current status and envelope of SIGNED documents (after their claim). */
async function envelopesOf(deps: StepDeps, ids: string[]) {
  const fresh = new Map<string, Pick<InvoiceRow, "id" | "status" | "envelopeId">>();
  for (const chunk of chunked(ids, 90)) {
    for (const r of await deps.store.select({ id: invoices.id, status: invoices.status, envelopeId: invoices.envelopeId }).from(invoices).where(inArray(invoices.id, chunk))) fresh.set(r.id, r);
  }
  return fresh;
}

/** Polls; the next polls of envelopes still pending are queued together. */
async function pollEnvelopes(deps: StepDeps, pollMsgs: PollWork[]) {
  const { env } = deps;
  const next: { msg: Message<unknown>; poll: EnvelopePollMessage; delaySeconds: number }[] = [];
  await Promise.all(
    pollMsgs.map(async ({ msg, body }) => {
      try {
        const { state, polls } = await pollEnvelope(deps, body.envelope_id);
        if (state === "PENDING") next.push({ msg, poll: body, delaySeconds: pollDelaySeconds(polls, await siiModeOfCompany(deps, body.company_id)) });
        else msg.ack();
      } catch (e) {
        retryAfterFailure([msg], "envelope poll failed; retrying", { envelope_id: body.envelope_id, attempts: msg.attempts, error: describeError(e) });
      }
    }),
  );
  if (next.length === 0) return;
  try {
    await enqueueEnvelopePolls(env, next.map((n) => ({ envelopeId: n.poll.envelope_id, companyId: n.poll.company_id, delaySeconds: n.delaySeconds })));
    for (const n of next) n.msg.ack();
  } catch (e) {
    log("warn", "queueing the next polls failed; retrying", { error: describeError(e) });
    for (const n of next) n.msg.retry({ delaySeconds: backoffSeconds(n.msg.attempts) });
  }
}

/**
 * Sends one envelope and settles its messages: acked once sent (a status poll follows); when the
 * authority refused the file itself its documents are rejected; any other failure leaves them
 * SIGNED in their envelope, notes the problem and retries with backoff.
 */
async function send(deps: StepDeps, envelopeId: string, msgs: Message<unknown>[], sending: () => Promise<unknown>) {
  const { env } = deps;
  try {
    const sent = await sending();
    if (sent) await enqueueEnvelopePolls(env, [{ envelopeId, companyId: companyOf(msgs), delaySeconds: pollDelaySeconds(0, await siiModeOfCompany(deps, companyOf(msgs))) }]);
    for (const m of msgs) m.ack();
  } catch (e) {
    if (e instanceof AuthorityError && !e.retryable) {
      await settleRefusal(deps, envelopeId, msgs, e);
      return;
    }
    await noteProblem(deps.store, { envelopeId }, `Sending failed, will retry: ${describeError(e)}`).catch(() => undefined);
    const attempts = Math.max(...msgs.map((m) => m.attempts));
    retryAfterFailure(msgs, "envelope send failed; retrying", { envelope_id: envelopeId, attempts, error: describeError(e) }, { attempts });
  }
}

/** The SII mode a company's documents go to (test companies: the simulator). */
async function siiModeOfCompany(deps: StepDeps, companyId: string): Promise<string> {
  const { company } = await companyContext(deps, companyId);
  return envForMode(deps.env, company.livemode).SII_MODE;
}

function companyOf(msgs: Message<unknown>[]): string {
  return (msgs[0]!.body as InvoiceMessage).company_id;
}

/** The refused envelope's documents rejected, then its messages acked; retried when that failed (the retry finds them REJECTED and releases what they still hold). */
async function settleRefusal(deps: StepDeps, envelopeId: string, msgs: Message<unknown>[], e: AuthorityError) {
  try {
    await rejectEnvelope(deps, envelopeId, e);
    for (const m of msgs) m.ack();
  } catch (err) {
    retryAfterFailure(msgs, "recording a refused envelope failed; retrying", { envelope_id: envelopeId, error: describeError(err) });
  }
}

/** The authority refused the upload itself (schema, signature...): its documents are rejected. */
async function rejectEnvelope(deps: StepDeps, envelopeId: string, e: AuthorityError) {
  const [moved] = await deps.store.batch([
    ...envelopeTransition(deps.store, eq(invoices.envelopeId, envelopeId), MOVES.rejectUpload, { fiscalStatus: e.fiscalStatus ?? "RECHAZO", fiscalMessage: e.message, lastError: e.message }, e.message),
  ]);
  await releaseCancellations(deps, moved.filter((m) => m.cancelsInvoiceId));
  log("warn", "envelope refused by the tax authority", { envelope_id: envelopeId, error: e.message });
}

/**
 * Every failure the consumer settles by retrying goes through here: the log line, and each message
 * retried with backoff (on its own attempts, or on `options.attempts` for messages settled together).
 */
function retryAfterFailure(msgs: Message<unknown>[], what: string, fields: Record<string, unknown>, options: { attempts?: number; level?: "warn" | "error" } = {}) {
  log(options.level ?? "warn", what, fields);
  for (const m of msgs) m.retry({ delaySeconds: backoffSeconds(options.attempts ?? m.attempts) });
}

async function onStepError(deps: StepDeps, msg: Message<unknown>, invoiceId: string, e: unknown) {
  if (e instanceof TerminalStepError) {
    log("warn", "document failed", { invoice_id: invoiceId, error: e.message });
    msg.ack();
    return;
  }
  // Everything but an authority refusal marked final is worth retrying (bugs included: the DLQ and the sweep follow).
  const retryable = !(e instanceof AuthorityError && !e.retryable);
  await noteProblem(deps.store, { invoiceId }, describeError(e)).catch(() => undefined);
  if (retryable) {
    const level = e instanceof RetryableStepError || e instanceof AuthorityError ? "warn" : "error";
    retryAfterFailure([msg], "step failed; retrying", { invoice_id: invoiceId, attempts: msg.attempts, error: describeError(e), stack: e instanceof Error && !(e instanceof RetryableStepError) ? e.stack : undefined }, { level });
  } else {
    msg.ack();
  }
}
