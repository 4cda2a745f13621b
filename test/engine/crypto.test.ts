import { env } from "cloudflare:workers";
import forge from "node-forge";
import { describe, expect, it } from "vitest";
import { b64decode, pemDecode, spkiFromCertificate, b64encode } from "../../src/countries/cl/pki/asn1";
import { assertCafUsable, parseCaf, addSixMonths } from "../../src/countries/cl/documents/caf";
import { EngineError } from "../../src/countries/cl/errors";
import { SII_CAF_KEYS } from "../../src/countries/cl/pki/sii-keys";
import { issueSimulatorCaf } from "../../src/countries/cl/simulator/caf";
import { stampTed, verifyTed } from "../../src/countries/cl/documents/ted";
import { decodeLatin1 } from "../../src/countries/cl/xml/xml";
import { loadSigningCredentials, openPfx, readCertificate } from "../../src/countries/cl/pki/certificate";
import { makeFakeCertificate, makeFakePfx } from "../helpers/fake-certificates";
import legacyPfxB64 from "../fixtures/cl/fake-legacy-rc2.pfx.b64?raw";
import modernPfxB64 from "../fixtures/cl/fake-modern-aes.pfx.b64?raw";

async function rejects(p: Promise<unknown>): Promise<EngineError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof EngineError) return e;
    throw e;
  }
  throw new Error("expected an EngineError");
}

const base = { rut: "76086428-5", legalName: "EMPRESA DE PRUEBA ÑANDÚ SPA", documentType: 33, from: 1, to: 100, authorizedOn: "2026-06-30" };

/**
 * The TED of the SII's official example DTE (F60T33, certification CAF signed by SII key IDK 100),
 * public SII sample data, as published in the SII's documentation.
 */
const SII_SAMPLE_TED = `<TED version="1.0">
	<DD>
		<RE>97975000-5</RE>
		<TD>33</TD>
		<F>60</F>
		<FE>2003-10-13</FE>
		<RR>77777777-7</RR>
		<RSR>EMPRESA  LTDA</RSR>
		<MNT>119000</MNT>
		<IT1>Parlantes Multimedia 180W.</IT1>
		<CAF version="1.0">
			<DA>
				<RE>97975000-5</RE>
				<RS>RUT DE PRUEBA</RS>
				<TD>33</TD>
				<RNG>
					<D>1</D>
					<H>200</H>
				</RNG>
				<FA>2003-09-04</FA>
				<RSAPK>
					<M>0a4O6Kbx8Qj3K4iWSP4w7KneZYeJ+g/prihYtIEolKt3cykSxl1zO8vSXu397QhTmsX7SBEudTUx++2zDXBhZw==</M>
					<E>Aw==</E>
				</RSAPK>
				<IDK>100</IDK>
			</DA>
			<FRMA algoritmo="SHA1withRSA">g1AQX0sy8NJugX52k2hTJEZAE9Cuul6pqYBdFxj1N17umW7zG/hAavCALKByHzdYAfZ3LhGTXCai5zNxOo4lDQ==</FRMA>
		</CAF>
		<TSTED>2003-10-13T09:33:20</TSTED>
	</DD>
	<FRMT algoritmo="SHA1withRSA">GbmDcS9e/jVC2LsLIe1iRV12Bf6lxsILtbQiCkh6mbjckFCJ7fj/kakFTS06Jo8i
S4HXvJj3oYZuey53Krniew==</FRMT>
</TED>`;

describe("SII keys", () => {
  it("the SPKI constants equal the keys of the SII certificates in the SII_KEYS binding", () => {
    for (const idk of [100, 300] as const) {
      const file = env.SII_KEYS[`${idk}.cer`];
      expect(file, `SII_KEYS binding lacks ${idk}.cer`).toBeTruthy();
      const bytes = b64decode(file!);
      const text = decodeLatin1(bytes);
      const der = text.includes("BEGIN CERTIFICATE") ? pemDecode(text, "CERTIFICATE")! : bytes;
      expect(b64encode(spkiFromCertificate(der))).toBe(SII_CAF_KEYS[idk]!.spki);
    }
  });
  it("verifies the SII's official sample TED: CAF FRMA with IDK 100 and FRMT with the CAF key", async () => {
    const r = await verifyTed(SII_SAMPLE_TED);
    expect(r).toMatchObject({ ok: true, cafEnvironment: "certification" });
    expect(r.dd?.MNT).toBe("119000");
    const tampered = await verifyTed(SII_SAMPLE_TED.replace("<MNT>119000</MNT>", "<MNT>119001</MNT>"));
    expect(tampered).toMatchObject({ ok: false, failure: "TED_INVALID" });
    const badCaf = await verifyTed(SII_SAMPLE_TED.replace("<RS>RUT DE PRUEBA</RS>", "<RS>RUT DE PRUEBAS</RS>"));
    expect(badCaf).toMatchObject({ ok: false, failure: "CAF_BAD_SIGNATURE" });
    expect(await verifyTed(SII_SAMPLE_TED, { mode: "simulator" })).toMatchObject({ ok: true });
    expect(await verifyTed(SII_SAMPLE_TED.replace("<IDK>100</IDK>", "<IDK>300</IDK>"))).toMatchObject({ ok: false, failure: "CAF_BAD_SIGNATURE" });
    expect(await verifyTed("<TED><nope/></TED>")).toMatchObject({ ok: false, failure: "TED_MISSING" });
  });
});

describe("CAF", () => {
  it("simulator CAF round trip: parse, verify FRMA with the simulator key, key pair, fields", async () => {
    const issued = await issueSimulatorCaf(base);
    expect(decodeLatin1(issued.xml)).toBe(issued.xmlString);
    expect(issued.xmlString).toContain("<RS>EMPRESA DE PRUEBA ÑANDÚ SPA</RS>");
    expect(issued.xmlString).toContain("-----BEGIN RSA PRIVATE KEY-----");
    const caf = await parseCaf(issued.xml, { mode: "simulator" });
    expect(caf).toMatchObject({ issuerRut: "76086428-5", documentType: 33, from: 1, to: 100, authorizedOn: "2026-06-30", idk: 999, environment: "simulator", expiresOn: "2026-12-30" });
    expect(caf.cafXml.startsWith('<CAF version="1.0"><DA><RE>76086428-5</RE>')).toBe(true);
    expect(caf.cafXml.endsWith("</FRMA></CAF>")).toBe(true);
    expect((caf.privateKey.algorithm as unknown as { modulusLength: number }).modulusLength).toBe(512);
    const exempt = await parseCaf((await issueSimulatorCaf({ ...base, documentType: 34 })).xml, { mode: "simulator" });
    expect(exempt.expiresOn).toBeNull();
    expect(addSixMonths("2026-08-31")).toBe("2027-02-28");
  });

  it("rejects: unknown IDK, bad FRMA, key mismatch, not XML, missing fields; accepts one-line PEM", async () => {
    const a = (await issueSimulatorCaf(base)).xmlString;
    const b = (await issueSimulatorCaf(base)).xmlString;
    expect((await rejects(parseCaf(a))).code).toBe("CAF_UNKNOWN_IDK");
    expect((await rejects(parseCaf(a.replace("<H>100</H>", "<H>1000</H>"), { mode: "simulator" }))).code).toBe("CAF_BAD_SIGNATURE");
    const skB = /<RSASK>[\s\S]*<\/RSASK>/.exec(b)![0];
    const pkB = /<RSAPUBK>[\s\S]*<\/RSAPUBK>/.exec(b)![0];
    expect((await rejects(parseCaf(a.replace(/<RSASK>[\s\S]*<\/RSASK>/, skB), { mode: "simulator" }))).code).toBe("CAF_KEY_MISMATCH");
    expect((await rejects(parseCaf(a.replace(/<RSAPUBK>[\s\S]*<\/RSAPUBK>/, pkB), { mode: "simulator" }))).code).toBe("CAF_KEY_MISMATCH");
    expect((await rejects(parseCaf("not xml at all", { mode: "simulator" }))).code).toBe("CAF_NOT_XML");
    expect((await rejects(parseCaf("<foo/>", { mode: "simulator" }))).code).toBe("CAF_NOT_XML");
    expect((await rejects(parseCaf(a.replace(/<FRMA[^>]*>[^<]*<\/FRMA>/, ""), { mode: "simulator" }))).code).toBe("CAF_MALFORMED");
    expect((await rejects(parseCaf(a.replace(/<RSASK>[\s\S]*<\/RSASK>/, ""), { mode: "simulator" }))).code).toBe("CAF_MALFORMED");
    const oneLine = a.replace(/<RSASK>([\s\S]*)<\/RSASK>/, (_, pem: string) => `<RSASK>${pem.replace(/\n/g, "")}</RSASK>`);
    expect((await parseCaf(oneLine, { mode: "simulator" })).from).toBe(1);
  });

  it("assertCafUsable: type, issuer, range, expiry, stamp before FA", async () => {
    const caf = await parseCaf((await issueSimulatorCaf(base)).xml, { mode: "simulator" });
    const ok = { documentType: 33, issuerRut: "76.086.428-5", folio: 5, timestamp: "2026-07-01T10:00:00" };
    expect(() => assertCafUsable(caf, ok)).not.toThrow();
    const code = (p: Partial<typeof ok>) => {
      try {
        assertCafUsable(caf, { ...ok, ...p });
        return "none";
      } catch (e) {
        return (e as EngineError).code;
      }
    };
    expect(code({ documentType: 34 })).toBe("CAF_TYPE_MISMATCH");
    expect(code({ issuerRut: "77879240-0" })).toBe("CAF_ISSUER_MISMATCH");
    expect(code({ folio: 101 })).toBe("CAF_FOLIO_OUT_OF_RANGE");
    expect(code({ folio: 0 })).toBe("CAF_FOLIO_OUT_OF_RANGE");
    expect(code({ timestamp: "2026-06-29T23:59:59" })).toBe("STAMP_BEFORE_CAF");
    expect(code({ timestamp: "2026-12-30T23:59:59" })).toBe("none");
    expect(code({ timestamp: "2026-12-31T00:00:00" })).toBe("CAF_EXPIRED");
  });
});

describe("TED", () => {
  it("stamps DD in SII order, signs it, and the stamp verifies independently (node-forge) and with verifyTed", async () => {
    const issued = await issueSimulatorCaf(base);
    const caf = await parseCaf(issued.xml, { mode: "simulator" });
    const ted = await stampTed({
      issuerRut: caf.issuerRut,
      documentType: 33,
      folio: 7,
      issueDate: "2026-07-01",
      receiverRut: "77879240-0",
      receiverName: 'CLIENTE "EL ÑANDÚ" Y ASOCIADOS LIMITADA DE RESPONSABILIDAD',
      total: "119000",
      firstItemName: "Parlantes <multimedia> & más",
      caf,
      timestamp: "2026-07-01T10:00:00",
    });
    expect(ted.xml).toMatch(/^<TED version="1\.0"><DD><RE>76086428-5<\/RE><TD>33<\/TD><F>7<\/F><FE>2026-07-01<\/FE><RR>77879240-0<\/RR><RSR>CLIENTE EL ÑANDÚ Y ASOCIADOS LIMITADA DE<\/RSR><MNT>119000<\/MNT><IT1>Parlantes &lt;multimedia&gt; &amp; más<\/IT1><CAF version="1\.0"><DA>/);
    expect(ted.xml).toMatch(/<\/CAF><TSTED>2026-07-01T10:00:00<\/TSTED><\/DD><FRMT algoritmo="SHA1withRSA">[A-Za-z0-9+/=]+<\/FRMT><\/TED>$/);
    // Independent check: node-forge RSA with RSAPUBK over the Latin-1 bytes of the DD
    const dd = /<DD>[\s\S]*<\/DD>/.exec(ted.xml)![0];
    const pub = forge.pki.publicKeyFromPem(/<RSAPUBK>([\s\S]*)<\/RSAPUBK>/.exec(issued.xmlString)![1]!);
    const md = forge.md.sha1.create();
    md.update(dd, "raw"); // "raw" = one byte per char code, i.e. ISO-8859-1
    expect(pub.verify(md.digest().bytes(), forge.util.decode64(ted.frmt))).toBe(true);
    expect(await verifyTed(ted.xml, { mode: "simulator" })).toMatchObject({ ok: true });
    expect(await verifyTed(ted.xml.replace("<F>7</F>", "<F>8</F>"), { mode: "simulator" })).toMatchObject({ ok: false, failure: "TED_INVALID" });
    expect(await verifyTed(ted.xml)).toMatchObject({ ok: false, failure: "CAF_UNKNOWN_IDK" });
    expect(ted.bytes.length).toBe(ted.flattened.length);
  });

  it("the per-CAF verdict cache never lets a tampered CAF through, before or after the genuine one was seen", async () => {
    const caf = await parseCaf((await issueSimulatorCaf({ ...base, from: 1, to: 10 })).xml, { mode: "simulator" });
    const ted = await stampTed({ issuerRut: caf.issuerRut, documentType: 33, folio: 3, issueDate: "2026-07-01", receiverRut: "77879240-0", receiverName: "X", total: "1", firstItemName: "Y", caf, timestamp: "2026-07-01T10:00:00" });
    const widened = ted.xml.replace("<H>10</H>", "<H>99</H>");
    const otherKey = ted.xml.replace(/<M>[^<]{8}/, "<M>AAAAAAAA");
    expect(widened).not.toBe(ted.xml);
    expect(otherKey).not.toBe(ted.xml);
    for (let round = 0; round < 2; round++) {
      expect(await verifyTed(widened, { mode: "simulator" })).toMatchObject({ ok: false, failure: "CAF_BAD_SIGNATURE" });
      expect(await verifyTed(ted.xml, { mode: "simulator" })).toMatchObject({ ok: true });
      expect(await verifyTed(otherKey, { mode: "simulator" })).toMatchObject({ ok: false, failure: "CAF_BAD_SIGNATURE" });
      // The same CAF under another trust mode gets its own verdict.
      expect(await verifyTed(ted.xml)).toMatchObject({ ok: false, failure: "CAF_UNKNOWN_IDK" });
    }
    // Namespaces around the same CAF do not change its verdict (they are not part of what FRMA signs).
    expect(await verifyTed(ted.xml.replace("<TED ", '<TED xmlns="http://www.sii.cl/SiiDte" '), { mode: "simulator" })).toMatchObject({ ok: true });
  });
});

describe("certificates", () => {
  it("opens OpenSSL legacy (RC2-40/3DES, SHA-1 MAC) and modern (AES-256/PBKDF2, SHA-256 MAC) files", () => {
    for (const b64 of [legacyPfxB64, modernPfxB64]) {
      const c = openPfx(b64decode(b64), "test-only-1234");
      expect(c.rut).toBe("11111111-1");
      expect(c.subjectCN).toBe("PERSONA DE PRUEBA FALSA (TEST ONLY)");
      expect(c.notAfter.getTime()).toBeGreaterThan(c.notBefore.getTime());
      expect(c.privateKeyPkcs8[0]).toBe(0x30);
      expect(c.modulus.length).toBe(256);
      const e = (() => { try { openPfx(b64decode(b64), "wrong"); } catch (x) { return x as EngineError; } })();
      expect(e?.code).toBe("CERT_WRONG_PASSWORD");
    }
  });

  it("opens forge-made legacy and modern files, picks the key's certificate among several, imports the key", async () => {
    const ca = await makeFakeCertificate({ cn: "FAKE CA", rut: null, bits: 1024 });
    const holder = await makeFakeCertificate({ rut: "12345678-5", cn: "JUAN PRUEBA", issuer: ca });
    for (const kind of ["legacy", "modern"] as const) {
      const pfx = makeFakePfx(holder, "clave", kind, { extraCerts: [ca] });
      const c = await loadSigningCredentials(pfx, "clave");
      expect(c).toMatchObject({ rut: "12345678-5", subjectCN: "JUAN PRUEBA", issuerCN: "FAKE CA" });
      const sig = await crypto.subtle.sign("RSASSA-PKCS1-v1_5", c.privateKey, new TextEncoder().encode("x"));
      expect(sig.byteLength).toBe(256);
    }
    expect(readCertificate(holder.certPem).rut).toBe("12345678-5");
    expect(readCertificate(ca.certDer).rut).toBeNull();
  });

  it("typed errors: not a pfx, wrong password, no key, key/certificate mismatch", async () => {
    const a = await makeFakeCertificate({ bits: 1024 });
    const b = await makeFakeCertificate({ bits: 1024 });
    const code = (f: () => unknown) => { try { f(); return "none"; } catch (e) { return (e as EngineError).code; } };
    expect(code(() => openPfx(new TextEncoder().encode("hello, I am not a pfx"), "x"))).toBe("CERT_NOT_PFX");
    expect(code(() => openPfx(new Uint8Array([0x30, 0x03, 0x02, 0x01, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]), "x"))).toBe("CERT_NOT_PFX");
    expect(code(() => openPfx(makeFakePfx(a, "right", "modern"), "wrong"))).toBe("CERT_WRONG_PASSWORD");
    expect(code(() => openPfx(makeFakePfx(a, "right", "legacy", { noKey: true }), "right"))).toBe("CERT_NO_PRIVATE_KEY");
    expect(code(() => openPfx(makeFakePfx(a, "right", "legacy", { certs: [b.cert] }), "right"))).toBe("CERT_KEY_MISMATCH");
  });
});
