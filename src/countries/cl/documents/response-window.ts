/**
 * The legal response window (Ley 19.983, sii-formats.md §5): 8 calendar days from the SII reception
 * time for facturas (33, 34) and liquidaciones-factura (43); after that the document is accepted by law.
 */
export const ACTIONABLE_TYPES: ReadonlySet<number> = new Set([33, 34, 43]);
export const RESPONSE_WINDOW_MS = 8 * 86_400_000;
/** When `received_document.deadline_approaching` fires: 2 days left. */
export const APPROACHING_MS = 2 * 86_400_000;

/** The response deadline (ISO 8601 UTC) of a document the SII received at `siiReceivedAt`. */
export function deadlineOf(siiReceivedAt: string): string {
  return new Date(Date.parse(siiReceivedAt) + RESPONSE_WINDOW_MS).toISOString();
}
