/**
 * The single POST's checks, row by row (src/invoices/issue.ts): the body, amounts, the SII's
 * document rules, dates, issuer, cancellation rules, then the company's certificate, resolution and
 * CAF per document type (read once per type), and what credit notes credit. A row that fails is
 * refused with the error the single POST would answer; the others go on to their folio reservation.
 */
import { issuingCountry } from "../../countries";
import type { DocumentBody, PreparedDocument } from "../../countries/port";
import type { CompanyRow } from "../../accounts/companies/repository";
import { creditTargets, type CreditTarget } from "../credit-claims";
import { assertIssuable, checkBody, issueContext, type IssueContext } from "../issue";
import { assertIssueDateInCertificate } from "../rules";
import type { InvoiceRow } from "../state";
import { isRowRefusal, rowError, type RowError, type RowInput } from "./rows";

/** A row that passed every check so far, with the id its document will have. */
export interface Candidate {
  i: number;
  id: string;
  body: DocumentBody;
  doc: PreparedDocument;
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
      const { body, doc, target } = await checkBody(env, company, row.body, ulid, now);
      return { i, id, body, doc, target, credited: [] } satisfies Candidate;
    });
    if (checked) bodies.push(checked);
  }
  const types = [...new Set(bodies.map((c) => c.doc.documentType))];
  const contexts = new Map(await Promise.all(types.map(async (t) => [t, await issueContext(env, company.id, t, now)] as const)));
  const candidates: Candidate[] = [];
  for (const c of bodies) {
    const ctx = contexts.get(c.doc.documentType)!;
    const ok = await refusing(refused, c.i, async () => {
      assertIssueDateInCertificate(ctx.cert, c.doc.issueDate);
      issuingCountry().documents.checkResolution(c.body, ctx.resolution);
      assertIssuable(ctx, c.doc.documentType, now);
      c.credited = await creditTargets(env, company.id, c.doc, c.target);
      return c;
    });
    if (ok) candidates.push(ok);
  }
  return { candidates, contexts };
}
