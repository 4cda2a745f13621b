/** A received document's cession as the API shows it (`cession` of a received document). */
import { z } from "@hono/zod-openapi";

export const ReceivedCessionSchema = z
  .object({
    holder_tax_id: z.string().openapi({ description: "Who holds the credit now, as the SII's register of cessions answers: pay this party, not the supplier.", example: "76543210-3" }),
    annotated_at: z.string().openapi({ description: "When the register annotated the last cession (ISO 8601 with Chile's offset). The buyer is notified the business day after it." }),
    collection_tax_id: z.string().nullable().openapi({ description: "A collection agent the holder named, if any." }),
    amount: z.string().nullable().openapi({ description: "The amount ceded when the register tells it; the SII's query service does not, so null against it." }),
    first_seen_at: z.string().openapi({ description: "When the service first saw the document ceded (ISO 8601, UTC)." }),
    checked_at: z.string().openapi({ description: "When the register was last asked." }),
  })
  .openapi("ReceivedCession");
export type ReceivedCession = z.infer<typeof ReceivedCessionSchema>;
