import type { Principal } from "../domain/access/principal";
import type { CompanyRow } from "../domain/companies/repository";
import type { CompanyAccess } from "../domain/access/api-keys";

export interface AppVariables {
  requestId: string;
  principal: Principal;
  /** Set by the company-access guard on routes under a company. */
  company: CompanyRow;
  /** The company of a /api/companies/{id}/… path, read together with the API key. */
  companyAccess?: CompanyAccess;
  /** Set by the Idempotency-Key middleware: the same seed on every attempt of one claim (a route derives what it creates from it). */
  idempotency?: { seed: string; createdAt: string };
}

export type AppEnv = { Bindings: Env; Variables: AppVariables };
