/**
 * End-to-end engine tests inside workerd: every document type is computed, stamped, signed and put
 * into its envelope; every signature is verified by an implementation independent of the signing
 * path (xmldsigjs, which has its own C14N) and by the engine's inbound verifier; tampering is caught.
 * (XSD validation of the same samples runs in test/node/cl/schemas.test.ts.)
 */
import { DOMParser, DOMImplementation, XMLSerializer } from "@xmldom/xmldom";
import { setNodeDependencies } from "xml-core";
import * as xmldsig from "xmldsigjs";
import xpath from "xpath";
import { beforeAll, describe, expect, it } from "vitest";
import { buildDteXml } from "../../../src/countries/cl/dte";
import { computeDocument } from "../../../src/countries/cl/invoice";
import { stampTed } from "../../../src/countries/cl/ted";
import { verifyInbound } from "../../../src/countries/cl/verify";
import { signXml, buildTokenRequest, verifyChildSignature } from "../../../src/countries/cl/xmldsig";
import { parseXml, NS_DSIG, type XElement } from "../../../src/countries/cl/xml";
import { loadSigningCredentials } from "../../../src/countries/cl/certificate";
import { buildSamples, SAMPLE_INPUTS, type SampleSet } from "../../helpers/cl-samples";
import { makeFakeCertificate, makeFakePfx } from "../../helpers/fake-certificates";

setNodeDependencies({ DOMParser, XMLSerializer, DOMImplementation, xpath });
xmldsig.Application.setEngine("workerd", crypto);

let set: SampleSet;
beforeAll(async () => {
  set = await buildSamples();
});

/** Verifies every ds:Signature in the text with xmldsigjs (independent C14N and verifier). */
async function xmldsigjsVerifyAll(xml: string): Promise<number> {
  const doc = new DOMParser().parseFromString(xml, "text/xml") as unknown as Document;
  const sigs = Array.from(doc.getElementsByTagNameNS(NS_DSIG, "Signature"));
  for (const sig of sigs) {
    const signed = new xmldsig.SignedXml(doc);
    signed.LoadXml(sig as unknown as Element);
    const ok = await signed.Verify();
    if (!ok) throw new Error("xmldsigjs: signature does not verify");
  }
  return sigs.length;
}

describe("every produced XML", () => {
  it("is signed in the SII profile and verifies with xmldsigjs", async () => {
    let count = 0;
    for (const s of set.samples) {
      const n = await xmldsigjsVerifyAll(s.xmlString);
      expect(n, s.name).toBeGreaterThan(0);
      count += n;
      // SII profile: unprefixed Signature, c14n 1.0, rsa-sha1, sha1, exactly one Reference
      expect(s.xmlString).not.toContain("<ds:");
      expect(s.xmlString).toContain('<Signature xmlns="http://www.w3.org/2000/09/xmldsig#">');
      expect(s.xmlString).toContain('<CanonicalizationMethod Algorithm="http://www.w3.org/TR/2001/REC-xml-c14n-20010315"></CanonicalizationMethod>');
      expect(s.xmlString).toContain('<SignatureMethod Algorithm="http://www.w3.org/2000/09/xmldsig#rsa-sha1"></SignatureMethod>');
      expect(s.xmlString).toContain("<X509Certificate>");
      expect(s.xmlString).toContain("<RSAKeyValue>");
    }
    // 13 DTE + (11+1 DTE + 1) + (1+1) + (2+1) + 1 + 1 + (1+1) + 1
    expect(count).toBeGreaterThan(30);
  });

  it("the engine's own verifier accepts every envelope strictly (no namespace fallbacks)", async () => {
    for (const name of ["EnvioDTE to SII", "EnvioDTE to recipient", "EnvioBOLETA"]) {
      const s = set.samples.find((x) => x.name === name)!;
      const r = await verifyInbound(s.xml, { mode: "simulator", fallbacks: false });
      expect(r.failure, `${name}: ${r.message}`).toBeUndefined();
      expect(r.ok).toBe(true);
      expect(r.envelopeSignature?.signer?.rut).toBe("11111111-1");
      for (const d of r.documents) expect(d.signature.digestMode).toBe("context");
    }
    const toSii = await verifyInbound(set.samples.find((x) => x.name === "EnvioDTE to SII")!.xml, { mode: "simulator" });
    expect(toSii.documents).toHaveLength(11);
    expect(toSii.caratula).toMatchObject({ rutEmisor: "76086428-5", rutEnvia: "11111111-1", rutReceptor: "60803000-K" });
    for (const d of Object.values(set.dtes)) {
      const r = await verifyInbound(d.xml, { mode: "simulator", fallbacks: false });
      expect(r.ok, `${d.id}: ${r.message}`).toBe(true);
    }
  });

  it("token request: enveloped signature over the whole document", async () => {
    const token = set.samples.find((s) => s.name === "token request")!.xmlString;
    expect(token).toMatch(/^<\?xml version="1.0"\?>\n<getToken><item><Semilla>012345678<\/Semilla><\/item><Signature xmlns="http:\/\/www.w3.org\/2000\/09\/xmldsig#">/);
    expect(token).toContain('<Reference URI="">');
    expect(token).toContain('<Transform Algorithm="http://www.w3.org/2000/09/xmldsig#enveloped-signature"></Transform>');
    const doc = parseXml(token);
    expect((await verifyChildSignature(doc, doc.documentElement as XElement)).ok).toBe(true);
    const bad = parseXml(token.replace("012345678", "012345679"));
    expect((await verifyChildSignature(bad, bad.documentElement as XElement)).failure).toBe("SIGNATURE_INVALID");
  });
});

describe("golden sections", () => {
  it("33: Encabezado, Detalle and Referencia exactly as the SII expects them", () => {
    const x = set.dtes["33"]!.xmlString;
    expect(x.startsWith('<?xml version="1.0" encoding="ISO-8859-1"?>\n<DTE xmlns="http://www.sii.cl/SiiDte" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" version="1.0">\n<Documento ID="F1T33">\n')).toBe(true);
    expect(x).toContain(
      "<IdDoc>\n<TipoDTE>33</TipoDTE>\n<Folio>1</Folio>\n<FchEmis>2026-11-20</FchEmis>\n<FmaPago>2</FmaPago>\n<FchVenc>2026-12-20</FchVenc>\n</IdDoc>\n" +
        "<Emisor>\n<RUTEmisor>76086428-5</RUTEmisor>\n<RznSoc>EMPRESA DE PRUEBA SPA</RznSoc>\n<GiroEmis>Desarrollo de software y servicios informáticos</GiroEmis>\n<Acteco>620200</Acteco>\n<Acteco>631100</Acteco>\n<Sucursal>1</Sucursal>\n<DirOrigen>Av. Siempre Viva 123</DirOrigen>\n<CmnaOrigen>Santiago</CmnaOrigen>\n<CiudadOrigen>Santiago</CiudadOrigen>\n</Emisor>\n" +
        "<Receptor>\n<RUTRecep>77879240-0</RUTRecep>\n<RznSocRecep>COMERCIAL ÑANDÚ &amp; CÍA. LIMITADA</RznSocRecep>\n<GiroRecep>Comercio al por menor</GiroRecep>\n<DirRecep>Irarrázaval 2401, of. 5</DirRecep>\n<CmnaRecep>Ñuñoa</CmnaRecep>\n<CiudadRecep>Ñuñoa</CiudadRecep>\n</Receptor>\n" +
        "<Totales>\n<MntNeto>3990</MntNeto>\n<MntExe>5000</MntExe>\n<TasaIVA>19</TasaIVA>\n<IVA>758</IVA>\n<ImptoReten>\n<TipoImp>271</TipoImp>\n<TasaImp>18</TasaImp>\n<MontoImp>178</MontoImp>\n</ImptoReten>\n<MntTotal>9926</MntTotal>\n</Totales>\n</Encabezado>\n" +
        '<Detalle>\n<NroLinDet>1</NroLinDet>\n<NmbItem>Licencia anual "Pro" &lt;ed. 2026&gt;</NmbItem>\n<QtyItem>2</QtyItem>\n<UnmdItem>UN</UnmdItem>\n<PrcItem>1500.5</PrcItem>\n<DescuentoMonto>1</DescuentoMonto>\n<MontoItem>3000</MontoItem>\n</Detalle>\n' +
        "<Detalle>\n<NroLinDet>2</NroLinDet>\n<NmbItem>Bebida analcohólica</NmbItem>\n<QtyItem>1</QtyItem>\n<PrcItem>990</PrcItem>\n<CodImpAdic>271</CodImpAdic>\n<MontoItem>990</MontoItem>\n</Detalle>\n" +
        "<Detalle>\n<NroLinDet>3</NroLinDet>\n<IndExe>1</IndExe>\n<NmbItem>Curso exento</NmbItem>\n<QtyItem>1</QtyItem>\n<PrcItem>5000</PrcItem>\n<MontoItem>5000</MontoItem>\n</Detalle>\n" +
        "<Referencia>\n<NroLinRef>1</NroLinRef>\n<TpoDocRef>801</TpoDocRef>\n<FolioRef>OC-4500</FolioRef>\n<FchRef>2026-11-01</FchRef>\n</Referencia>\n" +
        '<TED version="1.0"><DD><RE>76086428-5</RE><TD>33</TD><F>1</F><FE>2026-11-20</FE><RR>77879240-0</RR><RSR>COMERCIAL ÑANDÚ &amp; CÍA. LIMITADA</RSR><MNT>9926</MNT><IT1>Licencia anual Pro &lt;ed. 2026&gt;</IT1><CAF version="1.0"><DA><RE>76086428-5</RE>',
    );
    expect(x).toMatch(/<TSTED>2026-11-20T10:30:05<\/TSTED><\/DD><FRMT algoritmo="SHA1withRSA">[^<]+<\/FRMT><\/TED>\n<TmstFirma>2026-11-20T10:30:05<\/TmstFirma>\n<\/Documento>\n<Signature xmlns="http:\/\/www.w3.org\/2000\/09\/xmldsig#">\n<SignedInfo>\n/);
    expect(x).toContain('<Reference URI="#F1T33">\n<Transforms>\n<Transform Algorithm="http://www.w3.org/TR/2001/REC-xml-c14n-20010315"></Transform>\n</Transforms>');
  });

  it("notes, boletas and exports carry their specific fields", () => {
    expect(set.dtes["61"]!.xmlString).toContain("<Referencia>\n<NroLinRef>1</NroLinRef>\n<TpoDocRef>33</TpoDocRef>\n<FolioRef>1</FolioRef>\n<FchRef>2026-11-20</FchRef>\n<CodRef>1</CodRef>\n<RazonRef>ANULA DOCUMENTO DE REFERENCIA</RazonRef>\n</Referencia>");
    expect(set.dtes["61-COT"]!.xmlString).toContain("<Totales>\n<MntNeto>0</MntNeto>\n<TasaIVA>19</TasaIVA>\n<IVA>0</IVA>\n<MntTotal>0</MntTotal>\n</Totales>");
    expect(set.dtes["61-COT"]!.xmlString).toContain("<CodRef>2</CodRef>\n<RazonRef>DONDE DICE Comercio DEBE DECIR Comercio minorista</RazonRef>");
    expect(set.dtes["46"]!.xmlString).toContain("<IVA>6650</IVA>\n<ImptoReten>\n<TipoImp>15</TipoImp>\n<TasaImp>19</TasaImp>\n<MontoImp>6650</MontoImp>\n</ImptoReten>\n<MntTotal>35000</MntTotal>");
    expect(set.dtes["39"]!.xmlString).toContain("<IdDoc>\n<TipoDTE>39</TipoDTE>\n<Folio>1</Folio>\n<FchEmis>2026-11-20</FchEmis>\n<IndServicio>3</IndServicio>\n</IdDoc>\n<Emisor>\n<RUTEmisor>76086428-5</RUTEmisor>\n<RznSocEmisor>");
    expect(set.dtes["39"]!.xmlString).toContain("<Receptor>\n<RUTRecep>66666666-6</RUTRecep>\n<RznSocRecep>CONSUMIDOR FINAL</RznSocRecep>\n</Receptor>\n<Totales>\n<MntNeto>840</MntNeto>\n<MntExe>900</MntExe>\n<IVA>160</IVA>\n<MntTotal>1900</MntTotal>\n</Totales>");
    expect(set.dtes["110"]!.xmlString).toContain('<Exportaciones ID="F1T110">');
    expect(set.dtes["110"]!.xmlString).toContain("<Totales>\n<TpoMoneda>DOLAR USA</TpoMoneda>\n<MntExe>123.45</MntExe>\n<MntTotal>123.45</MntTotal>\n</Totales>\n<OtraMoneda>\n<TpoMoneda>PESO CL</TpoMoneda>\n<TpoCambio>945.37</TpoCambio>\n<MntExeOtrMnda>116706</MntExeOtrMnda>\n<MntTotOtrMnda>116706</MntTotOtrMnda>\n</OtraMoneda>");
    expect(set.dtes["110"]!.xmlString).toContain("<RUTRecep>55555555-5</RUTRecep>\n<RznSocRecep>ACME TRADING INC</RznSocRecep>\n<Extranjero>\n<NumId>US-99-1234567</NumId>\n</Extranjero>");
    expect(set.dtes["110"]!.ted.xml).toContain("<MNT>123.45</MNT>");
    expect(set.dtes["52"]!.xmlString).toContain("<IndTraslado>1</IndTraslado>");
  });
});

describe("inbound verification catches", () => {
  async function resign(xml: string): Promise<string> {
    // strip the DTE signature and sign again with another (attacker's) certificate
    const other = await makeFakeCertificate({ rut: "22222222-2", bits: 1024 });
    const signer = await loadSigningCredentials(makeFakePfx(other, "x", "modern"), "x");
    const element = xml.replace(/^<\?xml[^>]*>\n/, "").replace(/<Signature xmlns[\s\S]*<\/Signature>\n/, "").trim();
    return signXml(element, /ID="([^"]+)"/.exec(element)![1]!, signer);
  }

  it("a tampered amount, a replaced certificate, a removed signature", async () => {
    const env = set.samples.find((s) => s.name === "EnvioDTE to recipient")!.xmlString;
    const amount = await verifyInbound(env.replace("<MntTotal>9926</MntTotal>", "<MntTotal>9927</MntTotal>"), { mode: "simulator" });
    expect(amount.ok).toBe(false);
    expect(amount.failure).toBe("SIGNATURE_INVALID");
    expect(amount.documents[0]!.failure).toBe("SIGNATURE_INVALID");

    const other = await makeFakeCertificate({ rut: "22222222-2", bits: 1024 });
    const dte = set.dtes["33"]!.xmlString;
    const certB64 = /<X509Certificate>([\s\S]*?)<\/X509Certificate>/.exec(dte)![1]!;
    const otherB64 = btoa(String.fromCharCode(...other.certDer));
    const swappedCert = dte.replace(certB64, otherB64);
    const r1 = await verifyInbound(swappedCert, { mode: "simulator" });
    expect(r1).toMatchObject({ ok: false, failure: "SIGNATURE_INVALID" });
    // also swap KeyValue so both key holders agree: the signature value must still fail
    const m = /<Modulus>([\s\S]*?)<\/Modulus>/.exec(dte)![1]!;
    const otherMod = btoa(String.fromCharCode(...other.key.n.toByteArray().filter((_, i, a) => !(i === 0 && a[0] === 0)).map((b) => b & 0xff)));
    const r2 = await verifyInbound(swappedCert.replace(m, otherMod), { mode: "simulator" });
    expect(r2).toMatchObject({ ok: false, failure: "SIGNATURE_INVALID" });
    expect(r2.message).toMatch(/SignatureValue/);

    const unsigned = dte.replace(/<Signature xmlns[\s\S]*<\/Signature>\n/, "");
    expect(await verifyInbound(unsigned, { mode: "simulator" })).toMatchObject({ ok: false, failure: "SIGNATURE_MISSING" });
    const envUnsigned = env.replace(/<\/SetDTE>\n<Signature xmlns[\s\S]*<\/Signature>\n/, "</SetDTE>\n");
    expect(await verifyInbound(envUnsigned, { mode: "simulator" })).toMatchObject({ ok: false, failure: "SIGNATURE_MISSING" });
  });

  it("a forged stamp or a stamp that disagrees with a re-signed document; untrusted CAF keys", async () => {
    const dte = set.dtes["33"]!.xmlString;
    const forgedTed = await resign(dte.replace("<MNT>9926</MNT>", "<MNT>1</MNT>"));
    expect(await verifyInbound(forgedTed, { mode: "simulator" })).toMatchObject({ ok: false, failure: "TED_INVALID" });
    const changedTotal = await resign(dte.replace("<MntTotal>9926</MntTotal>", "<MntTotal>1</MntTotal>"));
    const r = await verifyInbound(changedTotal, { mode: "simulator" });
    expect(r).toMatchObject({ ok: false, failure: "TED_INVALID" });
    expect(r.message).toMatch(/MNT 9926 ≠ MntTotal 1/);
    expect((await verifyInbound(await resign(dte), { mode: "simulator" })).ok).toBe(true);
    // simulator CAFs are not trusted outside simulator mode
    expect(await verifyInbound(dte)).toMatchObject({ ok: false, failure: "CAF_UNKNOWN_IDK" });
    const noTed = await resign(dte.replace(/<TED version[\s\S]*<\/TED>\n/, ""));
    expect(await verifyInbound(noTed, { mode: "simulator" })).toMatchObject({ ok: false, failure: "TED_MISSING" });
    expect(await verifyInbound("<EnvioDTE><oops>")).toMatchObject({ ok: false, failure: "XML_MALFORMED" });
  });

  it("namespace variants the SII accepts: DTEs signed without xmlns, or without xmlns:xsi, pasted into an envelope", async () => {
    const doc = computeDocument(SAMPLE_INPUTS["34"]!);
    const caf = set.cafs[34]!;
    const ted = await stampTed({ issuerRut: doc.issuer.rut, documentType: 34, folio: 9, issueDate: doc.issueDate, receiverRut: doc.receiver.rut, receiverName: doc.receiver.legalName, total: "36000", firstItemName: doc.lines[0]!.name, caf, timestamp: "2026-11-20T10:30:05" });
    const base = buildDteXml(doc, 9, ted, "2026-11-20T10:30:05");
    const variants = {
      noNamespace: base.replace(' xmlns="http://www.sii.cl/SiiDte" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"', ""),
      noXsi: base.replace(' xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"', ""),
    };
    for (const [name, text] of Object.entries(variants)) {
      const signed = await signXml(text, "F9T34", set.signer);
      const inEnvelope = set.samples.find((s) => s.name === "EnvioDTE to recipient")!.xmlString.replace(/<DTE [\s\S]*<\/DTE>/, signed);
      const strict = await verifyInbound(inEnvelope, { mode: "simulator", fallbacks: false });
      expect(strict.documents[0]!.failure, name).toBe("SIGNATURE_INVALID");
      const lenient = await verifyInbound(inEnvelope, { mode: "simulator" });
      expect(lenient.documents[0]!.signature.ok, `${name}: ${lenient.documents[0]!.signature.message}`).toBe(true);
      expect(lenient.documents[0]!.signature.digestMode, name).toBe(name === "noNamespace" ? "stripped" : "standalone");
      expect(lenient.documents[0]!.ted.ok).toBe(true);
    }
  });
});

describe("token request", () => {
  it("rejects a seed that is not a number", async () => {
    await expect(buildTokenRequest("abc", set.signer)).rejects.toMatchObject({ code: "INVALID_INPUT" });
  });
});
