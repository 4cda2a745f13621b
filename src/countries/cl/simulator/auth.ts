/** Seed and token (CrSeed, GetTokenFromSeed and the boleta REST equivalents): the signed seed is checked. */
import { type Db } from "../../../storage/db/client";
import { firstChild, parseXml, type XElement } from "../xml/xml";
import { verifyChildSignature } from "../xml/xmldsig";
import { buildRespuesta } from "../sii/wire";
import { consumeSeed, issueToken, type Channel } from "./store";

// ---- token request --------------------------------------------------------------------------------

export async function tokenAnswer(db: Db, pszXml: string, channel: Channel, now: Date): Promise<string> {
  const fail = (estado: string, glosa: string) => buildRespuesta([["ESTADO", estado], ["GLOSA", glosa]]);
  let root: XElement;
  let doc;
  try {
    doc = parseXml(pszXml.trim(), "The token request");
    root = doc.documentElement as XElement;
  } catch {
    return fail("01", "Error: XML de entrada mal formado");
  }
  const item = root.localName === "getToken" ? firstChild(root, "item") : undefined;
  if (!item) return fail("02", "Error: la raiz debe ser getToken/item");
  const sig = await verifyChildSignature(doc, root, { fallbacks: true });
  if (!sig.ok) {
    if (sig.failure === "SIGNATURE_MISSING") return fail("04", "Error: solicitud sin firma");
    if (/different keys/.test(sig.message ?? "")) return fail("21", "Error: la llave publica no corresponde al certificado");
    if (/carries no key/.test(sig.message ?? "")) return fail("11", "Error: la firma no trae certificado");
    return fail("05", `Error: firma invalida (${sig.message ?? sig.failure})`);
  }
  if (sig.reference !== "") return fail("05", "Error: la firma debe cubrir el documento completo (Reference URI=\"\")");
  if (!sig.signer) return fail("11", "Error: la firma no trae certificado X509");
  const seed = (firstChild(item, "Semilla")?.textContent ?? "").trim();
  if (!/^\d+$/.test(seed)) return fail("06", "Error: falta la semilla");
  const problem = await consumeSeed(db, seed, channel, now);
  if (problem) return fail("08", problem === "expired" ? "Error: semilla vencida (mas de 2 minutos)" : problem === "used" ? "Error: semilla ya utilizada" : "Error: semilla no existe");
  if (sig.signer.notBefore.getTime() > now.getTime() || sig.signer.notAfter.getTime() < now.getTime()) return fail("-3", "Error de autenticacion: certificado no vigente");
  if (!sig.signer.rut) return fail("-07", "Error: el certificado no trae el RUT del titular");
  const token = await issueToken(db, channel, sig.signer.rut, sig.signer.fingerprintSha1, now);
  return buildRespuesta([["ESTADO", "00"], ["GLOSA", "Token Creado"]], [["TOKEN", token]]);
}
