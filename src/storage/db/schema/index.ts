/** Every table of D1 (./control.ts and the files below) and of the document stores (./documents.ts), for the Drizzle handles of both. */
export * from "./control";
export * from "./shared";
export * from "./documents";

/** Tables of the built-in SII simulator (sim_*). */
export * from "./simulator";
/** The per-company reception address. */
export * from "./reception";

/** Webhook endpoints. */
export * from "./webhooks";

/** Directory of authorised DTE taxpayers (versioned loads). */
export * from "./taxpayers";

/** Master key rotation progress and dead-lettered queue messages. */
export * from "./operations";

/** The partition directory of the per-company document stores. */
export * from "./partitions";
