/**
 * Roles and what they may do (DECISIONS 6):
 * - OWNER: everything, including managing users and keys and deleting companies.
 * - ADMIN: everything but managing OWNER keys and deleting companies.
 * - MEMBER: issue and read documents, read catalogs, respond to received documents; no changes to
 *   companies, certificates, folios, webhooks, settings or users. Reaches only granted companies.
 */
export const ROLES = ["OWNER", "ADMIN", "MEMBER"] as const;
export type Role = (typeof ROLES)[number];

export type Permission =
  | "company:create"
  | "company:read"
  | "company:delete"
  | "company:configure" // settings, logo, certificates, folios, webhooks
  | "document:issue"
  | "document:read"
  | "reception:respond"
  | "users:manage";

const MATRIX: Record<Role, ReadonlySet<Permission>> = {
  OWNER: new Set<Permission>([
    "company:create", "company:read", "company:delete", "company:configure",
    "document:issue", "document:read", "reception:respond", "users:manage",
  ]),
  ADMIN: new Set<Permission>([
    "company:create", "company:read", "company:configure",
    "document:issue", "document:read", "reception:respond", "users:manage",
  ]),
  MEMBER: new Set<Permission>(["company:read", "document:issue", "document:read", "reception:respond"]),
};

export function can(role: Role, permission: Permission): boolean {
  return MATRIX[role].has(permission);
}

/** Only an OWNER may create, revoke or otherwise manage an OWNER key. */
export function canManageKeyOfRole(actor: Role, target: Role): boolean {
  if (!can(actor, "users:manage")) return false;
  return target !== "OWNER" || actor === "OWNER";
}

/** OWNER and ADMIN keys reach every company of their client; MEMBER keys only granted ones. */
export function reachesAllCompanies(role: Role): boolean {
  return role !== "MEMBER";
}

export const ROLE_MATRIX_DOC = `| Operation | OWNER | ADMIN | MEMBER |
|---|---|---|---|
| Read companies, settings, documents, catalogs | yes | yes | granted companies only |
| Issue documents, respond to received documents | yes | yes | granted companies only |
| Create companies; change settings, logo, certificates, folios, webhooks | yes | yes | no |
| Delete companies | yes | no | no |
| Manage users and ADMIN/MEMBER keys, grant companies | yes | yes | no |
| Manage OWNER keys | yes | no | no |`;
