/**
 * XML files inside a zip attachment, with limits against zip bombs: entry count, total uncompressed
 * size and expansion ratio are counted on the bytes actually inflated (fflate streaming), never on
 * the sizes the archive claims.
 */
import { Unzip, UnzipInflate, UnzipPassThrough } from "fflate";

export const ZIP_LIMITS = { maxEntries: 200, maxTotalBytes: 20 * 1024 * 1024, maxRatio: 100 } as const;

export class ZipRefused extends Error {}

/** A file taken from a message: its name as sent (an attachment's, a zip entry's; display only) and its bytes. */
export interface NamedFile {
  name: string | null;
  bytes: Uint8Array;
}

export function xmlFilesInZip(zip: Uint8Array, limits = ZIP_LIMITS): NamedFile[] {
  const out: NamedFile[] = [];
  let entries = 0;
  let total = 0;
  const budget = Math.min(limits.maxTotalBytes, zip.length * limits.maxRatio);
  const uz = new Unzip();
  uz.register(UnzipInflate);
  uz.register(UnzipPassThrough);
  uz.onfile = (f) => {
    if (++entries > limits.maxEntries) throw new ZipRefused(`The zip holds more than ${limits.maxEntries} entries.`);
    if (!/\.xml$/i.test(f.name)) return;
    const chunks: Uint8Array[] = [];
    let size = 0;
    f.ondata = (err, chunk, final) => {
      if (err) throw new ZipRefused(`The zip entry cannot be read: ${err.message}`);
      size += chunk.length;
      total += chunk.length;
      if (total > budget) throw new ZipRefused(`The zip expands beyond ${budget} bytes (at most ${limits.maxTotalBytes} bytes and ${limits.maxRatio}× its size).`);
      chunks.push(chunk);
      if (final) {
        const all = new Uint8Array(size);
        let at = 0;
        for (const c of chunks) (all.set(c, at), (at += c.length));
        out.push({ name: f.name.split("/").pop() || null, bytes: all });
      }
    };
    f.start();
  };
  try {
    uz.push(zip, true);
  } catch (e) {
    if (e instanceof ZipRefused) throw e;
    throw new ZipRefused(`The zip cannot be read: ${(e as Error).message}`);
  }
  return out;
}
