/**
 * A company cedes a factura to a factoring company end to end on the simulated SII: the rules at POST,
 * the AEC built and signed, uploaded to the simulated register (RPETC) and followed to its answer by
 * the queue, with the `invoice.ceded` event.
 */
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { call } from "../helpers/api";
import { readyIssuer, type Issuer } from "../helpers/issuer";
import { storeRows } from "../helpers/store";
import { parseXml, type XElement } from "../../src/countries/cl/xml/xml";
import { verifySignatureElement } from "../../src/countries/cl/xml/xmldsig";
import { ASSIGNEE, cede, cedibleFactura, cessionBody, untilCessionFinal } from "./helpers";

describe("a cession of a factura", () => {
  let issuer: Issuer;
  beforeAll(async () => {
    issuer = await readyIssuer([33]);
  });

  it("is registered: 202 SIGNED, then SENT and REGISTERED with the register's EOK, an invoice.ceded event", async () => {
    const doc = await cedibleFactura(issuer);
    const res = await cede(issuer, doc.id);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body).toMatchObject({ status: "SIGNED", invoice_id: doc.id, folio: doc.folio, amount: doc.total, receipt_basis: "EIGHT_DAYS", assignee: ASSIGNEE });
    expect(res.body.declaration).toMatch(/^Se declara bajo juramento que EMPRESA DE PRUEBA SPA, RUT /);
    const done = await untilCessionFinal(issuer, res.body.id);
    expect(done, JSON.stringify(done)).toMatchObject({ status: "REGISTERED", fiscal_status: "EOK" });
    expect(done.track_id).toMatch(/^\d+$/);
    const events = await storeRows<{ payload: string }>(issuer.companyId, sql`SELECT payload FROM event_outbox WHERE type = 'invoice.ceded'`);
    expect(events.map((e) => JSON.parse(e.payload).id)).toContain(res.body.id);
    const list = await call("GET", `${issuer.base}/invoices/${doc.id}/cessions`, { key: issuer.owner.key });
    expect(list.body.data.map((c: any) => c.id)).toEqual([res.body.id]);
    const all = await call("GET", `${issuer.base}/cessions`, { key: issuer.owner.key });
    expect(all.body.data.map((c: any) => c.id)).toContain(res.body.id);

    // The file: every signature verifies (DTE, DTECedido, Cesion, AEC), each over its own area.
    const file = await call("GET", `${issuer.base}/cessions/${res.body.id}/xml`, { key: issuer.owner.key });
    expect(file.status).toBe(200);
    const text = new TextDecoder("latin1").decode(new Uint8Array(await file.raw.arrayBuffer()));
    const parsed = parseXml(text.replace(/^<\?xml[^>]*\?>\s*/, ""));
    const sigs: XElement[] = [];
    const walk = (e: XElement) => {
      for (let n = e.firstChild; n; n = n.nextSibling) if (n.nodeType === 1) (n as XElement).localName === "Signature" ? sigs.push(n as XElement) : walk(n as XElement);
    };
    walk(parsed.documentElement as XElement);
    const refs = [];
    for (const s of sigs) {
      const v = await verifySignatureElement(parsed, s);
      expect(v.ok, v.message).toBe(true);
      refs.push(v.reference);
    }
    expect(refs.sort()).toEqual([`#AEC_T33F${doc.folio}`, `#CES_T33F${doc.folio}_1`, `#DTECed_T33F${doc.folio}`, `#F${doc.folio}T33`].sort());

    // Its summary: one page naming the parties, the amount and the track id.
    const pdf = await call("GET", `${issuer.base}/cessions/${res.body.id}/pdf`, { key: issuer.owner.key });
    expect(pdf.status).toBe(200);
    expect(pdf.raw.headers.get("Content-Type")).toBe("application/pdf");
    const pdfText = new TextDecoder("latin1").decode(new Uint8Array(await pdf.raw.arrayBuffer()));
    expect(pdfText.startsWith("%PDF-")).toBe(true);

    // Ceded once.
    const again = await cede(issuer, doc.id);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("CESSION_ALREADY_CEDED");
  });
});
