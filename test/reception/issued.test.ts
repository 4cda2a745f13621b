/**
 * Issuance to reception, end to end, both companies on the simulated SII: one company issues a
 * factura to another through the API (queue consumer, DTEUpload, polls to ACCEPTED); the Worker's
 * own cron trigger then polls the register for the recipient, fetches the signed DTE over the
 * simulator's wire protocol and runs it through the one intake: listed, verified, with its SII
 * reception time, and it takes an acceptance.
 */
import { describe, expect, it } from "vitest";
import { normalizeRut } from "../../src/countries/cl/documents/rut";
import { canonicalize } from "../../src/countries/cl/xml/c14n";
import { descendants, parseXml } from "../../src/countries/cl/xml/xml";
import { call } from "../helpers/api";
import { invoiceBody, issue, readyIssuer, untilFinal } from "../helpers/issuer";
import { cronRun, receiver, respond } from "./helpers";

describe("a document issued by one simulated company to another", () => {
  it("appears in the recipient's reception list verified, the DTE element the issuer signed", async () => {
    const r = await receiver();
    const issuer = await readyIssuer([33]);
    const res = await issue(issuer, invoiceBody(issuer.rut, "33"));
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const done = await untilFinal(issuer, res.body.id);
    expect(done.status).toBe("ACCEPTED");

    await cronRun();
    const list = await call("GET", `/api/reception/invoices/list?company_id=${r.companyId}&issuer_tax_id=${normalizeRut(issuer.rut)}`, { key: r.owner.key });
    expect(list.status, JSON.stringify(list.body)).toBe(200);
    expect(list.body.data).toHaveLength(1);
    const doc = list.body.data[0];
    expect(doc).toMatchObject({ channel: "SII", xml_status: "RECEIVED", document_type: "33", folio: done.folio, response_state: "PENDING", verification: { status: "VERIFIED", reception_status: 0 } });
    expect(doc.verification.checks.filter((c: any) => c.result === "FAILED")).toEqual([]);
    expect(doc.verification.checks.find((c: any) => c.name === "envelope_signature").result).toBe("NOT_APPLICABLE");
    expect(doc.sii_received_at).not.toBeNull();
    expect(doc.seconds_left).toBeGreaterThan(7 * 86_400);

    const issued = await call("GET", `${issuer.base}/invoices/${res.body.id}/xml`, { key: issuer.owner.key });
    const received = await call("POST", `/api/reception/invoices/${doc.id}/download/xml?company_id=${r.companyId}`, { key: r.owner.key });
    expect(received.status).toBe(200);
    const latin1 = async (x: { raw: Response }) => new TextDecoder("latin1").decode(await x.raw.arrayBuffer());
    // The DTE as its signature verified it (its canonical form), with the issuer's signed Documento unchanged.
    const dte = await latin1(received);
    expect(dte).toMatch(/^<\?xml version="1.0" encoding="ISO-8859-1"\?>\n<DTE [^]*<\/DTE>$/);
    const documento = (xml: string) => canonicalize(descendants(parseXml(xml), "Documento")[0]!, { exclusive: true });
    expect(documento(dte)).toBe(documento(await latin1(issued)));

    await cronRun();
    const again = await call("GET", `/api/reception/invoices/list?company_id=${r.companyId}&issuer_tax_id=${normalizeRut(issuer.rut)}`, { key: r.owner.key });
    expect(again.body.data.map((d: any) => d.id)).toEqual([doc.id]);
    expect((await respond(r, doc.id, "ACD")).body.response_state).toBe("ACCEPTED");
  });
});
