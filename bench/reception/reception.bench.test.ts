/**
 * Reception throughput and verification cost, in workerd:
 * - e-mails of 1, 50 and 500 DTEs (one EnvioDTE attached) through the Worker's email() handler:
 *   received DTEs verified and stored per second (MIME parse, R2 write, checks, D1 rows, events);
 * - verifyInbound of the 1-, 50- and 500-DTE envelopes: ms per DTE (linearity), and its ratio to the
 *   crypto floor of a DTE: two RSASSA-PKCS1-v1_5/SHA-1 verifies (its XMLDSig and the TED's FRMT; the
 *   CAF's FRMA is verified once per CAF) and the SHA-1 of a DTE-sized Documento, timed interleaved
 *   in the same run (median of several rounds, so load on the machine weighs on both). A second
 *   ratio is against the envelope's whole floor: the DTEs' floors plus the envelope's own signature
 *   (one more verify, and the SHA-1 of its SetDTE, as long as all its DTEs), which weighs most on
 *   an envelope of one DTE.
 * The same verification is timed, in the same rounds, as `wrangler deploy` ships it: bundled by
 * esbuild into one module (bundle.ts, this bench's global set-up). Vitest's module runner turns each
 * use of an imported binding into a getter call, which the deployed Worker never pays; the bundle's
 * ratio is the production figure, the module runner's is printed beside it.
 */
import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import worker from "../../src/index";
import { receptionCafTrust, verifyInbound } from "../../src/countries/cl/exchange/verify";
import pfxB64 from "../../test/fixtures/cl/fake-modern-aes.pfx.b64?raw";
import { storeRows } from "../../test/helpers/store";
import { RECIPIENT, supplier } from "./fixture";

type Verify = typeof import("../../src/countries/cl/exchange/verify");

const b64 = (b: Uint8Array) => { let s = ""; for (let i = 0; i < b.length; i += 0x8000) s += String.fromCharCode(...b.subarray(i, i + 0x8000)); return btoa(s).replace(/.{76}/g, "$&\r\n"); };
const mime = (to: string, xml: Uint8Array) => new TextEncoder().encode([`From: p@proveedor.cl`, `To: ${to}`, "Subject: DTE", "MIME-Version: 1.0", 'Content-Type: multipart/mixed; boundary="B"', "", "--B", 'Content-Type: application/xml; name="envio.xml"', 'Content-Disposition: attachment; filename="envio.xml"', "Content-Transfer-Encoding: base64", "", b64(xml), "--B--", ""].join("\r\n"));

async function deliver(to: string, raw: Uint8Array) {
  const message = { from: "p@proveedor.cl", to, rawSize: raw.length, headers: new Headers(), raw: new ReadableStream({ start(c) { c.enqueue(raw); c.close(); } }), setReject() {}, forward: async () => ({}), reply: async () => ({}) } as unknown as ForwardableEmailMessage;
  await worker.email!(message, env);
}

it("reception throughput and verification cost", async () => {
  const { signer, envelopeOf } = await supplier(pfxB64);
  await env.DB.prepare("INSERT INTO clients (id, name) VALUES ('cli_bench', 'bench')").run();
  await env.DB.prepare("INSERT INTO companies (id, client_id, legal_name, tax_id_code, tax_id, country) VALUES ('cmp_bench', 'cli_bench', 'CLIENTE LIMITADA', 'RUT', ?, 'CHL')").bind(RECIPIENT).run();
  await env.DB.prepare("INSERT INTO reception_addresses (company_id, token) VALUES ('cmp_bench', 'benchtoken')").run();
  const to = `dte+benchtoken@${env.RECEPTION_DOMAIN}`;

  // Crypto floor of one DTE: what its verification cannot do without, two RSA-SHA1 verifies (its
  // XMLDSig SignatureValue and the TED's FRMT; the CAF's FRMA is verified once per CAF) and the
  // SHA-1 digest of a DTE-sized Documento. Timed interleaved with verifyInbound, round by round, so
  // that load on the machine weighs on both; the median ratio of the rounds is reported.
  const message = new Uint8Array(2500).fill(65);
  const signature = await crypto.subtle.sign("RSASSA-PKCS1-v1_5", signer.privateKey, message);
  const b64url = (b: Uint8Array) => btoa(String.fromCharCode(...b)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  const pub = await crypto.subtle.importKey("jwk", { kty: "RSA", n: b64url(signer.modulus), e: b64url(signer.exponent), ext: true }, { name: "RSASSA-PKCS1-v1_5", hash: "SHA-1" }, false, ["verify"]);
  const documento = new Uint8Array(4500).fill(66);
  const floorOf = async (n: number) => {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) {
      // A plain check, as in the timed verification below (an expect() per call would weigh on the timing).
      if (!(await crypto.subtle.verify("RSASSA-PKCS1-v1_5", pub, signature, message))) throw new Error("floor signature did not verify");
      await crypto.subtle.verify("RSASSA-PKCS1-v1_5", pub, signature, message);
      await crypto.subtle.digest("SHA-1", documento);
    }
    return (performance.now() - t0) / n;
  };
  // The envelope's own signature, `reps` times for envelopes of n DTEs: one verify and the SHA-1 of n Documentos' worth.
  const setDte = new Uint8Array(4500 * 500).fill(67);
  const envelopeFloorOf = async (n: number, reps: number) => {
    const t0 = performance.now();
    for (let j = 0; j < reps; j++) {
      await crypto.subtle.verify("RSASSA-PKCS1-v1_5", pub, signature, message);
      await crypto.subtle.digest("SHA-1", setDte.subarray(0, 4500 * n));
    }
    return performance.now() - t0;
  };
  await floorOf(50);
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const trust = receptionCafTrust("simulator");
  // Written by the global set-up (bundle.ts); not a literal, so that the type checker does not look for it.
  const bundlePath = "./.bundle/verify.mjs";
  const bundled = (await import(/* @vite-ignore */ bundlePath)) as Verify;
  const bundledTrust = bundled.receptionCafTrust("simulator");
  for (const n of [1, 50, 500]) {
    const xml = await envelopeOf(n);
    await verifyInbound(xml, trust);
    expect((await bundled.verifyInbound(xml, bundledTrust)).ok).toBe(true);
    // Each round verifies 500 DTEs (the 1-DTE envelope 500 times): the Worker's clock is coarse.
    const rounds = 7;
    const reps = Math.ceil(500 / n);
    const floors: number[] = [];
    const pers: number[] = [];
    const ratios: number[] = [];
    const envelopeRatios: number[] = [];
    // The same verification with each DTE over its tree instead of its flat index (InboundOptions.flat), timed in the same rounds.
    const treeRatios: number[] = [];
    // And the bundled code (what the deployed Worker runs): per DTE, against the DTE's floor and the envelope's.
    const bundledRatios: number[] = [];
    const bundledEnvelopeRatios: number[] = [];
    const treeTrust = { ...trust, flat: false };
    for (let k = 0; k < rounds; k++) {
      const floor = await floorOf(n * reps);
      const envelopeFloor = floor + (await envelopeFloorOf(n, reps)) / (n * reps);
      // Which goes first alternates from round to round.
      const timed = async (o: typeof trust, verify: Verify["verifyInbound"] = verifyInbound) => {
        const t0 = performance.now();
        for (let j = 0; j < reps; j++) if (!(await verify(xml, o)).ok) throw new Error("the envelope did not verify");
        return (performance.now() - t0) / (n * reps);
      };
      const tree = k % 2 ? await timed(treeTrust) : 0;
      const bundledFirst = k % 2 ? 0 : await timed(bundledTrust, bundled.verifyInbound);
      const per = await timed(trust);
      const bundledPer = k % 2 ? await timed(bundledTrust, bundled.verifyInbound) : bundledFirst;
      bundledRatios.push(bundledPer / floor);
      bundledEnvelopeRatios.push(bundledPer / envelopeFloor);
      treeRatios.push((k % 2 ? tree : await timed(treeTrust)) / floor);
      floors.push(floor);
      pers.push(per);
      ratios.push(per / floor);
      envelopeRatios.push(per / envelopeFloor);
    }
    console.log(`verifyInbound, envelope of ${String(n).padEnd(3)} DTEs  ${median(pers).toFixed(3)} ms/DTE (${(1000 / median(pers)).toFixed(0)} DTEs/s); crypto floor ${median(floors).toFixed(3)} ms/DTE; ratio ${median(ratios).toFixed(2)}× (median of ${rounds} rounds); with the envelope's own signature in the floor ${median(envelopeRatios).toFixed(2)}×; each DTE over its tree instead: ${median(treeRatios).toFixed(2)}×`);
    console.log(`  bundled as deployed (esbuild, one module): ratio ${median(bundledRatios).toFixed(2)}×; with the envelope's own signature in the floor ${median(bundledEnvelopeRatios).toFixed(2)}× (same rounds)`);
  }
  for (const n of [1, 50, 500]) {
    const raw = mime(to, await envelopeOf(n));
    const t0 = performance.now();
    await deliver(to, raw);
    const ms = performance.now() - t0;
    // The company's messages live in its document stores (issue 16).
    const [row] = await storeRows<{ outcome: string; documents: number }>("cmp_bench", "SELECT outcome, documents FROM inbound_messages ORDER BY created_at DESC, id DESC LIMIT 1");
    expect(row).toEqual({ outcome: "STORED", documents: n });
    console.log(`e-mail of ${String(n).padEnd(3)} DTEs through email()             ${ms.toFixed(0)} ms = ${((n * 1000) / ms).toFixed(0)} DTEs/s`);
  }
});
