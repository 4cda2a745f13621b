/** The e-mail a supplier sends with a signed EnvioDTE attached (base64), as the benches deliver it to the Worker's email() handler. */
export function mailWithEnvelope(to: string, xml: Uint8Array): Uint8Array {
  let s = "";
  for (let i = 0; i < xml.length; i += 0x8000) s += String.fromCharCode(...xml.subarray(i, i + 0x8000));
  const body = btoa(s).replace(/.{76}/g, "$&\r\n");
  return new TextEncoder().encode([`From: p@proveedor.cl`, `To: ${to}`, "Subject: DTE", "MIME-Version: 1.0", 'Content-Type: multipart/mixed; boundary="B"', "", "--B", 'Content-Type: application/xml; name="envio.xml"', 'Content-Disposition: attachment; filename="envio.xml"', "Content-Transfer-Encoding: base64", "", body, "--B--", ""].join("\r\n"));
}
