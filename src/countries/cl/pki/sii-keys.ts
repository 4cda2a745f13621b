/**
 * Public keys the SII uses to sign CAFs (FRMA), by IDK. Taken from the SII's own self-signed
 * certificates (LibreDTE resources/certificates/100.cer and 300.cer, kept in shared/sii-keys): only
 * the public key matters; the certificates expired in 2004 and are not checked.
 * Stored here as SubjectPublicKeyInfo DER in base64 (RSA-512, e = 65537).
 */
export const SII_CAF_KEYS: Readonly<Record<number, { environment: "certification" | "production"; spki: string }>> = {
  100: {
    environment: "certification",
    spki: "MFwwDQYJKoZIhvcNAQEBBQADSwAwSAJBAMj78A3LIaVQAKWFUixd5SinPgzhbMA6seXqfeSyooER41L6743LfVHjSavUsQXc1PZ8+eExFQWMnwFUKRuMcVMCAwEAAQ==",
  },
  300: {
    environment: "production",
    spki: "MFwwDQYJKoZIhvcNAQEBBQADSwAwSAJBAJ3uv8XuvZbfTHz1Pxv6Fdhdc+8ExnGPjAez94Xv7nXntO9aOuB5wyZakA5F9gKJCvb7T6+iuNaTj38BHDWFszUCAwEAAQ==",
  },
};
