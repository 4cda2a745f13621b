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
import { buildDteXml } from "../../src/countries/cl/documents/dte";
import { computeDocument } from "../../src/countries/cl/documents/invoice";
import { stampTed } from "../../src/countries/cl/documents/ted";
import { verifyInbound, verifySignedXml } from "../../src/countries/cl/exchange/verify";
import { signXml, buildTokenRequest, verifyChildSignature } from "../../src/countries/cl/xml/xmldsig";
import { parseXml, NS_DSIG, type XElement } from "../../src/countries/cl/xml/xml";
import { loadSigningCredentials } from "../../src/countries/cl/pki/certificate";
import { buildSamples, SAMPLE_INPUTS, type SampleSet } from "../helpers/cl-samples";
import { makeFakeCertificate, makeFakePfx } from "../helpers/fake-certificates";

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

  it("envelopes and acknowledgments: root, Caratula and placement of the signatures", () => {
    const sii = set.samples.find((s) => s.name === "EnvioDTE to SII")!.xmlString;
    expect(sii.startsWith(
      '<?xml version="1.0" encoding="ISO-8859-1"?>\n<EnvioDTE xmlns="http://www.sii.cl/SiiDte" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" version="1.0" xsi:schemaLocation="http://www.sii.cl/SiiDte EnvioDTE_v10.xsd">\n' +
        '<SetDTE ID="SetDoc">\n<Caratula version="1.0">\n<RutEmisor>76086428-5</RutEmisor>\n<RutEnvia>11111111-1</RutEnvia>\n<RutReceptor>60803000-K</RutReceptor>\n<FchResol>2026-01-15</FchResol>\n<NroResol>0</NroResol>\n<TmstFirmaEnv>2026-11-20T10:31:00</TmstFirmaEnv>\n' +
        "<SubTotDTE>\n<TpoDTE>33</TpoDTE>\n<NroDTE>1</NroDTE>\n</SubTotDTE>\n<SubTotDTE>\n<TpoDTE>34</TpoDTE>\n<NroDTE>1</NroDTE>\n</SubTotDTE>\n",
    )).toBe(true);
    expect(sii).toContain("<SubTotDTE>\n<TpoDTE>61</TpoDTE>\n<NroDTE>3</NroDTE>\n</SubTotDTE>");
    expect(sii).toMatch(/<\/Caratula>\n<DTE xmlns="http:\/\/www.sii.cl\/SiiDte" xmlns:xsi="http:\/\/www.w3.org\/2001\/XMLSchema-instance" version="1.0">\n<Documento ID="F1T33">/);
    expect(sii).toMatch(/<\/DTE>\n<\/SetDTE>\n<Signature xmlns="http:\/\/www.w3.org\/2000\/09\/xmldsig#">\n<SignedInfo>[\s\S]*<Reference URI="#SetDoc">[\s\S]*<\/Signature>\n<\/EnvioDTE>\n$/);
    expect(set.samples.find((s) => s.name === "EnvioDTE to recipient")!.xmlString).toContain("<RutReceptor>77879240-0</RutReceptor>");
    const boleta = set.samples.find((s) => s.name === "EnvioBOLETA")!.xmlString;
    expect(boleta).toContain('<EnvioBOLETA xmlns="http://www.sii.cl/SiiDte" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" version="1.0" xsi:schemaLocation="http://www.sii.cl/SiiDte EnvioBOLETA_v11.xsd">');
    const resp = set.samples.find((s) => s.name === "RespuestaDTE RecepcionEnvio")!.xmlString;
    expect(resp).toContain(
      '<Resultado ID="R1">\n<Caratula version="1.0">\n<RutResponde>77879240-0</RutResponde>\n<RutRecibe>76086428-5</RutRecibe>\n<IdRespuesta>1</IdRespuesta>\n<NroDetalles>1</NroDetalles>\n<NmbContacto>Mesa de ayuda</NmbContacto>\n<MailContacto>dte@example.cl</MailContacto>\n<TmstFirmaResp>2026-11-20T11:00:00</TmstFirmaResp>\n</Caratula>\n<RecepcionEnvio>\n<NmbEnvio>envio-33.xml</NmbEnvio>',
    );
    expect(resp).toContain("<RecepcionDTE>\n<TipoDTE>33</TipoDTE>\n<Folio>1</Folio>\n<FchEmis>2026-11-20</FchEmis>\n<RUTEmisor>76086428-5</RUTEmisor>\n<RUTRecep>77879240-0</RUTRecep>\n<MntTotal>9926</MntTotal>\n<EstadoRecepDTE>0</EstadoRecepDTE>\n<RecepDTEGlosa>DTE Recibido OK</RecepDTEGlosa>\n</RecepcionDTE>");
    const result = set.samples.find((s) => s.name === "RespuestaDTE ResultadoDTE")!.xmlString;
    expect(result).toContain("<CodEnvio>1001</CodEnvio>\n<EstadoDTE>2</EstadoDTE>\n<EstadoDTEGlosa>DTE Rechazado: precio no corresponde</EstadoDTEGlosa>\n<CodRchDsc>-1</CodRchDsc>\n</ResultadoDTE>");
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

    // signature wrapping: a forged Documento first, the genuine one moved aside under the same ID
    const genuine = /<Documento ID="F1T33">[\s\S]*<\/Documento>/.exec(dte)![0];
    const forged = genuine.replace("<MntTotal>9926</MntTotal>", "<MntTotal>1</MntTotal>");
    const wrappedDoc = dte.replace(genuine, `${forged}\n<Extra>${genuine}</Extra>`);
    expect((await verifyInbound(wrappedDoc, { mode: "simulator" })).ok).toBe(false);
    const reId = dte.replace(genuine, genuine.replace('ID="F1T33"', 'ID="X"')).replace('<Documento ID="X">', `${forged.replace('ID="F1T33"', 'ID="Y"')}\n<Documento ID="F1T33">`);
    expect(await verifyInbound(reId, { mode: "simulator" })).toMatchObject({ ok: false, failure: "SIGNATURE_INVALID" });

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

describe("acknowledgments", () => {
  it("RespuestaDTE and EnvioRecibos verify (every Recibo and the set), tampering is caught", async () => {
    for (const name of ["RespuestaDTE RecepcionEnvio", "RespuestaDTE ResultadoDTE", "EnvioRecibos"]) {
      const s = set.samples.find((x) => x.name === name)!;
      const r = await verifySignedXml(s.xml, { fallbacks: false });
      expect(r.ok, `${name}: ${r.message}`).toBe(true);
      expect(r.signatures.length).toBe(name === "EnvioRecibos" ? 2 : 1);
    }
    const recibos = set.samples.find((x) => x.name === "EnvioRecibos")!.xmlString;
    expect(recibos).toContain('<Recibo xmlns="http://www.sii.cl/SiiDte" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" version="1.0">\n<DocumentoRecibo ID="T33F1">');
    const r = await verifySignedXml(recibos.replace("Bodega central", "Bodega lateral"));
    expect(r).toMatchObject({ ok: false, failure: "SIGNATURE_INVALID", root: "EnvioRecibos" });
    expect(r.signatures[0]!.ok).toBe(false);
    expect(await verifySignedXml("<RespuestaDTE/>")).toMatchObject({ ok: false, failure: "SIGNATURE_MISSING" });
  });
});

describe("envelopes refuse", () => {
  it("mixed families, another issuer, duplicates, a sender that is not the certificate holder, empty sets", async () => {
    const { buildEnvioDte, buildEnvioBoleta } = await import("../../src/countries/cl/exchange/envelopes");
    const common = { issuerRut: "76086428-5", senderRut: "11111111-1", resolution: { date: "2026-01-15", number: 0 }, timestamp: "2026-11-20T10:31:00", signer: set.signer };
    const code = async (p: Promise<unknown>) => p.then(() => "none", (e: { code: string }) => e.code);
    expect(await code(buildEnvioDte({ ...common, dtes: [set.dtes["39"]!] }))).toBe("ENVELOPE_INVALID");
    expect(await code(buildEnvioBoleta({ ...common, dtes: [set.dtes["33"]!] }))).toBe("ENVELOPE_INVALID");
    expect(await code(buildEnvioDte({ ...common, dtes: [set.dtes["33"]!, set.dtes["33"]!] }))).toBe("ENVELOPE_INVALID");
    expect(await code(buildEnvioDte({ ...common, dtes: [] }))).toBe("ENVELOPE_INVALID");
    expect(await code(buildEnvioDte({ ...common, issuerRut: "77879240-0", dtes: [set.dtes["33"]!] }))).toBe("ENVELOPE_INVALID");
    expect(await code(buildEnvioDte({ ...common, senderRut: "12345678-5", dtes: [set.dtes["33"]!] }))).toBe("ENVELOPE_INVALID");
    expect(await code(buildEnvioDte({ ...common, timestamp: "2026-11-20 10:31", dtes: [set.dtes["33"]!] }))).toBe("INVALID_DATE");
  });
});

describe("token request", () => {
  it("rejects a seed that is not a number", async () => {
    await expect(buildTokenRequest("abc", set.signer)).rejects.toMatchObject({ code: "INVALID_INPUT" });
  });
});

describe("bad input never crashes", () => {
  it("mutated CAFs, .pfx files, envelopes, receipts and stamps give typed errors or reports only", async () => {
    const { parseCaf } = await import("../../src/countries/cl/documents/caf");
    const { openPfx } = await import("../../src/countries/cl/pki/certificate");
    const { verifyTed } = await import("../../src/countries/cl/documents/ted");
    const { EngineError } = await import("../../src/countries/cl/errors");
    const { issueSimulatorCaf } = await import("../../src/countries/cl/simulator/caf");
    let seed = 12345;
    const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    const mutate = (s: string) => {
      const i = Math.floor(rnd() * s.length);
      const k = rnd();
      if (k < 0.3) return s.slice(0, i);
      if (k < 0.6) return s.slice(0, i) + s.slice(i + 1 + Math.floor(rnd() * 20));
      const chars = "<>&\"'=/ aZ0+AQ-\n";
      return s.slice(0, i) + chars[Math.floor(rnd() * chars.length)] + s.slice(i + 1);
    };
    const caf = (await issueSimulatorCaf({ rut: "76086428-5", legalName: "X", documentType: 33, from: 1, to: 10, authorizedOn: "2026-01-01" })).xmlString;
    const pfx = makeFakePfx(set.cert, "x", "legacy");
    const env = set.samples.find((s) => s.name === "EnvioDTE to recipient")!.xmlString;
    const rec = set.samples.find((s) => s.name === "EnvioRecibos")!.xmlString;
    const ted = set.dtes["33"]!.ted.xml;
    const untyped: string[] = [];
    for (let n = 0; n < 150; n++) {
      await parseCaf(mutate(caf), { mode: "simulator" }).catch((e) => { if (!(e instanceof EngineError)) untyped.push(`parseCaf: ${e}`); });
      const b = pfx.slice();
      b[Math.floor(rnd() * b.length)] = Math.floor(rnd() * 256);
      try {
        openPfx(rnd() < 0.3 ? b.slice(0, Math.floor(rnd() * b.length)) : b, "x");
      } catch (e) {
        if (!(e instanceof EngineError)) untyped.push(`openPfx: ${e}`);
      }
    }
    for (let n = 0; n < 40; n++) {
      expect(typeof (await verifyInbound(mutate(env), { mode: "simulator" })).ok).toBe("boolean");
      expect(typeof (await verifySignedXml(mutate(rec))).ok).toBe("boolean");
      expect(typeof (await verifyTed(mutate(ted), { mode: "simulator" })).ok).toBe("boolean");
    }
    expect(untyped).toEqual([]);
  });
});
