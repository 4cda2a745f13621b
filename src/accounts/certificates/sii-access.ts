/**
 * A company's access to the SII for the issuance queue's reads of the SII's registers (the buyer's
 * answer to an issued factura, src/invoices/buyer-check.ts; the status of a received
 * document, src/reception/sii-status.ts): its RUT and mode read once per queue batch, its signer
 * opened on first use and kept for the batch's other messages.
 */
import { eq } from "drizzle-orm";
import { createDb, type Db } from "../../storage/db/client";
import { companies } from "../../storage/db/schema";
import { requireSigningCredentials } from "./certificates";

export type SiiSigner = Awaited<ReturnType<typeof requireSigningCredentials>>;

/** `company`: its RUT, mode and API client (whose simulator scenarios apply to it), null when it is not active; `signer`: undefined until read, an Error when it has no usable certificate. */
export interface SiiAccess {
  readonly control: Db;
  readonly company: { taxId: string; livemode: boolean; clientId: string } | null;
  signer?: SiiSigner | Error;
}

export async function siiAccess(env: Env, companyId: string): Promise<SiiAccess> {
  const control = createDb(env.DB);
  const [company] = await control.select({ taxId: companies.taxId, livemode: companies.livemode, clientId: companies.clientId, status: companies.status }).from(companies).where(eq(companies.id, companyId)).limit(1);
  return { control, company: company && company.status === "ACTIVE" ? { taxId: company.taxId, livemode: company.livemode, clientId: company.clientId } : null };
}

/** The company's signer, opened once per access; the Error that says why there is none (no active, current certificate). */
export async function signerOf(env: Env, access: SiiAccess, companyId: string): Promise<SiiSigner | Error> {
  if (access.signer === undefined) {
    access.signer = await requireSigningCredentials(access.control, env, companyId).catch((e: unknown) => (e instanceof Error ? e : new Error(String(e))));
  }
  return access.signer;
}
