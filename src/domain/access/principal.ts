import type { Role } from "./roles";

/** The authenticated API key (specification §2.5). */
export interface Principal {
  apiKeyId: string;
  clientId: string;
  role: Role;
}
