/**
 * The XML files the reference shows as examples: the example factura (src/http/routes/invoices/
 * examples.ts) as its signed DTE, the envelope mailed to its buyer and the buyer's reply, and a CAF.
 * Key and signature values are shortened: real ones are 1024- and 2048-bit RSA values.
 */

const CAF = `<CAF version="1.0"><DA><RE>76086428-5</RE><RS>COMERCIAL LOS ANDES SPA</RS><TD>33</TD><RNG><D>1001</D><H>1100</H></RNG><FA>2026-11-25</FA><RSAPK><M>uv1S1+u92TmWZQz7aTbjI1s8vuuxjT0c+byLVxujDFfzSXd5maOeyhl48nSVDfTCFqW8nvvkIa2W0Vsvl09FgQ==</M><E>Aw==</E></RSAPK><IDK>100</IDK></DA><FRMA algoritmo="SHA1withRSA">OzFccD5oT2Zi+noZOZWZYhhd8ihejQ3APS3SRuTfBUN9wKX9E+OOW9f0v8JGA7Jd9kofSR+Z+uOR6Qmo1ZHaoA==</FRMA></CAF>`;

const SIGNATURE = (uri: string) => `<Signature xmlns="http://www.w3.org/2000/09/xmldsig#">
<SignedInfo>
<CanonicalizationMethod Algorithm="http://www.w3.org/TR/2001/REC-xml-c14n-20010315"/>
<SignatureMethod Algorithm="http://www.w3.org/2000/09/xmldsig#rsa-sha1"/>
<Reference URI="#${uri}">
<Transforms><Transform Algorithm="http://www.w3.org/TR/2001/REC-xml-c14n-20010315"/></Transforms>
<DigestMethod Algorithm="http://www.w3.org/2000/09/xmldsig#sha1"/>
<DigestValue>hlmQtu/AyjUjTDhM3852wvRCr8w=</DigestValue>
</Reference>
</SignedInfo>
<SignatureValue>JmHBiI0DKEdi1F3YoNI3zK8lqWKv9dqGZ3vPn1nPF2xKxKf0cS6Q4y6sR0t0k8S9Q9pA4Q1wB5y2vJt3pR8nHw==</SignatureValue>
<KeyInfo><KeyValue><RSAKeyValue><Modulus>tNEknkb1kHiD1OOAWlLKkcH/UP5UGa6V6MYso++JB+vYMg2OXFROAF7G8BNFFPQx</Modulus><Exponent>AQAB</Exponent></RSAKeyValue></KeyValue><X509Data><X509Certificate>MIIGVDCCBTygAwIBAgIKMUWmvgAAAAjk1TANBgkqhkiG9w0BAQUFADCB0jELMAkGA1UEBhMCQ0wx</X509Certificate></X509Data></KeyInfo>
</Signature>`;

/** The example factura 33, folio 1042, as signed and sent to the SII (ISO-8859-1). */
export const dteXmlExample = `<?xml version="1.0" encoding="ISO-8859-1"?>
<DTE xmlns="http://www.sii.cl/SiiDte" version="1.0">
<Documento ID="F1042T33">
<Encabezado>
<IdDoc><TipoDTE>33</TipoDTE><Folio>1042</Folio><FchEmis>2026-11-27</FchEmis><FmaPago>2</FmaPago><FchVenc>2026-12-27</FchVenc></IdDoc>
<Emisor><RUTEmisor>76086428-5</RUTEmisor><RznSoc>COMERCIAL LOS ANDES SPA</RznSoc><GiroEmis>Venta al por mayor de computadores y equipo periférico</GiroEmis><CorreoEmisor>facturacion@losandes.cl</CorreoEmisor><Acteco>465100</Acteco><DirOrigen>Av. Providencia 1234, of. 501</DirOrigen><CmnaOrigen>Providencia</CmnaOrigen><CiudadOrigen>Santiago</CiudadOrigen></Emisor>
<Receptor><RUTRecep>96790240-3</RUTRecep><RznSocRecep>DISTRIBUIDORA EL SIMULADOR S.A.</RznSocRecep><GiroRecep>Distribución de artículos de oficina</GiroRecep><CorreoRecep>dte@elsimulador.cl</CorreoRecep><DirRecep>Av. Apoquindo 4501, piso 8</DirRecep><CmnaRecep>Las Condes</CmnaRecep><CiudadRecep>Santiago</CiudadRecep></Receptor>
<Totales><MntNeto>1000000</MntNeto><TasaIVA>19</TasaIVA><IVA>190000</IVA><MntTotal>1190000</MntTotal></Totales>
</Encabezado>
<Detalle><NroLinDet>1</NroLinDet><CdgItem><TpoCodigo>INT1</TpoCodigo><VlrCodigo>NB-1416</VlrCodigo></CdgItem><NmbItem>Notebook 14 pulgadas 16 GB RAM</NmbItem><QtyItem>2</QtyItem><UnmdItem>UN</UnmdItem><PrcItem>450000</PrcItem><MontoItem>900000</MontoItem></Detalle>
<Detalle><NroLinDet>2</NroLinDet><NmbItem>Instalación y configuración</NmbItem><QtyItem>1</QtyItem><UnmdItem>UN</UnmdItem><PrcItem>100000</PrcItem><MontoItem>100000</MontoItem></Detalle>
<Referencia><NroLinRef>1</NroLinRef><TpoDocRef>801</TpoDocRef><FolioRef>4500012345</FolioRef><FchRef>2026-11-20</FchRef><RazonRef>Orden de compra</RazonRef></Referencia>
<TED version="1.0"><DD><RE>76086428-5</RE><TD>33</TD><F>1042</F><FE>2026-11-27</FE><RR>96790240-3</RR><RSR>DISTRIBUIDORA EL SIMULADOR S.A.</RSR><MNT>1190000</MNT><IT1>Notebook 14 pulgadas 16 GB RAM</IT1>${CAF}<TSTED>2026-11-27T10:30:00</TSTED></DD><FRMT algoritmo="SHA1withRSA">lGjmWRPJSZDhCVGC+GWAKyjIVHOqaDRw4nHRvzCduEFWA4RvpvAGa5KgaShe1FgTV7iRqtFNViMMldrgpB/2ww==</FRMT></TED>
<TmstFirma>2026-11-27T10:30:00</TmstFirma>
</Documento>
${SIGNATURE("F1042T33")}
</DTE>`;

/** The EnvioDTE that carried the example factura to its buyer (RutReceptor the buyer's RUT). */
export const buyerEnvelopeXmlExample = `<?xml version="1.0" encoding="ISO-8859-1"?>
<EnvioDTE xmlns="http://www.sii.cl/SiiDte" version="1.0">
<SetDTE ID="SetDoc">
<Caratula version="1.0"><RutEmisor>76086428-5</RutEmisor><RutEnvia>12345678-5</RutEnvia><RutReceptor>96790240-3</RutReceptor><FchResol>2014-08-22</FchResol><NroResol>80</NroResol><TmstFirmaEnv>2026-11-27T10:31:06</TmstFirmaEnv><SubTotDTE><TpoDTE>33</TpoDTE><NroDTE>1</NroDTE></SubTotDTE></Caratula>
${dteXmlExample.replace(/^<\?xml[^>]*>\n/, "").replace(' xmlns="http://www.sii.cl/SiiDte"', "")}
</SetDTE>
${SIGNATURE("SetDoc")}
</EnvioDTE>`;

/** The buyer's RespuestaDTE accepting the example factura (ResultadoDTE, EstadoDTE 0). */
export const buyerReplyXmlExample = `<?xml version="1.0" encoding="ISO-8859-1"?>
<RespuestaDTE xmlns="http://www.sii.cl/SiiDte" version="1.0">
<Resultado ID="ResultadoEnvio">
<Caratula version="1.0"><RutResponde>96790240-3</RutResponde><RutRecibe>76086428-5</RutRecibe><IdRespuesta>1</IdRespuesta><NroDetalles>1</NroDetalles><TmstFirmaResp>2026-11-28T09:10:00</TmstFirmaResp></Caratula>
<ResultadoDTE><TipoDTE>33</TipoDTE><Folio>1042</Folio><FchEmis>2026-11-27</FchEmis><RUTEmisor>76086428-5</RUTEmisor><RUTRecep>96790240-3</RUTRecep><MntTotal>1190000</MntTotal><CodEnvio>1</CodEnvio><EstadoDTE>0</EstadoDTE><EstadoDTEGlosa>DTE Aceptado OK</EstadoDTEGlosa></ResultadoDTE>
</Resultado>
${SIGNATURE("ResultadoEnvio")}
</RespuestaDTE>`;

/** A CAF for facturas 1001 to 1100 of 76086428-5, as the SII portal hands it out. */
export const cafXmlExample = `<?xml version="1.0" encoding="ISO-8859-1"?>
<AUTORIZACION>${CAF}<RSASK>-----BEGIN RSA PRIVATE KEY-----
MIIBOwIBAAJBALr9UtfrvdkJlmUM+2k24yNbPL7rsY09HPm8i1cbowxX80l3eZmj
-----END RSA PRIVATE KEY-----</RSASK><RSAPUBK>-----BEGIN PUBLIC KEY-----
MFowDQYJKoZIhvcNAQEBBQADSQAwRgJBALr9UtfrvdkJlmUM+2k24yNbPL7rsY09
-----END PUBLIC KEY-----</RSAPUBK></AUTORIZACION>`;

/** The cession file (AEC) of the example factura to a factor: the DTE, the cession and the file, each signed (shortened here). */
export const aecXmlExample = `<?xml version="1.0" encoding="ISO-8859-1"?>
<AEC xmlns="http://www.sii.cl/SiiDte" version="1.0"><DocumentoAEC ID="AEC_1042"><Caratula version="1.0"><RutCedente>76086428-5</RutCedente><RutCesionario>76543210-3</RutCesionario><NmbContacto>COMERCIAL LOS ANDES SPA</NmbContacto><MailContacto>finanzas@losandes.cl</MailContacto><TmstFirmaEnvio>2026-12-02T10:15:00</TmstFirmaEnvio></Caratula><Cesiones><DTECedido version="1.0"><DocumentoDTECedido ID="DTEC_1042"><DTE version="1.0">…</DTE><TmstFirma>2026-12-02T10:15:00</TmstFirma></DocumentoDTECedido>${SIGNATURE("DTEC_1042")}</DTECedido><Cesion version="1.0"><DocumentoCesion ID="CES_1042"><SeqCesion>1</SeqCesion><IdDTE><TipoDTE>33</TipoDTE><RUTEmisor>76086428-5</RUTEmisor><RUTReceptor>96790240-3</RUTReceptor><Folio>1042</Folio><FchEmis>2026-11-27</FchEmis><MntTotal>1190000</MntTotal></IdDTE><Cedente><RUT>76086428-5</RUT><RazonSocial>COMERCIAL LOS ANDES SPA</RazonSocial><Direccion>Av. Providencia 1234, Providencia</Direccion><eMail>finanzas@losandes.cl</eMail><RUTAutorizado><RUT>11111111-1</RUT><Nombre>ANA PEREZ</Nombre></RUTAutorizado></Cedente><Cesionario><RUT>76543210-3</RUT><RazonSocial>FACTOR DE EJEMPLO SPA</RazonSocial><Direccion>Calle Falsa 456, Las Condes</Direccion><eMail>operaciones@factor.cl</eMail></Cesionario><MontoCesion>1190000</MontoCesion><UltimoVencimiento>2026-12-27</UltimoVencimiento><eMailDeudor>pagos@elsimulador.cl</eMailDeudor><TmstCesion>2026-12-02T10:15:00</TmstCesion></DocumentoCesion>${SIGNATURE("CES_1042")}</Cesion></Cesiones></DocumentoAEC>${SIGNATURE("AEC_1042")}</AEC>`;
