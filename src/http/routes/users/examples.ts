/** Examples of the user and API key operations (checked by test/api/examples.test.ts). */
import { EX, examplePage } from "../../openapi/example-ids";

export const principalExample = { apiKeyId: EX.apiKey, clientId: EX.client, role: "OWNER", livemode: false, accessibleCompanyIds: [EX.company] };

export const userCreateExample = { email: "maria.gonzalez@losandes.cl", name: "María González" };

export const userExample = { id: EX.user, email: "maria.gonzalez@losandes.cl", name: "María González", status: "ACTIVE", created_at: "2026-11-27T13:32:10.000Z", revoked_at: null };

export const userRevokedExample = { ...userExample, status: "REVOKED", revoked_at: "2026-11-30T09:15:00.000Z" };

export const apiKeyCreateExample = { name: "ERP production", role: "MEMBER" };

export const apiKeyExample = {
  id: EX.userKey,
  user_id: EX.user,
  name: "ERP production",
  role: "MEMBER",
  prefix: "dte_test_u8j",
  livemode: false,
  company_ids: [EX.company],
  created_at: "2026-11-27T13:33:00.000Z",
  last_used_at: "2026-11-28T12:00:00.000Z",
  revoked_at: null,
};

export const apiKeyCreatedExample = {
  ...apiKeyExample,
  company_ids: [],
  last_used_at: null,
  api_key: "dte_test_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8dKLzd",
};

export const apiKeyRevokedExample = { ...apiKeyExample, revoked_at: "2026-11-30T09:15:00.000Z" };

export const apiKeyPageExample = examplePage([apiKeyExample]);

export const userPageExample = examplePage([userExample]);
