import { OpenAPIHono, z } from "@hono/zod-openapi";
import { createDb } from "../../../storage/db/client";
import { ROLE_MATRIX_DOC, ROLES } from "../../../accounts/access/roles";
import { accessibleCompanies } from "../../../accounts/access/api-keys";
import {
  createUser, createUserKey, getUser, grantsOf, listKeys, listUsers, revokeKey, revokeUser, setGrant,
  type ApiKeyRow, type UserRow,
} from "../../../accounts/access/users";
import { validationHook } from "../../errors/handler";
import { PageQuerySchema, pageEnvelope, pageParams, pageSchema, json } from "../../openapi/common";
import { defineRoute } from "../../route";
import type { AppEnv } from "../../types";
import {
  apiKeyCreatedExample, apiKeyCreateExample, apiKeyExample, apiKeyPageExample, apiKeyRevokedExample, principalExample, userCreateExample,
  userExample, userPageExample, userRevokedExample,
} from "./examples";


const RoleSchema = z.enum(ROLES).openapi({ description: `Role of a key (DECISIONS 6).\n\n${ROLE_MATRIX_DOC}` });

const PrincipalSchema = z
  .object({
    apiKeyId: z.string(),
    clientId: z.string(),
    role: RoleSchema,
    livemode: z.boolean().describe("false for a test key (`dte_test_…`, the built-in SII simulator), true for a live key (`dte_live_…`)."),
    accessibleCompanyIds: z.array(z.string()),
  })
  .openapi("Principal");

const UserSchema = z
  .object({
    id: z.string(),
    email: z.string(),
    name: z.string(),
    status: z.enum(["ACTIVE", "REVOKED"]),
    created_at: z.string().openapi({ description: "ISO 8601, UTC." }),
    revoked_at: z.string().nullable(),
  })
  .openapi("User");

const UserCreateSchema = z
  .object({
    email: z.email("A valid e-mail address").max(254),
    name: z.string().trim().min(1, "Required").max(120, "At most 120 characters"),
  })
  .openapi("UserCreate");

const ApiKeySchema = z
  .object({
    id: z.string(),
    user_id: z.string().nullable().describe("null for keys created from the command line (bootstrap keys)."),
    name: z.string(),
    role: RoleSchema,
    prefix: z.string().describe("First characters of the key, to tell keys apart. The key itself is never shown again."),
    livemode: z.boolean().describe("The key's mode: false = test (`dte_test_…`), true = live (`dte_live_…`)."),
    company_ids: z.array(z.string()).describe("Companies granted to a MEMBER key; OWNER and ADMIN keys reach all companies of the client."),
    created_at: z.string(),
    last_used_at: z.string().nullable().describe("When the key was last used, with a resolution of one hour: a use within the hour after the recorded one does not move it. Null until its first use."),
    revoked_at: z.string().nullable(),
  })
  .openapi("ApiKey");

const ApiKeyCreatedSchema = ApiKeySchema.extend({
  api_key: z.string().describe("The secret key. Shown only in this response: store it now."),
}).openapi("ApiKeyCreated");

const ApiKeyCreateSchema = z
  .object({
    name: z.string().trim().min(1, "Required").max(120, "At most 120 characters").openapi({ example: "ERP production" }),
    role: RoleSchema,
    livemode: z
      .boolean()
      .optional()
      .describe("Mode of the new key; default: the mode of the key that asks. A test key cannot create live keys (403 AUTH_ROLE_FORBIDDEN)."),
  })
  .openapi("ApiKeyCreate");

const UserIdParam = z.object({ user_id: z.string().min(1).max(64).openapi({ param: { name: "user_id", in: "path" } }) });
const KeyIdParam = z.object({ api_key_id: z.string().min(1).max(64).openapi({ param: { name: "api_key_id", in: "path" } }) });
const GrantParams = KeyIdParam.extend({ company_id: z.string().min(1).max(64).openapi({ param: { name: "company_id", in: "path" } }) });

function userView(u: UserRow) {
  return { id: u.id, email: u.email, name: u.name, status: u.status, created_at: u.createdAt, revoked_at: u.revokedAt };
}
function keyView(k: ApiKeyRow & { companyIds: string[] }) {
  return {
    id: k.id, user_id: k.userId, name: k.name, role: k.role, prefix: k.prefix, livemode: k.livemode, company_ids: k.companyIds,
    created_at: k.createdAt, last_used_at: k.lastUsedAt, revoked_at: k.revokedAt,
  };
}

const BODY_ERRORS = ["VALIDATION_FAILED", "MALFORMED_JSON", "UNSUPPORTED_MEDIA_TYPE", "PAYLOAD_TOO_LARGE"] as const;

const me = defineRoute({
  method: "get", path: "/api/me", tags: ["Users"], summary: "The calling API key (principal)",
  description: "The principal of the X-Api-Key header (specification §2.5).",
  permission: "company:read",
  responses: { 200: { description: "Principal", ...json(PrincipalSchema, principalExample) } },
});
const createUserDef = defineRoute({
  method: "post", path: "/api/users", tags: ["Users"], summary: "Create a user",
  description: "OWNER and ADMIN keys. A user groups the API keys of one person or system.",
  permission: "users:manage",
  request: { body: { required: true, ...json(UserCreateSchema, userCreateExample) } },
  responses: { 201: { description: "Created", ...json(UserSchema, userExample) } },
  errors: [...BODY_ERRORS, "AUTH_ROLE_FORBIDDEN", "USER_EMAIL_TAKEN"],
});
const listUsersDef = defineRoute({
  method: "get", path: "/api/users", tags: ["Users"], summary: "List users", permission: "users:manage",
  request: { query: PageQuerySchema },
  responses: { 200: { description: "A page of users", ...json(pageSchema(UserSchema, "UserPage"), userPageExample) } },
  errors: ["VALIDATION_FAILED", "AUTH_ROLE_FORBIDDEN"],
});
const getUserDef = defineRoute({
  method: "get", path: "/api/users/{user_id}", tags: ["Users"], summary: "Get a user", permission: "users:manage",
  request: { params: UserIdParam },
  responses: { 200: { description: "User", ...json(UserSchema, userExample) } },
  errors: ["AUTH_ROLE_FORBIDDEN", "USER_NOT_FOUND"],
});
const revokeUserDef = defineRoute({
  method: "delete", path: "/api/users/{user_id}", tags: ["Users"], summary: "Revoke a user and all their keys",
  description: "Revoked keys answer 401 from then on. An ADMIN cannot revoke a user holding OWNER keys; the last OWNER key of the client cannot be revoked.",
  permission: "users:manage",
  request: { params: UserIdParam },
  responses: { 200: { description: "Revoked", ...json(UserSchema, userRevokedExample) } },
  errors: ["AUTH_ROLE_FORBIDDEN", "USER_NOT_FOUND", "API_KEY_LAST_OWNER", "CONTROL_DIRECTORY_UNAVAILABLE"],
});
const createKeyDef = defineRoute({
  method: "post", path: "/api/users/{user_id}/api-keys", tags: ["Users"], summary: "Create an API key for a user",
  description: "The key is returned once, in `api_key`; only its hash is stored. ADMIN keys cannot create OWNER keys.",
  permission: "users:manage",
  request: { params: UserIdParam, body: { required: true, ...json(ApiKeyCreateSchema, apiKeyCreateExample) } },
  responses: { 201: { description: "Created", ...json(ApiKeyCreatedSchema, apiKeyCreatedExample) } },
  errors: [...BODY_ERRORS, "AUTH_ROLE_FORBIDDEN", "USER_NOT_FOUND", "USER_REVOKED"],
});
const listKeysDef = defineRoute({
  method: "get", path: "/api/api-keys", tags: ["Users"], summary: "List API keys", permission: "users:manage",
  request: {
    query: PageQuerySchema.extend({
      user_id: z.string().max(64).optional().openapi({ param: { name: "user_id", in: "query" }, description: "Only this user's keys." }),
    }),
  },
  responses: { 200: { description: "A page of keys (never the secret)", ...json(pageSchema(ApiKeySchema, "ApiKeyPage"), apiKeyPageExample) } },
  errors: ["VALIDATION_FAILED", "AUTH_ROLE_FORBIDDEN"],
});
const revokeKeyDef = defineRoute({
  method: "delete", path: "/api/api-keys/{api_key_id}", tags: ["Users"], summary: "Revoke an API key",
  description: "Idempotent. ADMIN keys cannot revoke OWNER keys; the last active OWNER key cannot be revoked.",
  permission: "users:manage",
  request: { params: KeyIdParam },
  responses: { 200: { description: "Revoked", ...json(ApiKeySchema, apiKeyRevokedExample) } },
  errors: ["AUTH_ROLE_FORBIDDEN", "API_KEY_NOT_FOUND", "API_KEY_LAST_OWNER", "CONTROL_DIRECTORY_UNAVAILABLE"],
});
const grantDef = defineRoute({
  method: "put", path: "/api/api-keys/{api_key_id}/companies/{company_id}", tags: ["Users"], summary: "Grant a MEMBER key access to a company",
  permission: "users:manage",
  request: { params: GrantParams },
  responses: { 200: { description: "The key with its grants", ...json(ApiKeySchema, apiKeyExample) } },
  errors: ["AUTH_ROLE_FORBIDDEN", "AUTH_COMPANY_ACCESS_DENIED", "API_KEY_NOT_FOUND", "API_KEY_GRANT_NOT_APPLICABLE", "COMPANY_NOT_FOUND"],
});
const ungrantDef = defineRoute({
  method: "delete", path: "/api/api-keys/{api_key_id}/companies/{company_id}", tags: ["Users"], summary: "Withdraw a MEMBER key's access to a company",
  permission: "users:manage",
  request: { params: GrantParams },
  responses: { 200: { description: "The key with its grants", ...json(ApiKeySchema, { ...apiKeyExample, company_ids: [] }) } },
  errors: ["AUTH_ROLE_FORBIDDEN", "AUTH_COMPANY_ACCESS_DENIED", "API_KEY_NOT_FOUND", "API_KEY_GRANT_NOT_APPLICABLE", "COMPANY_NOT_FOUND", "CONTROL_DIRECTORY_UNAVAILABLE"],
});

export const usersRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook })
  .openapi(me, async (c) => c.json({ ...c.get("principal"), accessibleCompanyIds: await accessibleCompanies(createDb(c.env.DB), c.get("principal")) }, 200))
  .openapi(createUserDef, async (c) => c.json(userView(await createUser(createDb(c.env.DB), c.get("principal"), c.req.valid("json"))), 201))
  .openapi(listUsersDef, async (c) => {
    const page = pageParams(c.req.valid("query"));
    const { rows, total } = await listUsers(createDb(c.env.DB), c.get("principal"), page);
    return c.json(pageEnvelope(rows.map(userView), total, page), 200);
  })
  .openapi(getUserDef, async (c) => c.json(userView(await getUser(createDb(c.env.DB), c.get("principal"), c.req.valid("param").user_id)), 200))
  .openapi(revokeUserDef, async (c) => c.json(userView(await revokeUser(createDb(c.env.DB), c.env, c.get("principal"), c.req.valid("param").user_id)), 200))
  .openapi(createKeyDef, async (c) => {
    const created = await createUserKey(createDb(c.env.DB), c.env.API_KEY_PEPPER!, c.get("principal"), c.req.valid("param").user_id, c.req.valid("json"));
    return c.json({ ...keyView({ ...created, lastUsedAt: null, revokedAt: null, companyIds: [] }), api_key: created.key }, 201);
  })
  .openapi(listKeysDef, async (c) => {
    const query = c.req.valid("query");
    const page = pageParams(query);
    const { rows, total } = await listKeys(createDb(c.env.DB), c.get("principal"), { userId: query.user_id }, page);
    return c.json(pageEnvelope(rows.map(keyView), total, page), 200);
  })
  .openapi(revokeKeyDef, async (c) => {
    const db = createDb(c.env.DB);
    const key = await revokeKey(db, c.env, c.get("principal"), c.req.valid("param").api_key_id);
    return c.json(keyView({ ...key, companyIds: (await grantsOf(db, [key.id])).get(key.id) ?? [] }), 200);
  })
  .openapi(grantDef, async (c) => {
    const { api_key_id, company_id } = c.req.valid("param");
    return c.json(keyView(await setGrant(createDb(c.env.DB), c.env, c.get("principal"), api_key_id, company_id, true)), 200);
  })
  .openapi(ungrantDef, async (c) => {
    const { api_key_id, company_id } = c.req.valid("param");
    return c.json(keyView(await setGrant(createDb(c.env.DB), c.env, c.get("principal"), api_key_id, company_id, false)), 200);
  });
