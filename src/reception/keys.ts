/**
 * The duplicate check of received documents across a company's partitions: every DTE's key
 * (issuer, type, folio, SHA-256 of its XML) is claimed in the company's index store
 * (`<companyId>:index`, table `received_keys`) before its row is written to a partition. One claim is
 * one atomic batch in that store (turn a register-only placeholder into this XML, or insert the key,
 * then read every key of the (issuer, type, folio)), so concurrent intakes agree on exactly one
 * holder per key and on which document came first (the original; a later different one is a duplicate).
 */
import { and, asc, eq } from "drizzle-orm";
import { indexStore } from "../storage/db/document-store";
import { receivedKeys } from "../storage/db/document-store/tables";
import { chunked } from "../lib/chunked";

type StoreEnv = Parameters<typeof indexStore>[0];

export interface DteKey {
  issuerRut: string;
  documentType: number;
  folio: number;
  /** SHA-256 of the DTE's XML; '' for a document known from the SII's register only. */
  sha: string;
}

export interface Claim {
  /** The document that holds this key: `candidateId`, a placeholder's id, or an earlier holder's. */
  documentId: string;
  /**
   * `NEW`: the key was free and is now `candidateId`'s; `PLACEHOLDER`: a register-only document of
   * the same (issuer, type, folio) became this XML's holder; `HELD`: the same XML was claimed before
   * (its holder's row may still be missing if that intake died: the caller checks).
   */
  kind: "NEW" | "PLACEHOLDER" | "HELD";
  /** Another XML with the same (issuer, type, folio) came first. */
  duplicate: boolean;
  /** The documents holding the other XMLs of the (issuer, type, folio) that came first, in arrival order. */
  earlier: string[];
}

const sameDocument = (k: Omit<DteKey, "sha">) => and(eq(receivedKeys.issuerRut, k.issuerRut), eq(receivedKeys.documentType, k.documentType), eq(receivedKeys.folio, k.folio));

/**
 * A claim's three statements, written once as SQL: built by Drizzle they cost 30–75 µs each (Node),
 * most of the claim of a 500-DTE envelope (README, "Benchmarks", reception by e-mail).
 * 1. A document the register listed before its XML arrived becomes this XML's (unless this XML is
 *    already held). 2. The key inserted (nothing if held). 3. Every key of the (issuer, type, folio),
 *    in arrival order.
 */
const CLAIM_SQL = {
  update: `UPDATE received_keys SET xml_sha256 = ? WHERE issuer_rut = ? AND document_type = ? AND folio = ? AND xml_sha256 = '' AND ? <> ''
     AND NOT EXISTS (SELECT 1 FROM received_keys k WHERE k.issuer_rut = ? AND k.document_type = ? AND k.folio = ? AND k.xml_sha256 = ?)
     RETURNING document_id`,
  insert: `INSERT INTO received_keys (issuer_rut, document_type, folio, xml_sha256, document_id) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING document_id`,
  select: `SELECT seq, xml_sha256, document_id FROM received_keys WHERE issuer_rut = ? AND document_type = ? AND folio = ? ORDER BY seq`,
};

/** Claims the keys in order (a later key of the same batch sees the earlier ones); `candidateIds[i]` is the id a new document would get. */
export async function claimKeys(env: StoreEnv, companyId: string, keys: DteKey[], candidateIds: string[]): Promise<Claim[]> {
  const client = indexStore(env, companyId).$client;
  const update = client.prepare(CLAIM_SQL.update);
  const insert = client.prepare(CLAIM_SQL.insert);
  const select = client.prepare(CLAIM_SQL.select);
  const out: Claim[] = [];
  // Three statements per key; 100 keys per batch keeps a batch well inside one store call.
  for (const [n, part] of chunked(keys, 100).entries()) {
    const statements = part.flatMap((k, i) => [
      update.bind(k.sha, k.issuerRut, k.documentType, k.folio, k.sha, k.issuerRut, k.documentType, k.folio, k.sha),
      insert.bind(k.issuerRut, k.documentType, k.folio, k.sha, candidateIds[n * 100 + i]!),
      select.bind(k.issuerRut, k.documentType, k.folio),
    ]);
    const results = (await client.batch(statements)).map((r) => r.results as KeyRow[]);
    part.forEach((k, i) => out.push(readClaim(k, candidateIds[n * 100 + i]!, results.slice(i * 3, i * 3 + 3))));
  }
  return out;
}

type KeyRow = { seq: number; xml_sha256: string; document_id: string };

function readClaim(k: DteKey, candidateId: string, [converted, inserted, all]: KeyRow[][]): Claim {
  const mine = all!.find((r) => r.xml_sha256 === k.sha)!;
  const kind = converted!.length ? "PLACEHOLDER" : inserted!.length ? "NEW" : "HELD";
  const earlier = all!.filter((r) => r.xml_sha256 !== "" && r.xml_sha256 !== k.sha && r.seq < mine.seq).map((r) => r.document_id);
  return { documentId: kind === "NEW" ? candidateId : mine.document_id, kind, duplicate: earlier.length > 0, earlier: [...new Set(earlier)] };
}

/** The key of `k` held by `documentId` from now on (a copy of an earlier document: its XML names that document). */
export async function repointKey(env: StoreEnv, companyId: string, k: DteKey, documentId: string): Promise<void> {
  const db = indexStore(env, companyId);
  await db.update(receivedKeys).set({ documentId }).where(and(sameDocument(k), eq(receivedKeys.xmlSha256, k.sha)));
}

/** The keys of each (issuer, type, folio) of `docs`, in arrival order (the register poll's lookup): one store call per 100. */
export async function keysOfMany(env: StoreEnv, companyId: string, docs: Omit<DteKey, "sha">[]): Promise<(typeof receivedKeys.$inferSelect)[][]> {
  const db = indexStore(env, companyId);
  const out: (typeof receivedKeys.$inferSelect)[][] = [];
  for (const part of chunked(docs, 100)) {
    const selects = part.map((d) => db.select().from(receivedKeys).where(sameDocument(d)).orderBy(asc(receivedKeys.seq)));
    out.push(...((await db.batch(selects as [(typeof selects)[number], ...typeof selects])) as (typeof receivedKeys.$inferSelect)[][]));
  }
  return out;
}
