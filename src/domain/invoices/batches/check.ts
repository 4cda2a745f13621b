/**
 * The single POST's checks, row by row (src/domain/invoices/issue.ts): the body, amounts, the SII's
 * document rules, dates, issuer, cancellation rules, then the company's certificate, resolution and
 * CAF per document type (read once per type), and what credit notes credit. A row that fails is
 * refused with the error the single POST would answer; the others go on to their folio reservation.
 */
import { formatAmount, type ComputedDocument, type InvoiceInput } from "../../../countries/cl";
import type { CompanyRow } from "../../companies/repository";
import { creditTargets, type CreditTarget } from "../credit-claims";
import { assertIssuable, assertIssuer, assertNotFuture, cancellationTarget, computeOrThrow, issueContext, type IssueContext } from "../issue";
import { assertCancellationAmount, assertIssueDateInCertificate, assertResolution, checkSiiRules } from "../rules";
import type { InvoiceRow } from "../state";
import { isRowRefusal, rowError, type RowError, type RowInput } from "./rows";

/** A row that passed every check so far, with the id its document will have. */
export interface Candidate {
  i: number;
  id: string;
  body: InvoiceInput;
  doc: ComputedDocument;
  target: InvoiceRow | null;
  credited: CreditTarget[];
}

export interface Checked {
  candidates: Candidate[];
  /** The company's issuing context per document type (certificate, CAF, resolution). */
  contexts: Map<number, IssueContext>;
}

/** Runs `check` and records a refusal of row `i` in `refused`; anything but a refusal fails the request. */
export async function refusing<T>(refused: Map<number, RowError>, i: number, check: () => T | Promise<T>): Promise<T | undefined> {
  try {
    return await check();
  } catch (e) {
    if (!isRowRefusal(e)) throw e;
    refused.set(i, rowError(i, e));
    return undefined;
  }
}

/** The checks of the single POST on every row; `ids[i]` names row i's document. */
export async function checkRows(env: Env, company: CompanyRow, rows: RowInput[], ids: string[], refused: Map<number, RowError>, now: Date): Promise<Checked> {
  const bodies: Candidate[] = [];
  for (const [i, row] of rows.entries()) {
    if (!row.ok) {
      refused.set(i, rowError(i, row.error));
      continue;
    }
    const id = ids[i]!;
    const ulid = id.slice(id.lastIndexOf("_") + 1);
    const checked = await refusing(refused, i, async () => {
      const target = await cancellationTarget(env, company.id, row.body, ulid);
      const doc = computeOrThrow(row.body);
      checkSiiRules(doc);
      assertCancellationAmount(target, formatAmount(doc, doc.totals.total));
      assertNotFuture(doc.issueDate, now);
      assertIssuer(company, doc);
      return { i, id, body: row.body, doc, target, credited: [] } satisfies Candidate;
    });
    if (checked) bodies.push(checked);
  }
  const types = [...new Set(bodies.map((c) => c.doc.type.code))];
  const contexts = new Map(await Promise.all(types.map(async (t) => [t, await issueContext(env, company.id, t, now)] as const)));
  const candidates: Candidate[] = [];
  for (const c of bodies) {
    const ctx = contexts.get(c.doc.type.code)!;
    const ok = await refusing(refused, c.i, async () => {
      assertIssueDateInCertificate(ctx.cert, c.doc.issueDate);
      assertResolution(ctx.resolution, c.body);
      assertIssuable(ctx, c.doc.type.code, now);
      c.credited = await creditTargets(env, company.id, c.doc, c.target);
      return c;
    });
    if (ok) candidates.push(ok);
  }
  return { candidates, contexts };
}
