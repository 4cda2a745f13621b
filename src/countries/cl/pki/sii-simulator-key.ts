/**
 * FAKE SII KEY FOR THE SIMULATOR — NOT A SECRET, NOT THE SII'S.
 *
 * A fixed RSA-512 (e = 3) key pair generated once with
 *   openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:512 -pkeyopt rsa_keygen_pubexp:3
 * It plays the SII's CAF-signing key in simulator mode (DECISIONS 18): the simulator signs the CAFs
 * it issues with it, and the engine trusts it only when told it runs in simulator mode. It is
 * published on purpose; anyone can mint "simulator CAFs", which are worthless outside the simulator.
 */
export const SIMULATOR_IDK = 999;

export const SIMULATOR_SII_PRIVATE_KEY_PKCS8_PEM = `-----BEGIN PRIVATE KEY-----
MIIBUwIBADANBgkqhkiG9w0BAQEFAASCAT0wggE5AgEAAkEAr8JHOuiR52to0OK/
Yq2Xp7+tHK1b8pTCI/hKntVtn6Wrq9wabpG1MwwrL17bq8ezgOIHLIkdVJttoTPb
F8Ri8wIBAwJAdSwvfJsL75zwi0HU7HO6b9UeEx49TGMsF/rcaeOeam1XBvRC2Wdg
da9zlfizYZKm9WlWsrIXIa3/Iv/mB+CrGwIhAOJW3rheE2PaWL+HnIJQ2NIc+Ldq
sauFKtH4utQlnkpfAiEAxsqO/cpjQKgsPkbNTEiS5vPLTbXMTxzrnPP5LeZVF+0C
IQCW5JR66WJCkZB/r72sNeXhaKXPnHZyWMc2pdHiw77cPwIhAISHCf6G7NXFctQv
M4gwYe9NMjPOiDS98miiph6Zjg/zAiBoPun/JuFA3rmyeL0pi7F78+Wa1YIQixhD
wiXevIwgTQ==
-----END PRIVATE KEY-----
`;

export const SIMULATOR_SII_PUBLIC_KEY_SPKI_PEM = `-----BEGIN PUBLIC KEY-----
MFowDQYJKoZIhvcNAQEBBQADSQAwRgJBAK/CRzrokedraNDiv2Ktl6e/rRytW/KU
wiP4Sp7VbZ+lq6vcGm6RtTMMKy9e26vHs4DiByyJHVSbbaEz2xfEYvMCAQM=
-----END PUBLIC KEY-----
`;
