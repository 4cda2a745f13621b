import type { Principal } from "../accounts/access/principal";
import type { CompanyRow } from "../accounts/companies/repository";
import type { CompanyAccess } from "../accounts/access/api-keys";
import type { IdempotencyClaim } from "../lib/ids";

export interface AppVariables {
  requestId: string;
  principal: Principal;
  /** Set by the company-access guard on routes under a company. */
  company: CompanyRow;
  /** The company of a /api/companies/{id}/… path, read together with the API key. */
  companyAccess?: CompanyAccess;
  /** Set by the Idempotency-Key middleware (its `IdempotencyClaim`). */
  idempotency?: IdempotencyClaim;
}

export type AppEnv = { Bindings: Env; Variables: AppVariables };
