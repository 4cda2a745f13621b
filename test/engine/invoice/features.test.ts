/**
 * Every feature sample signed, verified by the engine's strict verifier, and written in the right
 * element (XML golden fragments). XSD validity of the same documents: schemas.node.test.ts.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { SignedDte } from "../../../src/countries/cl/documents/dte";
import { verifyInbound } from "../../../src/countries/cl/exchange/verify";
import { buildFeatureDtes } from "../../helpers/cl-feature-samples";
import { buildSamples, HOLDER_RUT, ISSUER_RUT, type SampleSet } from "../../helpers/cl-samples";
import { buildEnvioBoleta, buildEnvioDte } from "../../../src/countries/cl/exchange/envelopes";
import { parseXml } from "../../../src/countries/cl/xml/xml";
import { validateEnvio } from "../../../src/countries/cl/simulator/validate";

let dtes: Record<string, SignedDte>;
let set: SampleSet;
beforeAll(async () => {
  set = await buildSamples();
  dtes = await buildFeatureDtes(set);
}, 120_000);

/** The XML text without line breaks between elements, for fragment checks. */
const flat = (name: string) => dtes[name]!.xmlString.replace(/>\s*\n\s*</g, "><");

describe("feature documents", () => {
  it("every one verifies (signature, stamp, CAF) with no fallbacks", async () => {
    for (const [name, d] of Object.entries(dtes)) {
      const r = await verifyInbound(d.xml, { mode: "simulator", fallbacks: false });
      expect(r.ok, `${name}: ${r.message}`).toBe(true);
    }
  });

  it("the simulated SII accepts them, every document DOK, in EnvioDTE and EnvioBOLETA", async () => {
    const common = { issuerRut: ISSUER_RUT, senderRut: HOLDER_RUT, resolution: { date: "2026-01-15", number: 0 }, timestamp: "2026-11-20T10:31:00", signer: set.signer };
    const ctx = { companyRut: ISSUER_RUT, now: new Date(), acceptedAmong: async () => new Set<string>() };
    const all = Object.values(dtes);
    const envio = await buildEnvioDte({ ...common, dtes: all.filter((d) => d.envelope === "EnvioDTE") });
    const boletas = await buildEnvioBoleta({ ...common, dtes: all.filter((d) => d.envelope === "EnvioBOLETA") });
    for (const [xml, kind, n] of [[envio.xmlString, "EnvioDTE", 20], [boletas.xmlString, "EnvioBOLETA", 5]] as const) {
      const v = await validateEnvio(parseXml(xml), kind, ctx);
      expect(v.errors, kind).toEqual([]);
      expect(v.documents).toHaveLength(n);
      expect(v.finalStatus).toBe("EPR");
      for (const d of v.documents) expect([d.type, d.status, d.errors], `${kind} ${d.type}`).toEqual([d.type, "DOK", []]);
    }
  }, 60_000);

  it("land in the right elements", () => {
    const f33 = flat("33-mixed-global");
    expect(f33).toContain("<IndServicio>3</IndServicio><FmaPago>2</FmaPago><MntPagos><FchPago>2026-12-20</FchPago><MntPago>10000</MntPago><GlosaPagos>Primera cuota</GlosaPagos></MntPagos>");
    expect(f33).toContain("<PeriodoDesde>2026-11-01</PeriodoDesde><PeriodoHasta>2026-11-30</PeriodoHasta><TermPagoCdg>30D</TermPagoCdg><TermPagoGlosa>30 y 60 días</TermPagoGlosa><TermPagoDias>60</TermPagoDias><FchVenc>2027-01-20</FchVenc>");
    expect(f33).toContain("<GiroEmis>Desarrollo de software y servicios informáticos</GiroEmis><CorreoEmisor>facturas@empresa.cl</CorreoEmisor><Acteco>");
    expect(f33).toContain("<RUTRecep>77879240-0</RUTRecep><CdgIntRecep>CLI-0042</CdgIntRecep><RznSocRecep>");
    expect(f33).toContain("<Contacto>Juana Pérez +56 2 2345 6789</Contacto><CorreoRecep>pagos@cliente.cl</CorreoRecep><DirRecep>Irarrázaval 2401, of. 5</DirRecep><CmnaRecep>Ñuñoa</CmnaRecep><CiudadRecep>Santiago</CiudadRecep>");
    expect(f33).toContain("<NroLinDet>1</NroLinDet><CdgItem><TpoCodigo>INT1</TpoCodigo><VlrCodigo>SOP-01</VlrCodigo></CdgItem><CdgItem><TpoCodigo>EAN13</TpoCodigo>");
    expect(f33).toContain("<DscItem>Soporte 8x5 por correo y teléfono, noviembre 2026.</DscItem><QtyItem>3</QtyItem><PrcItem>3333.33</PrcItem><DescuentoPct>5</DescuentoPct><DescuentoMonto>500</DescuentoMonto><MontoItem>9500</MontoItem>");
    // SubRecargo: 40 % of 2,500 = 1,000, + 250 = the RecargoMonto 1,250
    expect(f33).toContain("<RecargoPct>50</RecargoPct><RecargoMonto>1250</RecargoMonto><SubRecargo><TipoRecargo>%</TipoRecargo><ValorRecargo>40</ValorRecargo></SubRecargo><SubRecargo><TipoRecargo>$</TipoRecargo><ValorRecargo>250</ValorRecargo></SubRecargo><MontoItem>3750</MontoItem>");
    expect(f33).toContain("<IndExe>1</IndExe><NmbItem>Curso exento</NmbItem><QtyRef>8</QtyRef><UnmdRef>HR</UnmdRef><PrcRef>625</PrcRef>");
    expect(f33).toContain("<SubTotInfo><NroSTI>1</NroSTI><GlosaSTI>Servicios</GlosaSTI><OrdenSTI>1</OrdenSTI><ValSubtotSTI>13250</ValSubtotSTI><LineasDeta>1</LineasDeta><LineasDeta>2</LineasDeta></SubTotInfo>");
    expect(f33).toContain("<DscRcgGlobal><NroLinDR>1</NroLinDR><TpoMov>D</TpoMov><GlosaDR>Cliente frecuente</GlosaDR><TpoValor>%</TpoValor><ValorDR>10</ValorDR></DscRcgGlobal><DscRcgGlobal><NroLinDR>2</NroLinDR><TpoMov>D</TpoMov><GlosaDR>Promoción curso</GlosaDR><TpoValor>$</TpoValor><ValorDR>500</ValorDR><IndExeDR>1</IndExeDR></DscRcgGlobal>");
    expect(f33).toContain("<MntNeto>11925</MntNeto><MntExe>4500</MntExe><TasaIVA>19</TasaIVA><IVA>2266</IVA><MntTotal>18691</MntTotal>");
    expect(flat("33-gross")).toContain("<FchEmis>2026-11-20</FchEmis><MntBruto>1</MntBruto></IdDoc>");
    expect(flat("33-indicators")).toContain("<ImptoReten><TipoImp>27</TipoImp><TasaImp>10</TasaImp><MontoImp>800</MontoImp></ImptoReten><GrntDep>1500</GrntDep><MntTotal>11820</MntTotal><MontoNF>1600</MontoNF>");
    expect(flat("33-meat")).toContain("<Retenedor><IndAgente>R</IndAgente><MntBaseFaena>250000</MntBaseFaena><PrcConsFinal>4500</PrcConsFinal></Retenedor><NmbItem>Carne en vara</NmbItem>");
    expect(flat("46-withholdings")).toContain("<ImptoReten><TipoImp>15</TipoImp><TasaImp>19</TasaImp><MontoImp>11400</MontoImp></ImptoReten><ImptoReten><TipoImp>32</TipoImp><TasaImp>8</TasaImp><MontoImp>73600</MontoImp></ImptoReten><IVANoRet>101200</IVANoRet><MntTotal>1081200</MntTotal>");
    const f52 = flat("52-transfer");
    expect(f52).toContain("<TipoDespacho>2</TipoDespacho><IndTraslado>5</IndTraslado><TpoImpresion>T</TpoImpresion>");
    expect(f52).toContain("</Receptor><RUTSolicita>11111111-1</RUTSolicita><Transporte>");
    expect(f52).toContain("<Transporte><Patente>ABCD12</Patente><RUTTrans>77879240-0</RUTTrans><Chofer><RUTChofer>11111111-1</RUTChofer><NombreChofer>Pedro Soto</NombreChofer></Chofer><DirDest>Camino a Melipilla 1234</DirDest><CmnaDest>Maipú</CmnaDest><CiudadDest>Santiago</CiudadDest></Transporte><Totales>");
    const f110 = flat("110-customs");
    expect(f110).toContain("<Extranjero><NumId>US-99-1234567</NumId><Nacionalidad>225</Nacionalidad></Extranjero>");
    expect(f110).toContain("<Aduana><CodModVenta>1</CodModVenta><CodClauVenta>1</CodClauVenta><TotClauVenta>1234.5</TotClauVenta><CodViaTransp>1</CodViaTransp><NombreTransp>MSC ALINA</NombreTransp><CodPtoEmbarque>906</CodPtoEmbarque><CodPtoDesemb>111</CodPtoDesemb><PesoBruto>820.5</PesoBruto><CodUnidPesoBruto>6</CodUnidPesoBruto><PesoNeto>780</PesoNeto><CodUnidPesoNeto>6</CodUnidPesoNeto><TotBultos>60</TotBultos><TipoBultos><CodTpoBultos>75</CodTpoBultos><CantBultos>60</CantBultos><Marcas>ACME-2026</Marcas></TipoBultos><MntFlete>150</MntFlete><MntSeguro>12.5</MntSeguro><CodPaisRecep>225</CodPaisRecep><CodPaisDestin>225</CodPaisDestin></Aduana>");
    // 1233.25 USD × 945.37 = 1165877.5525 → 1165878 pesos
    expect(f110).toContain("<Totales><TpoMoneda>DOLAR USA</TpoMoneda><MntExe>1233.25</MntExe><MntTotal>1233.25</MntTotal></Totales><OtraMoneda><TpoMoneda>PESO CL</TpoMoneda><TpoCambio>945.37</TpoCambio><MntExeOtrMnda>1165878</MntExeOtrMnda><MntTotOtrMnda>1165878</MntTotOtrMnda></OtraMoneda>");
    const f61 = flat("61-references");
    expect(f61).toContain("<IndExe>5</IndExe><NmbItem>Devolución envases</NmbItem>");
    expect(f61).toContain("<Referencia><NroLinRef>2</NroLinRef><TpoDocRef>801</TpoDocRef><FolioRef>OC-77</FolioRef><RUTOtr>77879240-0</RUTOtr><FchRef>2026-11-01</FchRef></Referencia><Referencia><NroLinRef>3</NroLinRef><TpoDocRef>52</TpoDocRef><FolioRef>9</FolioRef><FchRef>2026-11-02</FchRef><RazonRef>Guía asociada</RazonRef></Referencia>");
    // 30,000 + 1.5 % = 30,450: 20,000 paid by transfer, 10,450 unpaid; issued for a principal
    const f34 = flat("34-surcharge");
    expect(f34).toContain("<FchEmis>2026-11-20</FchEmis><FmaPago>1</FmaPago><FchCancel>2026-11-19</FchCancel><MntCancel>20000</MntCancel><SaldoInsol>10450</SaldoInsol><MedioPago>PE</MedioPago><TpoCtaPago>VISTA</TpoCtaPago><NumCtaPago>12-345-678</NumCtaPago><BcoPago>BancoEstado</BcoPago></IdDoc>");
    expect(f34).toContain("</Emisor><RUTMandante>11111111-1</RUTMandante><Receptor>");
    expect(f34).toMatch(/<GiroEmis>[^<]+<\/GiroEmis><Telefono>\+56 2 2345 6789<\/Telefono><Telefono>\+56 9 8765 4321<\/Telefono><Acteco>/);
    expect(f34).toMatch(/<CdgSIISucur>81234567<\/CdgSIISucur><DirOrigen>[^<]+<\/DirOrigen><CmnaOrigen>[^<]+<\/CmnaOrigen><CiudadOrigen>[^<]+<\/CiudadOrigen><CdgVendedor>V-17<\/CdgVendedor><\/Emisor>/);
    expect(f34).toContain("<DirPostal>Casilla 123</DirPostal><CmnaPostal>Providencia</CmnaPostal><CiudadPostal>Santiago</CiudadPostal></Receptor>");
    expect(f61).toContain("<FchEmis>2026-11-20</FchEmis><IndNoRebaja>1</IndNoRebaja></IdDoc>");
    // 1,233.25 USD: MntCancel and SaldoInsol are whole units, 1,000 + 233
    expect(f110).toContain("<TipoDespacho>1</TipoDespacho><FmaPago>2</FmaPago><FmaPagExp>1</FmaPagExp><MntCancel>1000</MntCancel><SaldoInsol>233</SaldoInsol><TpoCtaPago>CORRIENTE</TpoCtaPago><NumCtaPago>0012345678</NumCtaPago><BcoPago>Banco de Chile</BcoPago></IdDoc>");
    // MntBase 250,000 + 90,000 and MntMargenCom 40,000; in USD ÷ 950.25: 357.8006, 42.0942; the exempt $ discount 5,000 → 5.2618
    const meat = flat("33-meat-usd");
    expect(meat).toContain("<MntNeto>400000</MntNeto><MntExe>15000</MntExe><MntBase>340000</MntBase><MntMargenCom>40000</MntMargenCom><TasaIVA>19</TasaIVA>");
    expect(meat).toContain("<MntNetoOtrMnda>420.9419</MntNetoOtrMnda><MntExeOtrMnda>15.7853</MntExeOtrMnda><MntFaeCarneOtrMnda>357.8006</MntFaeCarneOtrMnda><MntMargComOtrMnda>42.0942</MntMargComOtrMnda><IVAOtrMnda>79.979</IVAOtrMnda>");
    expect(meat).toContain("<TpoValor>$</TpoValor><ValorDR>5000</ValorDR><ValorDROtrMnda>5.2618</ValorDROtrMnda><IndExeDR>1</IndExeDR></DscRcgGlobal>");
    // 25.75 USD × 945.37 = 24,343.2775 → 24,343 pesos
    expect(f110).toContain("<TpoValor>$</TpoValor><ValorDR>25.75</ValorDR><ValorDROtrMnda>24343</ValorDROtrMnda><IndExeDR>1</IndExeDR>");
    const f43 = flat("43-commission");
    expect(f43).toContain('<Liquidacion ID="F');
    expect(f43).toContain("<NroLinDet>1</NroLinDet><TpoDocLiq>33</TpoDocLiq><NmbItem>");
    expect(f43).toContain("<IVA>31350</IVA><IVAProp>8550</IVAProp><IVATerc>22800</IVATerc><Comisiones>");
    expect(flat("110-customs")).toContain("<PrcItem>60</PrcItem><OtrMnda><PrcOtrMon>55.2</PrcOtrMon><Moneda>EUR</Moneda><FctConv>1020.33</FctConv><MontoItemOtrMnda>55.2</MontoItemOtrMnda></OtrMnda><MontoItem>60</MontoItem>");
    expect(f43).toContain("<Comisiones><ValComNeto>18200</ValComNeto><ValComExe>0</ValComExe><ValComIVA>3458</ValComIVA></Comisiones><MntTotal>174692</MntTotal>");
    expect(f43).toContain("<Comisiones><NroLinCom>1</NroLinCom><TipoMovim>C</TipoMovim><Glosa>Comisión de venta 8 %</Glosa><TasaComision>8</TasaComision><ValComNeto>13200</ValComNeto><ValComExe>0</ValComExe><ValComIVA>2508</ValComIVA></Comisiones>");
    const f39 = flat("39-features");
    expect(f39).toContain("<RUTRecep>11111111-1</RUTRecep><CdgIntRecep>SOCIO-9</CdgIntRecep><RznSocRecep>JUAN PÉREZ</RznSocRecep><Contacto>+56 9 1234 5678</Contacto><DirPostal>Casilla 45</DirPostal><CiudadPostal>Valparaíso</CiudadPostal></Receptor>");
    expect(f39).toMatch(/<GiroEmisor>[^<]+<\/GiroEmisor><CdgSIISucur>81234567<\/CdgSIISucur><DirOrigen>/);
    expect(f39).toContain("<MntTotal>7013</MntTotal><MontoNF>1000</MontoNF></Totales>");
    expect(f39).toContain("<IndExe>2</IndExe><NmbItem>Propina sugerida</NmbItem>");
    expect(f39).toContain("<NroLinDet>2</NroLinDet><RUTMandante>77879240-0</RUTMandante><NmbItem>Torta</NmbItem>");
    expect(flat("39-net")).toContain("<IndServicio>1</IndServicio><IndMntNeto>2</IndMntNeto><PeriodoDesde>2026-10-01</PeriodoDesde><PeriodoHasta>2026-10-31</PeriodoHasta></IdDoc>");
    const fuel = flat("33-fuel-third-party");
    // IVA 12,600,000 × 19 % = 2,394,000, of which the third party's line (100,000) carries 19,000
    expect(fuel).toContain("<IVA>2394000</IVA><IVAProp>2375000</IVAProp><IVATerc>19000</IVATerc>");
    // 28: 10 m³ × 98,765.4321 = 987,654.321 → 987,654; 35 sent; no TasaImp; MntTotal adds both
    expect(fuel).toContain("<ImptoReten><TipoImp>28</TipoImp><MontoImp>987654</MontoImp></ImptoReten><ImptoReten><TipoImp>35</TipoImp><MontoImp>450000</MontoImp></ImptoReten><MntTotal>16431654</MntTotal>");
    expect(fuel).toContain("<PrcItem>800</PrcItem><CodImpAdic>28</CodImpAdic><MontoItem>8000000</MontoItem>");
    // pesos ÷ 950.25, 4 decimals: 12,600,000 → 13,259.6685; 16,431,654 → 17,291.9274
    expect(fuel).toContain("<OtraMoneda><TpoMoneda>DOLAR USA</TpoMoneda><TpoCambio>950.25</TpoCambio><MntNetoOtrMnda>13259.6685</MntNetoOtrMnda><IVAOtrMnda>2519.337</IVAOtrMnda><ImpRetOtrMnda><TipoImpOtrMnda>28</TipoImpOtrMnda><VlrImpOtrMnda>1039.3623</VlrImpOtrMnda></ImpRetOtrMnda><ImpRetOtrMnda><TipoImpOtrMnda>35</TipoImpOtrMnda><VlrImpOtrMnda>473.5596</VlrImpOtrMnda></ImpRetOtrMnda><MntTotOtrMnda>17291.9274</MntTotOtrMnda></OtraMoneda>");
    // 65 % of 9,500,000 = 6,175,000, deducted
    expect(flat("33-construction")).toContain("<IVA>9500000</IVA><CredEC>6175000</CredEC><MntTotal>53325000</MntTotal>");
    // 1,000,000 / 1020.33 = 980.07507… → 980.0751
    expect(flat("34-other-currency")).toContain("<OtraMoneda><TpoMoneda>EURO</TpoMoneda><TpoCambio>1020.33</TpoCambio><MntExeOtrMnda>980.0751</MntExeOtrMnda><MntTotOtrMnda>980.0751</MntTotOtrMnda></OtraMoneda>");
    // 65 % of 380,000 = 247,000
    expect(flat("56-construction")).toContain("<IVA>380000</IVA><CredEC>247000</CredEC><MntTotal>2133000</MntTotal>");
    const lots = flat("52-lots");
    expect(lots).toContain("<QtyItem>120</QtyItem><Subcantidad><SubQty>70</SubQty><SubCod>L2026-311</SubCod></Subcantidad><Subcantidad><SubQty>50</SubQty><SubCod>L2026-312</SubCod></Subcantidad><FchElabor>2026-11-02</FchElabor><FchVencim>2027-02-02</FchVencim><UnmdItem>UN</UnmdItem><PrcItem>1020.5</PrcItem>");
    // 120 × 1.05 = 126 EUR, 10 % = 12.6, 113.4
    expect(lots).toContain("<OtrMnda><PrcOtrMon>1.05</PrcOtrMon><Moneda>EUR</Moneda><FctConv>971.9048</FctConv><DctoOtrMnda>12.6</DctoOtrMnda><MontoItemOtrMnda>113.4</MontoItemOtrMnda></OtrMnda><DescuentoPct>10</DescuentoPct><DescuentoMonto>12246</DescuentoMonto><SubDscto><TipoDscto>%</TipoDscto><ValorDscto>5</ValorDscto></SubDscto><SubDscto><TipoDscto>$</TipoDscto><ValorDscto>6123</ValorDscto></SubDscto><MontoItem>110214</MontoItem>");
    // 2 % of USD 1,230 = 24.60, + 6.40 = the DescuentoMonto 31 (30.75 rounded to whole units)
    expect(flat("110-customs")).toContain("<DescuentoPct>2.5</DescuentoPct><DescuentoMonto>31</DescuentoMonto><SubDscto><TipoDscto>%</TipoDscto><ValorDscto>2</ValorDscto></SubDscto><SubDscto><TipoDscto>$</TipoDscto><ValorDscto>6.4</ValorDscto></SubDscto><MontoItem>1199</MontoItem>");
    expect(flat("110-customs")).toContain("<QtyItem>60</QtyItem><Subcantidad><SubQty>40</SubQty><SubCod>LOTE-A</SubCod><TipCodSubQty>LOTE</TipCodSubQty></Subcantidad>");
    const show = flat("39-show");
    expect(show).toContain("<NroLinDet>1</NroLinDet><ItemEspectaculo>01</ItemEspectaculo><NmbItem>Entrada Platea Alta</NmbItem><InfoTicket><FolioTicket>1201</FolioTicket><FchGenera>2026-11-20T10:29:00</FchGenera><NmbEvento>Concierto de Primavera</NmbEvento><TpoTicket>Adulto</TpoTicket><CdgEvento>CP26</CdgEvento><FchEvento>2026-12-05T21:00:00</FchEvento><LugarEvento>Teatro Municipal, Santiago</LugarEvento><UbicEvento>Platea Alta</UbicEvento><FilaUbicEvento>F</FilaUbicEvento><AsntoUbicEvento>12</AsntoUbicEvento></InfoTicket><QtyItem>1</QtyItem>");
    expect(show).toContain("<ItemEspectaculo>02</ItemEspectaculo><NmbItem>Cargo por servicio</NmbItem><QtyItem>2</QtyItem>");
    expect(show).toContain("<MntNeto>36134</MntNeto><IVA>6866</IVA><MntTotal>43000</MntTotal>");
    const period = flat("33-period");
    expect(period).toContain("<IndServicio>1</IndServicio><TpoTranCompra>1</TpoTranCompra><TpoTranVenta>1</TpoTranVenta><PeriodoDesde>");
    expect(period).toMatch(/<CiudadOrigen>[^<]+<\/CiudadOrigen><IdAdicEmisor>EORI-CL-7608<\/IdAdicEmisor><\/Emisor>/);
    // MontoPeriodo = MntTotal 37,120 + MontoNF 500; VlrPagar = 37,620 + the previous balance 15,000
    expect(period).toContain("<MntTotal>37120</MntTotal><MontoNF>500</MontoNF><MontoPeriodo>37620</MontoPeriodo><SaldoAnterior>15000</SaldoAnterior><VlrPagar>52620</VlrPagar></Totales>");
    // lines 1–3: taxed 20,000 + 8,000 (IVA 5,320; tax 27 at 10 % of 8,000 = 800), exempt 3,000
    expect(period).toContain("<GlosaSTI>Servicios del mes</GlosaSTI><SubTotNetoSTI>28000</SubTotNetoSTI><SubTotIVASTI>5320</SubTotIVASTI><SubTotAdicSTI>800</SubTotAdicSTI><SubTotExeSTI>3000</SubTotExeSTI><ValSubtotSTI>31000</ValSubtotSTI><LineasDeta>1</LineasDeta>");
    const p43 = flat("43-period");
    expect(p43).toContain("<FchEmis>2026-11-20</FchEmis><TpoTranCompra>4</TpoTranCompra><TpoTranVenta>2</TpoTranVenta></IdDoc>");
    // 50,000 + IVA 9,500 − commission 2,500 and its IVA 475 = 56,525; − 5,000 owed to the recipient
    expect(p43).toContain("<MntTotal>56525</MntTotal><MontoPeriodo>56525</MontoPeriodo><SaldoAnterior>-5000</SaldoAnterior><VlrPagar>51525</VlrPagar></Totales>");
    const guide = flat("52-export-guide");
    expect(guide).toMatch(/<Acteco>631100<\/Acteco><GuiaExport><CdgTraslado>2<\/CdgTraslado><FolioAut>123456<\/FolioAut><FchAut>2026-10-01<\/FchAut><\/GuiaExport><DirOrigen>/);
    expect(guide).toContain("<IndTraslado>8</IndTraslado>");
    const ids = flat("110-additional-ids");
    expect(ids).toContain("<Acteco>631100</Acteco><CodAdicSucur>SUC-VALPO</CodAdicSucur><DirOrigen>");
    expect(ids).toContain("<IdAdicEmisor>EORI-CL-7608</IdAdicEmisor></Emisor>");
    expect(ids).toContain("<Extranjero><NumId>US-99-1234567</NumId><Nacionalidad>225</Nacionalidad><IdAdicRecep>EIN 12-3456789</IdAdicRecep></Extranjero>");
    expect(ids).toContain("<Aduana><CodViaTransp>1</CodViaTransp><RUTCiaTransp>77879240-0</RUTCiaTransp><NomCiaTransp>NAVIERA SUR</NomCiaTransp><IdAdicTransp>IMO 9876543</IdAdicTransp><CodPtoEmbarque>906</CodPtoEmbarque><IdAdicPtoEmb>CLVAP</IdAdicPtoEmb><CodPtoDesemb>111</CodPtoDesemb><IdAdicPtoDesemb>USLAX</IdAdicPtoDesemb></Aduana>");
    expect(ids).toContain("<RUTOtr>55555555-5</RUTOtr><IdAdicOtr>ACME-PO</IdAdicOtr><FchRef>2026-11-10</FchRef>");
    expect(ids).toContain("<GlosaSTI>Aceites</GlosaSTI><SubTotExeSTI>1250</SubTotExeSTI><ValSubtotSTI>1250</ValSubtotSTI>");
    const b39 = flat("39-period");
    // TotalPeriodo = 11,900 + MontoNF 1,000; VlrPagar = 12,900 − 2,000 in the client's favour
    expect(b39).toContain("<MntTotal>11900</MntTotal><MontoNF>1000</MontoNF><TotalPeriodo>12900</TotalPeriodo><SaldoAnterior>-2000</SaldoAnterior><VlrPagar>10900</VlrPagar></Totales>");
    expect(b39).toContain("<SubTotNetoSTI>10000</SubTotNetoSTI><SubTotIVASTI>1900</SubTotIVASTI><ValSubtotSTI>11900</ValSubtotSTI>");
    expect(b39).toContain("<Referencia><NroLinRef>1</NroLinRef><CodVndor>INTERNET</CodVndor><CodCaja>CAJA-07</CodCaja></Referencia><TED");
    expect(flat("41-surcharge")).toContain("<DscRcgGlobal><NroLinDR>1</NroLinDR><TpoMov>R</TpoMov><GlosaDR>Recargo atraso</GlosaDR><TpoValor>$</TpoValor><ValorDR>1000</ValorDR><IndExeDR>1</IndExeDR></DscRcgGlobal>");
  });
});
