/**
 * The associated data each sealed value is bound to (AES-GCM, src/lib/secrets.ts): one place, so
 * writers, readers and the key rotation agree. A blob moved to another record does not open.
 */
export const sealedAs = {
  certificatePfx: (certificateId: string) => `certificate:${certificateId}:pfx`,
  certificatePassword: (certificateId: string) => `certificate:${certificateId}:password`,
  webhookSecret: (endpointId: string) => `webhook:${endpointId}`,
  caf: (cafId: string) => `caf:${cafId}`,
};
