import { z } from "zod";

/**
 * A step of a cession through the issuance queue (src/invoices/cessions/pipeline.ts): a SIGNED
 * cession is uploaded to the register, a SENT one asked for its state. Ids only; `v` the version.
 */
export const cessionMessage = z.object({
  v: z.literal(1),
  type: z.literal("cession"),
  cession_id: z.string(),
  company_id: z.string(),
});
export type CessionMessage = z.infer<typeof cessionMessage>;

export function cessionBody(cessionId: string, companyId: string): CessionMessage {
  return { v: 1, type: "cession", cession_id: cessionId, company_id: companyId };
}

export function enqueueCession(env: Pick<Env, "ISSUANCE_QUEUE">, m: { cessionId: string; companyId: string }, delaySeconds = 0) {
  return env.ISSUANCE_QUEUE.send(cessionBody(m.cessionId, m.companyId), delaySeconds > 0 ? { delaySeconds } : undefined);
}
