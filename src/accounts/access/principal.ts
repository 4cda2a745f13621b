import type { Role } from "./roles";

/** The authenticated API key (specification §2.5). */
export interface Principal {
  apiKeyId: string;
  clientId: string;
  role: Role;
  /** Test (false) or live (true): the key sees only the companies of its own mode. */
  livemode: boolean;
}
