import { z } from "zod";

/**
 * A step of a cession through the issuance queue (src/domain/invoices/cessions/pipeline.ts): a SIGNED
 * cession is uploaded to the register, a SENT one asked for its state. Ids only; `v` the version.
 */
export const cessionMessage = z.object({
  v: z.literal(1),
  type: z.literal("cession"),
  cession_id: z.string(),
  company_id: z.string(),
});
export type CessionMessage = z.infer<typeof cessionMessage>;

export function enqueueCession(env: Pick<Env, "ISSUANCE_QUEUE">, m: { cessionId: string; companyId: string }, delaySeconds = 0) {
  const body: CessionMessage = { v: 1, type: "cession", cession_id: m.cessionId, company_id: m.companyId };
  return env.ISSUANCE_QUEUE.send(body, delaySeconds > 0 ? { delaySeconds } : undefined);
}
