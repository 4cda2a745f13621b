/**
 * The issuance pipeline's steps, one file each, in the order a document goes through them:
 * assign-folio (RECEIVED -> GENERATED), sign (GENERATED -> SIGNED, envelopes stored with the
 * documents they carry), send-envelope (SIGNED -> SENT), poll-envelope (SENT -> final). Shared
 * dependencies, caches and error kinds live in context.ts.
 */
export { companyContext, depsForStore, newEnvelopeId, fail, releaseCancellations, releaseIfEnded, releaseOnFailure, reload, RetryableStepError, signerFor, TerminalStepError, type AuthorityCompany, type StepDeps } from "./context";
export { allocateFolios, assignFolio, type Allocation } from "./assign-folio";
export { prepareDocument, recordSigned, signDocument, storeEnvelope, type Prepared, type StoredEnvelope } from "./sign";
export { claimEnvelope, sendEnvelope, sendPrepared } from "./send-envelope";
export { pollEnvelope } from "./poll-envelope";
