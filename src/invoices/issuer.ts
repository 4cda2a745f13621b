/**
 * A document's issuer block and the company's issuer profile (`issuer_profile`, the issuer's fields
 * a company keeps: address, activity and its codes, branch, e-mail, phones): a body without
 * `issuer` is issued with the profile, the company's legal name and its tax id; a body that sends
 * the block must agree with every field the profile sets that it also sends (a sent block stands
 * as sent: what it leaves out is not taken from the profile).
 */
import type { DocumentBody } from "../countries/port";
import type { CompanyRow } from "../accounts/companies/repository";
import { issuerProfileOf } from "../accounts/companies/companies";
import { AppError } from "../lib/errors";

type Block = Record<string, unknown>;

const isBlock = (v: unknown): v is Block => !!v && typeof v === "object" && !Array.isArray(v);

/** The paths (`issuer.address.city`) where `sent` says something else than `profile`; a field only one of them has differs from nothing. */
function differences(profile: Block, sent: Block, path: string): string[] {
  return Object.keys(profile).flatMap((k) => {
    if (!(k in sent)) return [];
    const [p, s] = [profile[k], sent[k]];
    if (isBlock(p) && isBlock(s)) return differences(p, s, `${path}.${k}`);
    return JSON.stringify(p) === JSON.stringify(s) ? [] : [`${path}.${k}`];
  });
}

/** The body with its issuer block: the profile's when it has none; refused when it disagrees with the profile. */
export function withIssuerProfile(body: DocumentBody, company: Pick<CompanyRow, "issuerProfile" | "legalName" | "taxId" | "taxIdCode">): DocumentBody {
  const profile = issuerProfileOf(company);
  const sent = (body as { issuer?: Block }).issuer;
  if (!profile) return body;
  if (!sent) return { ...body, issuer: { legal_name: company.legalName, document_type: company.taxIdCode, document_number: company.taxId, ...profile } } as DocumentBody;
  const differing = differences(profile, sent, "issuer");
  if (differing.length === 0) return body;
  throw new AppError(
    "INVOICE_ISSUER_MISMATCH",
    `The issuer block differs from the company's issuer profile in ${differing.join(", ")}: omit issuer to issue with the profile, or change the profile (PATCH /api/companies/{idCompany}).`,
    differing.map((field) => ({ field, message: "Differs from the company's issuer profile" })),
  );
}
