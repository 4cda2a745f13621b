import { siiClientFor, type SiiClient } from "../countries/cl/sii";
import { siiTaxAuthority } from "../countries/cl/sii/authority";
import type { Env } from "../env";
import { AuthorityError, type ReceptionAuthority, type TaxAuthority } from "../countries/port";
import { siiReceptionAuthority } from "../countries/cl/sii/reception";

/** DTEUpload STATUS codes that mean the file itself is wrong: its documents are rejected. */
const CONTENT_REFUSALS: Record<string, string> = { "7": "RSC", "8": "RFR" };

/**
 * Only a refusal of the file's content rejects its documents. Every other failure (the SII down,
 * token or authorisation trouble that a new certificate fixes) keeps the documents waiting and
 * retrying, so no folio is burnt for a problem that is not the document's.
 */
export function toAuthorityError(message: string, retryable: boolean, siiCode?: string): AuthorityError {
  const refusal = siiCode ? CONTENT_REFUSALS[siiCode] : undefined;
  if (!retryable && refusal) return new AuthorityError(`The SII refused the file: ${message}`, false, refusal);
  return new AuthorityError(message, true, siiCode);
}

/** The Chilean SII (or its simulator, by SII_MODE) behind the pipeline's port. */
export function siiAuthority(env: Env, ctx?: ExecutionContext, client: SiiClient = siiClientFor(env, ctx)): TaxAuthority {
  return siiTaxAuthority(client, toAuthorityError);
}

/** The SII's reception side (accept/claim WS, reception time, register) for this Worker's SII mode. */
export function siiReception(env: Env, ctx?: ExecutionContext, client: SiiClient = siiClientFor(env, ctx)): ReceptionAuthority {
  return siiReceptionAuthority(client, (m, r, f) => new AuthorityError(m, r, f));
}
