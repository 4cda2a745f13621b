import { z } from "@hono/zod-openapi";
import { ERROR_CODES, type ErrorCode } from "../../lib/errors";
import { DATE_FORM, isRealDate } from "../../lib/time";

/**
 * `{ content: { "application/json": { schema, example } } }`: a JSON request body or response in a
 * route definition, with the example the reference shows (test/api/examples.test.ts checks it
 * against the schema).
 */
export const json = <T>(schema: T, example?: unknown) => ({ content: { "application/json": { schema, ...(example === undefined ? {} : { example }) } } });

export const ErrorDetailSchema = z
  .object({
    field: z.string().openapi({ example: "legal_name" }),
    message: z.string().openapi({ example: "At most 255 characters" }),
  })
  .openapi("ErrorDetail");

/** The error envelope (DECISIONS 8), restricted to the codes a response may carry. */
export function errorSchema(codes: readonly ErrorCode[]) {
  return z.object({
    error: z.object({
      code: z.enum(codes as [ErrorCode, ...ErrorCode[]]).describe(codes.map((c) => `\`${c}\`: ${ERROR_CODES[c].description}`).join("\n\n")),
      message: z.string(),
      request_id: z.string().openapi({ example: "req_01JD3Q4M6YV8T1N5B2K7C9XW3E" }),
      details: z.array(ErrorDetailSchema),
    }),
  });
}

export const ErrorSchema = errorSchema(Object.keys(ERROR_CODES) as ErrorCode[]).openapi("Error");

/** A calendar day, YYYY-MM-DD, that exists (2026-02-31 does not). */
export const calendarDate = () => z.string().refine(isRealDate, DATE_FORM).openapi({ format: "date" });

/** An instant: ISO 8601 date and time with its zone (Z or an offset), so that it names one moment. */
export const instant = () => z.iso.datetime({ offset: true, error: "An ISO 8601 date-time with its zone, e.g. 2026-11-27T10:00:00Z or 2026-11-27T07:00:00-03:00." });

/**
 * A multipart part that must be a file (a part with a filename), `what` naming it in the answer
 * when it is missing or sent as text: "Required: the CAF XML as a file."
 */
export const filePart = (what: string, description: string) =>
  z
    .custom<File>((v) => v instanceof File, { error: (iss) => (iss.input === undefined ? `Required: ${what} as a file.` : `Expected ${what} as a file (a part with a filename), not text.`) })
    .openapi({ type: "string", format: "binary", description });

/** A multipart part that must be text (not a file). */
export const textPart = (what: string, description: string) =>
  z.string({ error: (iss) => (iss.input === undefined ? `Required: ${what} as a text part.` : `Expected ${what} as text, not a file.`) }).openapi({ description });

/**
 * A query whose range ends before it starts (`to` before `from`) is refused naming both, instead of
 * answering an empty page that hides the slip. Dates and instants compare as moments.
 */
export function orderedRange<T extends z.ZodObject>(schema: T, pairs: readonly (readonly [from: string, to: string])[]): T {
  return schema.superRefine((q: Record<string, unknown>, ctx) => {
    for (const [from, to] of pairs) {
      const a = q[from];
      const b = q[to];
      if (typeof a === "string" && typeof b === "string" && Date.parse(b) < Date.parse(a)) ctx.addIssue({ code: "custom", path: [to], message: `${to} (${b}) is before ${from} (${a}).` });
    }
  }) as T;
}

export const PageQuerySchema = z.object({
  page: z
    .string()
    .regex(/^[1-9][0-9]{0,8}$/, "page is a whole number starting at 1")
    .optional()
    .openapi({ param: { name: "page", in: "query" }, description: "Page number, starting at 1 (default 1).", example: "1" }),
  per_page: z
    .string()
    .regex(/^[1-9][0-9]{0,8}$/, { error: "per_page is a whole number from 1 to 100", abort: true })
    .refine((v) => Number(v) <= 100, "per_page is at most 100")
    .optional()
    .openapi({ param: { name: "per_page", in: "query" }, description: "Results per page, 1 to 100 (default 20).", example: "20" }),
});

export function pageSchema<T extends z.ZodType>(item: T, name: string) {
  return z
    .object({
      data: z.array(item),
      current_page: z.number().int().min(1),
      per_page: z.number().int().min(1).max(100),
      total: z.number().int().min(0),
      last_page: z.number().int().min(1).describe("1 when there are no results"),
    })
    .openapi(name);
}

export interface PageParams {
  page: number;
  perPage: number;
  offset: number;
}

export function pageParams(q: { page?: string; per_page?: string }): PageParams {
  const page = q.page ? Number(q.page) : 1;
  const perPage = q.per_page ? Number(q.per_page) : 20;
  return { page, perPage, offset: (page - 1) * perPage };
}

export function pageEnvelope<T>(data: T[], total: number, p: PageParams) {
  return {
    data,
    current_page: p.page,
    per_page: p.perPage,
    total,
    last_page: Math.max(1, Math.ceil(total / p.perPage)),
  };
}

/** A list that always fits one page (a company's certificates, its folio ranges per type). */
export function singlePage<T>(data: T[]) {
  return pageEnvelope(data, data.length, { page: 1, perPage: Math.min(100, Math.max(1, data.length)), offset: 0 });
}
