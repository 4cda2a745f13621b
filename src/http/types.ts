import type { Env } from "../env";
import type { Principal } from "../domain/access/principal";
import type { CompanyRow } from "../domain/companies/repository";

export interface AppVariables {
  requestId: string;
  principal: Principal;
  /** Set by the company-access guard on routes under a company. */
  company: CompanyRow;
}

export type AppEnv = { Bindings: Env; Variables: AppVariables };
