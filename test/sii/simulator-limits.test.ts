/**
 * The simulated SII's schema, envelope-limit, carátula and encoding rules through its real upload
 * wire protocol (DTEUpload multipart and the boleta REST upload, then the status queries), each
 * named by its id in docs/simulator-fidelity.md. The envelopes are written and signed by the
 * engine's own functions; what the engine refuses to build (too many DTEs, wrong SubTotDTE counts, a
 * field over its length) is made with `signEnvelopeAsGiven` and DTEs edited before signing.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import type { Caf } from "../../src/countries/cl/documents/caf";
import type { SignedDte } from "../../src/countries/cl/documents/dte";
import { signEnvelopeAsGiven } from "../../src/countries/cl/exchange/envelopes";
import type { SigningCredentials } from "../../src/countries/cl/pki/certificate";
import { SiiError } from "../../src/countries/cl/sii/errors";
import { encodeLatin1, parseXml } from "../../src/countries/cl/xml/xml";
import { MAX_FILE_BYTES } from "../../src/countries/cl/simulator/common";
import { validateEnvio } from "../../src/countries/cl/simulator/validate";
import { envelope, expectStates, fakeCredentials, HOLDER_RUT, ISSUER_RUT, signedDte, simulatorCaf, TIMESTAMP, unsafeDte, uploadAndPoll, workerClient } from "./helpers";

const client = workerClient();
let cert: SigningCredentials;
let caf33: Caf;

beforeAll(async () => {
  cert = await fakeCredentials();
  caf33 = await simulatorCaf({ documentType: 33, from: 1, to: 3000 });
});

const params = (dtes: SignedDte[]) => ({ dtes, issuerRut: ISSUER_RUT, senderRut: HOLDER_RUT, resolution: { date: "2026-01-15", number: 0 }, timestamp: TIMESTAMP, signer: cert });

/** Uploads an EnvioDTE through DTEUpload and polls QueryEstUp to its final state. */
const uploadAndSettle = (file: Uint8Array) => uploadAndPoll(client, cert, () => client.uploadEnvio({ cert, companyRut: ISSUER_RUT, file }));

/** The reasons the simulator recorded for an envelope's rejection. */
async function envelopeErrors(trackId: string): Promise<string[]> {
  const row = await env.DB.prepare("select errors from sim_envios where track_id = ?").bind(Number(trackId)).first<{ errors: string }>();
  return JSON.parse(row!.errors) as string[];
}

async function uploadRefusal(file: Uint8Array): Promise<SiiError> {
  try {
    await client.uploadEnvio({ cert, companyRut: ISSUER_RUT, file });
  } catch (e) {
    if (e instanceof SiiError) return e;
    throw e;
  }
  throw new Error("expected the upload to be refused");
}

describe("envelope limits and carátula counts", () => {
  it("[ENV-MAX] 501 boletas in one EnvioBOLETA through the REST upload: RSC; 500 pass the schema", async () => {
    const caf39 = await simulatorCaf({ documentType: 39, from: 1, to: 600 });
    const boletas: SignedDte[] = [];
    for (let f = 1; f <= 501; f++) boletas.push(await signedDte(caf39, f, cert, "39"));
    const over = await signEnvelopeAsGiven("EnvioBOLETA", params(boletas), [{ type: 39, count: 501 }]);
    expect(over.xml.length, "fits the simulator's upload size").toBeLessThanOrEqual(MAX_FILE_BYTES);
    const up = await client.uploadBoleta({ cert, companyRut: ISSUER_RUT, file: over.xml });
    expect(up.status).toBe(0);
    let st;
    for (let i = 0; i < 4 && st?.estado !== "RSC"; i++) st = await client.queryBoletaEnvio({ cert, companyRut: ISSUER_RUT, trackId: up.trackId });
    expect(st).toMatchObject({ estado: "RSC", outcome: "REJECTED" });
    expect(await envelopeErrors(up.trackId)).toEqual(["SetDTE debe tener entre 1 y 500 DTE (tiene 501)"]);
    // The same boletas less one: the envelope limit no longer applies (the engine builds it itself).
    const within = await envelope(boletas.slice(0, 500), cert);
    const v = await validateEnvio(parseXml(within.xmlString), "EnvioBOLETA", { companyRut: ISSUER_RUT, now: new Date(), acceptedAmong: async () => new Set() });
    expect(v.finalStatus, v.errors.join("; ")).toBe("EPR");
    expect(v.documents.filter((d) => d.status === "DOK")).toHaveLength(500);
  }, 120_000);

  it("[ENV-MAX] 2,001 DTEs in one EnvioDTE: RSC (checked in process: the file is over the 2 MiB upload size)", async () => {
    const dtes: SignedDte[] = [];
    for (let f = 1; f <= 2001; f++) dtes.push(await signedDte(caf33, f, cert));
    const over = await signEnvelopeAsGiven("EnvioDTE", params(dtes), [{ type: 33, count: 2001 }]);
    expect(over.xml.length).toBeGreaterThan(MAX_FILE_BYTES);
    const v = await validateEnvio(parseXml(over.xmlString), "EnvioDTE", { companyRut: ISSUER_RUT, now: new Date(), acceptedAmong: async () => new Set() });
    expect(v).toMatchObject({ finalStatus: "RSC", errors: ["SetDTE debe tener entre 1 y 2000 DTE (tiene 2001)"] });
  }, 180_000);

  it("[CAR-SUBTOT] SubTotDTE counts that differ from the envelope's DTEs: RCT", async () => {
    const two = [await signedDte(caf33, 2101, cert), await signedDte(caf33, 2102, cert)];
    for (const wrong of [[{ type: 33, count: 3 }], [{ type: 33, count: 1 }], [{ type: 33, count: 2 }, { type: 34, count: 1 }], [{ type: 34, count: 2 }]]) {
      const env = await signEnvelopeAsGiven("EnvioDTE", params(two), wrong);
      const r = await uploadAndSettle(env.xml);
      expectStates(r, ["REC", "SOK", "RCT"], JSON.stringify(wrong));
      expect(await envelopeErrors(r.trackId)).toEqual(["SubTotDTE no coincide con los DTE del envio"]);
    }
    // The right counts, written the same way: processed.
    const right = await signEnvelopeAsGiven("EnvioDTE", params(two), [{ type: 33, count: 2 }]);
    expect((await uploadAndSettle(right.xml)).seen.at(-1)).toBe("EPR");
  }, 60_000);
});

describe("the whole schema (RSC) and the file's encoding (STATUS 7)", () => {
  it("[FIELD-LEN] an item name over 80 characters: RSC, named by its place in the envelope", async () => {
    const long = await unsafeDte(caf33, 2201, cert, "33", (x) => x.replace("<NmbItem>Servicio de prueba</NmbItem>", `<NmbItem>${"N".repeat(81)}</NmbItem>`));
    const r = await uploadAndSettle((await envelope([long], cert)).xml);
    expectStates(r, ["REC", "RSC"]);
    expect(await envelopeErrors(r.trackId)).toEqual([`EnvioDTE/SetDTE/DTE[1]/Documento/Detalle[1]/NmbItem: '${"N".repeat(40)}…' is longer than 80 characters`]);
  });

  it("[SCH-XSD] an element the schema does not have, and one out of its place: RSC", async () => {
    const unknown = await unsafeDte(caf33, 2202, cert, "33", (x) => x.replace("</IdDoc>", "<Descuento>5</Descuento></IdDoc>"));
    const r1 = await uploadAndSettle((await envelope([unknown], cert)).xml);
    expectStates(r1, ["REC", "RSC"]);
    expect(await envelopeErrors(r1.trackId)).toEqual(["EnvioDTE/SetDTE/DTE[1]/Documento/Encabezado/IdDoc/Descuento: unexpected element (not allowed here by the schema)"]);
    const swapped = await unsafeDte(caf33, 2203, cert, "33", (x) => x.replace(/(<RUTRecep>[^<]*<\/RUTRecep>)(\s*)(<RznSocRecep>[^<]*<\/RznSocRecep>)/, "$3$2$1"));
    expect(swapped.element).toMatch(/<RznSocRecep>[^<]*<\/RznSocRecep>\s*<RUTRecep>/);
    const r2 = await uploadAndSettle((await envelope([swapped], cert)).xml);
    expectStates(r2, ["REC", "RSC"]);
    expect(await envelopeErrors(r2.trackId)).toEqual(["EnvioDTE/SetDTE/DTE[1]/Documento/Encabezado/Receptor: RUTRecep is missing (found RznSocRecep instead)", expect.stringMatching(/^EnvioDTE\/SetDTE\/DTE\[1\]\/Documento\/Encabezado\/Receptor\/RUTRecep: unexpected element/)]);
  });

  it("[LATIN1] UTF-8 bytes of characters outside Latin-1, another declared encoding, a BOM: STATUS 7; Latin-1 accents pass", async () => {
    const good = await envelope([await signedDte(caf33, 2301, cert)], cert);
    const utf8 = new TextEncoder().encode(good.xmlString.replace("Servicio de prueba", "Servicio “de prueba”"));
    const e1 = await uploadRefusal(utf8);
    expect(e1).toMatchObject({ code: "UPLOAD_REFUSED", siiCode: "7" });
    expect(e1.message).toMatch(/LATIN1: byte 0x80 en la posicion \d+ no es un caracter ISO-8859-1/);
    const declared = encodeLatin1(good.xmlString.replace('encoding="ISO-8859-1"', 'encoding="UTF-8"'));
    expect((await uploadRefusal(declared)).message).toMatch(/LATIN1: encoding declarado 'UTF-8'; debe ser ISO-8859-1/);
    const bom = new Uint8Array([0xef, 0xbb, 0xbf, ...good.xml]);
    expect((await uploadRefusal(bom)).message).toMatch(/LATIN1: el archivo trae BOM UTF-8/);
    // ñ and á as ISO-8859-1 bytes are what the SII expects: processed.
    const accents = await signedDte(caf33, 2302, cert, "33", { items: [{ quantity: 1, unit_price: 1000, description: "Diseño gráfico" }] });
    const ok = await envelope([accents], cert);
    expect([...ok.xml].some((b) => b === 0xf1)).toBe(true);
    expect((await uploadAndSettle(ok.xml)).seen.at(-1)).toBe("EPR");
  });
});
