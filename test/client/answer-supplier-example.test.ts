/**
 * examples/answer-supplier.ts against the Worker: a supplier's envelope of two genuine facturas and
 * a forged copy of a third, uploaded as received; the example accepts one, claims the other with
 * its reason (its own purchase-order policy), and leaves the forged one unanswered.
 */
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createDteClient } from "../../clients/typescript";
import { answerSupplierFile } from "../../examples/answer-supplier";
import { decodeLatin1, encodeLatin1 } from "../../src/countries/cl/xml/xml";
import { envelope, signedDte } from "../sii/helpers";
import { getDoc, receptionFixture } from "../reception/helpers";

describe("examples/answer-supplier.ts", () => {
  it("accepts and claims verified documents as its policy says, and answers nothing for a forged one", async () => {
    const { cert, caf33, r } = await receptionFixture();
    const client = createDteClient({ baseUrl: "http://localhost", apiKey: r.owner.key, fetch: (req: Request) => exports.default.fetch(req) });
    const genuine = await envelope([await signedDte(caf33, 401, cert), await signedDte(caf33, 402, cert)], cert);
    // The purchase order of folio 402 was for less: the ERP claims it.
    const decide = (doc: { folio: number }) => (doc.folio === 402 ? { action: "RCD" as const, reason: "Precio no corresponde a la orden de compra" } : { action: "ACD" as const });
    const log: string[] = [];
    const answered = await answerSupplierFile({ client, companyId: r.companyId, file: genuine.xml, decide, log: (l) => log.push(l) });
    expect(answered.map((a) => [a.folio, a.verification, a.action, a.response_state])).toEqual([
      [401, "VERIFIED", "ACD", "ACCEPTED"],
      [402, "VERIFIED", "RCD", "CLAIMED"],
    ]);
    expect(log).toHaveLength(4);
    expect((await getDoc(r, answered[1]!.id)).body.responses).toEqual([expect.objectContaining({ action: "RCD" })]);

    const one = await envelope([await signedDte(caf33, 403, cert)], cert);
    const forged = encodeLatin1(decodeLatin1(one.xml).replace(/<MntTotal>(\d+)<\/MntTotal>/, "<MntTotal>9999999</MntTotal>"));
    const [f] = await answerSupplierFile({ client, companyId: r.companyId, file: forged });
    expect(f).toMatchObject({ folio: 403, verification: "FAILED", action: null });
  });
});
