/**
 * Every SII status and reply code the client can meet, mapped to (a) what it means for our
 * document and (b) a human explanation in Spanish and English.
 *
 * Outcomes:
 * - ACCEPTED, ACCEPTED_WITH_OBJECTIONS, REJECTED: the SII's verdict on the document (final);
 * - PENDING: received, verdict not yet known — poll again;
 * - RETRYABLE_ERROR: transport/service trouble or an expired token — retry later (same file);
 * - TERMINAL_ERROR: the request itself cannot succeed (configuration, authorisation, our bug).
 *
 * Disputed codes (sii-formats.md §4.4), decided here:
 * - PRD (and PDR) = still in process -> PENDING (as LibreDTE and RuralDTE; Odoo's SOAP path calls
 *   it rejected, which would make a slow SII look like a rejection).
 * - RLV ("reparos leves") and RPR ("aceptado con reparos") = ACCEPTED_WITH_OBJECTIONS: the
 *   document is valid and counts as issued, with observations (LibreDTE; Odoo's REST path). Odoo's
 *   SOAP path and RuralDTE treat them as rejected; we do not, because a document with reparos is
 *   legally issued and must not be re-issued with another folio.
 * - RCH, RSC, RFR, RCT, RPT, VOF = REJECTED (LibreDTE's final-rejection set).
 */
export type SiiOutcome = "ACCEPTED" | "ACCEPTED_WITH_OBJECTIONS" | "REJECTED" | "PENDING" | "RETRYABLE_ERROR" | "TERMINAL_ERROR";

/** Where a code comes from. */
export type SiiStatusKind =
  /** CrSeed / GetTokenFromSeed (and the boleta REST seed/token) RESP_HDR/ESTADO. */
  | "auth"
  /** DTEUpload RECEPCIONDTE/STATUS (and the boleta REST upload). */
  | "upload"
  /** QueryEstUp ESTADO and the boleta REST envio `estado`: the envelope's state. */
  | "envio"
  /** Per-document result codes (boleta REST detalle_rep_rech, per-type counts). */
  | "document"
  /** QueryEstDte ESTADO: one document as registered at the SII. */
  | "dte";

export interface SiiStatusInfo {
  outcome: SiiOutcome;
  es: string;
  en: string;
}

const s = (outcome: SiiOutcome, es: string, en: string): SiiStatusInfo => ({ outcome, es, en });

/** Error states shared by QueryEstUp and QueryEstDte (RESP_HDR/ESTADO). */
const QUERY_ERRORS: Record<string, SiiStatusInfo> = {
  "001": s("RETRYABLE_ERROR", "Token inválido o inexistente; se debe autenticar de nuevo.", "Invalid or unknown token; authenticate again."),
  "002": s("RETRYABLE_ERROR", "Token vencido; se debe autenticar de nuevo.", "Expired token; authenticate again."),
  "003": s("RETRYABLE_ERROR", "Token no corresponde; se debe autenticar de nuevo.", "Token not valid for this request; authenticate again."),
  "-1": s("RETRYABLE_ERROR", "Error interno del SII (campo de retorno).", "SII internal error (return field)."),
  "-2": s("RETRYABLE_ERROR", "Error interno del SII (retorno).", "SII internal error (return)."),
  "-3": s("TERMINAL_ERROR", "RUT del usuario consultante no existe o no está autorizado.", "The querying user's RUT does not exist or is not authorised."),
  "-4": s("RETRYABLE_ERROR", "Error del SII al obtener los datos.", "SII error while reading the data."),
  "-5": s("RETRYABLE_ERROR", "Error del SII al retornar los datos.", "SII error while returning the data."),
  "-6": s("TERMINAL_ERROR", "Usuario no autorizado para consultar esta empresa.", "The user is not authorised to query this company."),
  "-7": s("RETRYABLE_ERROR", "Error del SII al retornar los datos.", "SII error while returning the data."),
  "-8": s("RETRYABLE_ERROR", "Error del SII al retornar los datos.", "SII error while returning the data."),
  "-9": s("RETRYABLE_ERROR", "Error del SII al retornar los datos.", "SII error while returning the data."),
  "-10": s("TERMINAL_ERROR", "RUT del usuario inválido.", "Invalid user RUT."),
  "-11": s("RETRYABLE_ERROR", "Error de proceso del SII (ver SRV_CODE/SQL_CODE/ERR_CODE) o número de atención aún no disponible.", "SII processing error (see SRV_CODE/SQL_CODE/ERR_CODE) or the track id is not yet visible."),
  "-12": s("RETRYABLE_ERROR", "Error del SII en la consulta.", "SII error in the query."),
  "-13": s("TERMINAL_ERROR", "RUT del usuario nulo.", "The user RUT is empty."),
  "-14": s("RETRYABLE_ERROR", "Error del SII al generar el XML de respuesta.", "SII error while building the answer."),
};

export const SII_STATUS_TEXT: { readonly [K in SiiStatusKind]: Readonly<Record<string, SiiStatusInfo>> } = {
  auth: {
    "00": s("ACCEPTED", "Operación exitosa.", "Success."),
    "-1": s("RETRYABLE_ERROR", "Error del SII al generar la semilla (o al retornarla).", "SII error generating (or returning) the seed."),
    "-2": s("RETRYABLE_ERROR", "Error del SII al retornar la semilla.", "SII error returning the seed."),
    "01": s("TERMINAL_ERROR", "Error en el XML de la solicitud de token (no se pudo leer).", "The token request XML could not be read."),
    "02": s("TERMINAL_ERROR", "Error en el XML de la solicitud de token (estructura).", "The token request XML has the wrong structure."),
    "03": s("TERMINAL_ERROR", "Error en el XML de la solicitud de token (contenido).", "The token request XML has invalid content."),
    "04": s("TERMINAL_ERROR", "La solicitud de token no viene firmada.", "The token request is not signed."),
    "05": s("TERMINAL_ERROR", "La firma de la solicitud de token no es válida.", "The token request signature is invalid."),
    "06": s("TERMINAL_ERROR", "La solicitud de token no trae la semilla.", "The token request carries no seed."),
    "07": s("RETRYABLE_ERROR", "Error interno del SII al validar la solicitud.", "SII internal error validating the request."),
    "08": s("RETRYABLE_ERROR", "Parámetros incorrectos o semilla vencida/desconocida; pedir una semilla nueva.", "Wrong parameters or an expired/unknown seed; ask for a new seed."),
    "09": s("RETRYABLE_ERROR", "Error interno del SII.", "SII internal error."),
    "10": s("RETRYABLE_ERROR", "Error del SII al retornar los datos.", "SII error returning the data."),
    "11": s("TERMINAL_ERROR", "La firma no trae el certificado.", "The signature carries no certificate."),
    "12": s("RETRYABLE_ERROR", "Error interno del SII.", "SII internal error."),
    "21": s("TERMINAL_ERROR", "La llave pública no corresponde al certificado.", "The public key does not match the certificate."),
    "-3": s("TERMINAL_ERROR", "Error de autenticación: certificado no vigente o sin RUT del titular.", "Authentication error: certificate not valid now or without the holder's RUT."),
    "-07": s("TERMINAL_ERROR", "El RUT del certificado no está habilitado para autenticación con certificado.", "The certificate's RUT is not enabled for certificate authentication."),
  },
  upload: {
    "0": s("PENDING", "Envío recibido; el SII entregó un número de atención (Track ID). Aún no está aceptado.", "Upload received; the SII issued a track id. Not yet accepted."),
    "1": s("TERMINAL_ERROR", "El usuario que envía no tiene permiso para enviar (RUT del remitente distinto del autenticado).", "The sender is not allowed to upload (sender RUT differs from the authenticated one)."),
    "2": s("TERMINAL_ERROR", "Error en el tamaño del archivo (vacío o demasiado grande).", "File size error (empty or too large)."),
    "3": s("RETRYABLE_ERROR", "Archivo cortado (tamaño distinto al informado).", "The file arrived truncated (size differs from the declared one)."),
    "5": s("RETRYABLE_ERROR", "No está autenticado (token inválido o vencido); se debe autenticar de nuevo.", "Not authenticated (invalid or expired token); authenticate again."),
    "6": s("TERMINAL_ERROR", "La empresa no está autorizada a enviar archivos.", "The company is not authorised to upload files."),
    "7": s("TERMINAL_ERROR", "Esquema inválido (XML mal formado o raíz incorrecta).", "Invalid schema (malformed XML or wrong root element)."),
    "8": s("TERMINAL_ERROR", "Error de firma del archivo.", "File signature error."),
    "9": s("RETRYABLE_ERROR", "Sistema del SII bloqueado temporalmente.", "SII system temporarily locked."),
    "99": s("PENDING", "Archivo ya recibido anteriormente; se usa el Track ID original.", "File already received; the original track id applies."),
  },
  envio: {
    REC: s("PENDING", "Envío recibido.", "Envelope received."),
    SOK: s("PENDING", "Esquema validado.", "Schema validated."),
    CRT: s("PENDING", "Carátula validada.", "Cover (Carátula) validated."),
    FOK: s("PENDING", "Firma del envío validada.", "Envelope signature validated."),
    PDR: s("PENDING", "Envío en proceso.", "Envelope in process."),
    PRD: s("PENDING", "Envío en proceso.", "Envelope in process."),
    EPR: s("ACCEPTED", "Envío procesado; el resultado por documento está en los conteos (aceptados, rechazados, reparos).", "Envelope processed; the per-document verdict is in the counts (accepted, rejected, objections)."),
    RSC: s("REJECTED", "Rechazado por error en el esquema.", "Rejected: schema error."),
    RFR: s("REJECTED", "Rechazado por error en la firma del envío.", "Rejected: envelope signature error."),
    RCT: s("REJECTED", "Rechazado por error en la carátula (p. ej. RutEnvia no es el titular del certificado).", "Rejected: cover (Carátula) error (e.g. RutEnvia is not the certificate holder)."),
    RCH: s("REJECTED", "DTE rechazado.", "Document rejected."),
    RPT: s("REJECTED", "Rechazado: envío o documento repetido.", "Rejected: repeated envelope or document."),
    VOF: s("REJECTED", "Rechazado: el archivo no corresponde (verificación de formato).", "Rejected: the file failed format verification."),
    RLV: s("ACCEPTED_WITH_OBJECTIONS", "Aceptado con reparos leves.", "Accepted with minor objections."),
    RPR: s("ACCEPTED_WITH_OBJECTIONS", "Aceptado con reparos.", "Accepted with objections."),
    LOK: s("ACCEPTED", "Libro aceptado.", "Book accepted."),
    LSO: s("ACCEPTED", "Libro aceptado (sólo observaciones).", "Book accepted (remarks only)."),
    ...QUERY_ERRORS,
  },
  document: {
    DOK: s("ACCEPTED", "Documento aceptado.", "Document accepted."),
    ACE: s("ACCEPTED", "Documento aceptado.", "Document accepted."),
    RLV: s("ACCEPTED_WITH_OBJECTIONS", "Documento aceptado con reparos leves.", "Document accepted with minor objections."),
    RPR: s("ACCEPTED_WITH_OBJECTIONS", "Documento aceptado con reparos.", "Document accepted with objections."),
    RCH: s("REJECTED", "Documento rechazado.", "Document rejected."),
    RPT: s("REJECTED", "Documento rechazado por repetido (folio ya recibido).", "Document rejected as repeated (folio already received)."),
  },
  dte: {
    DOK: s("ACCEPTED", "Documento recibido por el SII; los datos coinciden.", "Document received by the SII; the data match."),
    DNK: s("REJECTED", "Documento recibido por el SII, pero los datos no coinciden con los consultados.", "The SII holds a document with this folio, but its data differ from ours."),
    FAU: s("PENDING", "Documento no recibido por el SII (aún no procesado, o rechazado en su envío).", "Document not received by the SII (not yet processed, or rejected in its envelope)."),
    FNA: s("REJECTED", "Folio no autorizado.", "Folio not authorised."),
    FAN: s("REJECTED", "Folio anulado.", "Folio annulled."),
    EMP: s("TERMINAL_ERROR", "Empresa no autorizada a emitir documentos electrónicos.", "The company is not authorised to issue electronic documents."),
    TMD: s("ACCEPTED", "Aceptado; texto modificado por una nota de débito.", "Accepted; text modified by a debit note."),
    TMC: s("ACCEPTED", "Aceptado; texto modificado por una nota de crédito.", "Accepted; text modified by a credit note."),
    MMD: s("ACCEPTED", "Aceptado; montos modificados por una nota de débito.", "Accepted; amounts modified by a debit note."),
    MMC: s("ACCEPTED", "Aceptado; montos modificados por una nota de crédito.", "Accepted; amounts modified by a credit note."),
    AND: s("ACCEPTED", "Aceptado; anulado después por una nota de débito.", "Accepted; later cancelled by a debit note."),
    ANC: s("ACCEPTED", "Aceptado; anulado después por una nota de crédito.", "Accepted; later cancelled by a credit note."),
    ...QUERY_ERRORS,
  },
};

export interface SiiStatusExplanation extends SiiStatusInfo {
  kind: SiiStatusKind;
  code: string;
  /** false when the code is not in the table (then the outcome is a guess: see explainSiiStatus). */
  known: boolean;
}

/**
 * Looks a code up. Unknown codes: negative numbers and upload/auth codes are treated as retryable
 * errors (an SII we do not understand is not a verdict); unknown envelope or document codes stay
 * PENDING so that nothing is finalised on a code we cannot read.
 */
export function explainSiiStatus(kind: SiiStatusKind, code: string | number): SiiStatusExplanation {
  const c = String(code).trim();
  const known = SII_STATUS_TEXT[kind][c] ?? SII_STATUS_TEXT[kind][c.toUpperCase()];
  if (known) return { ...known, kind, code: c, known: true };
  const retry = /^-\d+$/.test(c) || kind === "upload" || kind === "auth";
  return {
    kind,
    code: c,
    known: false,
    outcome: retry ? "RETRYABLE_ERROR" : "PENDING",
    es: `Código del SII no reconocido: ${c}.`,
    en: `Unrecognised SII code: ${c}.`,
  };
}

/** Per-type counts of an envelope (QueryEstUp RESP_BODY, boleta REST `estadistica`). */
export interface EnvioTypeCounts {
  type: number;
  informed: number;
  accepted: number;
  rejected: number;
  /** Accepted with objections (reparos). Counted inside `accepted` by the SII; treated either way here. */
  objected: number;
}

/** What an envelope means for its documents. PARTIAL: some rejected, some not (query each document). */
export type EnvioOutcome = SiiOutcome | "PARTIAL";

/**
 * Outcome of an envelope from its state and counts. EPR: all rejected -> REJECTED; none rejected
 * and some objected -> ACCEPTED_WITH_OBJECTIONS; none rejected -> ACCEPTED; otherwise PARTIAL.
 */
export function envioOutcome(estado: string, counts: EnvioTypeCounts[]): EnvioOutcome {
  const info = explainSiiStatus("envio", estado);
  if (estado !== "EPR") return info.outcome;
  const informed = counts.reduce((a, c) => a + c.informed, 0);
  const rejected = counts.reduce((a, c) => a + c.rejected, 0);
  const objected = counts.reduce((a, c) => a + c.objected, 0);
  if (counts.length === 0 || informed === 0) return "PENDING"; // EPR without counts yet
  if (rejected >= informed) return "REJECTED";
  if (rejected > 0) return "PARTIAL";
  return objected > 0 ? "ACCEPTED_WITH_OBJECTIONS" : "ACCEPTED";
}
