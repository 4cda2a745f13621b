import { sql, type SQL } from "drizzle-orm";
import type { PartitionAt } from "../storage/db/document-store/lists";
import type { InvoiceFilters } from "./queries";

/**
 * A page of a list filtered by an issue-date range, read day by day. The store's
 * indexes `(company_id, issue_date, created_at, id)` and `(company_id, document_type, issue_date,
 * created_at, id)` hold each issue day's documents in list order, but a range of days is not: read
 * as one range, SQLite sorts every match's key to find a page (13 ms for a type within a month at
 * 1 million documents). Read per day, each day gives at most offset + limit keys from its index
 * (one seek each) and only those are merged. That pays while days × (offset + limit) stays below
 * the partition's matches (its exact count, from the counters); a deeper page, a long range or
 * another filter (status, folio, reference: their own indexes) reads the range as before.
 */
const MAX_DAYS = 62;
const DAY = 86_400_000;

/** How many pages were read day by day (tests check the path was taken). */
export const dayPageReads = { count: 0 };

/** The first and last day of an issue-date range and how many days it spans. */
export interface IssueDays {
  first: string;
  last: string;
  count: number;
}

/** The days of the filter's issue-date range when a page of it can be read day by day; null otherwise. */
export function issueDaysOf(f: InvoiceFilters): IssueDays | null {
  if (!f.from_date || !f.to_date || f.status || f.folio !== undefined || f.external_reference) return null;
  const from = Date.parse(`${f.from_date}T00:00:00Z`);
  const to = Date.parse(`${f.to_date}T00:00:00Z`);
  if (!(to >= from) || (to - from) / DAY >= MAX_DAYS) return null;
  const day = (t: number) => new Date(t).toISOString().slice(0, 10);
  return { first: day(from), last: day(to), count: Math.round((to - from) / DAY) + 1 };
}

/** Whether reading `limit` rows after `offset` day by day touches fewer keys than the range read (see above). */
export function dayByDayPays(days: IssueDays | null, limit: number, offset: number, at: PartitionAt): days is IssueDays {
  return days !== null && days.count * (offset + limit) < at.count;
}

/**
 * The ids of the page, newest first (`DESC`) or oldest first: per day of the range its first
 * offset + limit keys from the index (a correlated subquery per day of a recursive list of days: a
 * compound SELECT of one term per day would exceed the stores' limit on compound terms), merged. The
 * numbers are integers written into the SQL; the rest is bound.
 */
export function dayByDayIds(companyId: string, type: number | undefined, days: IssueDays, direction: "ASC" | "DESC", limit: number, offset: number): SQL {
  dayPageReads.count++;
  const dir = sql.raw(direction);
  const typed = type === undefined ? sql.raw("") : sql` AND document_type = ${Math.trunc(type)}`;
  const n = (v: number) => sql.raw(String(Math.trunc(v)));
  // In parentheses: the caller's `inArray` writes a SQL value as it is.
  return sql`(WITH RECURSIVE days(d) AS (SELECT ${days.first} UNION ALL SELECT date(d, '+1 day') FROM days WHERE d < ${days.last})
    SELECT page.id FROM days, invoices page WHERE page.id IN (SELECT id FROM invoices WHERE company_id = ${companyId}${typed} AND issue_date = days.d ORDER BY created_at ${dir}, id ${dir} LIMIT ${n(offset + limit)})
    ORDER BY page.created_at ${dir}, page.id ${dir} LIMIT ${n(limit)} OFFSET ${n(offset)})`;
}
