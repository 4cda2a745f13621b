/**
 * CAF files at rest. A CAF carries the RSASK private key that stamps the company's documents, so the
 * file is sealed (AES-GCM under the master key ring, bound to the CAF id) before it reaches R2.
 * Objects written before sealing existed end in `.xml` (plain); `npm run keys:rotate` seals them.
 */
import { open, seal } from "../lib/secrets";
import { r2Keys } from "../storage/keys";
import { sealedAs } from "../storage/sealed";

/** Whether an R2 key names a sealed CAF (every one written now) or a plain one from before. */
export const isSealedCafKey = (key: string) => key.endsWith(".sealed");

export async function storeCafFile(env: Env, companyId: string, documentType: number, cafId: string, file: Uint8Array): Promise<string> {
  const key = r2Keys.caf(companyId, documentType, cafId);
  await env.FILES.put(key, await seal(env.MASTER_KEY!, file, sealedAs.caf(cafId)), { httpMetadata: { contentType: "application/octet-stream" } });
  return key;
}

/** The CAF file as received, or null when the object is missing. */
export async function readCafFile(env: Env, row: { id: string; fileKey: string }): Promise<Uint8Array | null> {
  const object = await env.FILES.get(row.fileKey);
  if (!object) return null;
  const bytes = new Uint8Array(await object.arrayBuffer());
  return isSealedCafKey(row.fileKey) ? open(env.MASTER_KEY!, bytes, sealedAs.caf(row.id)) : bytes;
}
