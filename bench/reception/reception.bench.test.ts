/**
 * Reception throughput and verification cost, in workerd:
 * - e-mails of 1, 50 and 500 DTEs (one EnvioDTE attached) through the Worker's email() handler:
 *   received DTEs verified and stored per second (MIME parse, R2 write, checks, D1 rows, events);
 * - verifyInbound of the 1-, 50- and 500-DTE envelopes: ms per DTE (linearity), and its ratio to the
 *   crypto floor of a DTE: two RSASSA-PKCS1-v1_5/SHA-1 verifies, each under a key of the size that
 *   signs it (its XMLDSig under the issuer's 2048-bit certificate, the TED's FRMT under a CAF key,
 *   RSA-512 with e = 3; the CAF's FRMA is verified once per CAF), over messages as long as the
 *   envelope's own, and the SHA-1 of its Documento, timed interleaved
 *   in the same run: slices of about 30 ms of verification, each right beside 30 ms of its floor, the order
 *   alternating, and the median of the slices' ratios (a pause of the machine weighs on a few
 *   slices, which the median leaves out). A cross-check times blocks of
 *   about 300 ms of each, in which the verification pays all of its own garbage collection. A second
 *   ratio is against the envelope's whole floor: the DTEs' floors plus the envelope's own signature
 *   (one more verify, and the SHA-1 of its SetDTE), which weighs most on
 *   an envelope of one DTE.
 * The verification is timed as `wrangler deploy` ships it: bundled by
 * esbuild into one module (bundle.ts, this bench's global set-up). Vitest's module runner turns each
 * use of an imported binding into a getter call, which the deployed Worker never pays; the bundle's
 * ratio is the production figure. Target (README, "Benchmarks"): at most 3× the floor, linear in
 * the envelope's size. The figures are printed and written to bench/results/reception.json. A smoke
 * run (BENCH_SMOKE=1): the envelope of 1 DTE only, 3 slices, 1 block, 1 e-mail.
 */
import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import worker from "../../src/index";
import { receptionCafTrust, verifyInbound } from "../../src/countries/cl/exchange/verify";
import pfxB64 from "../../test/fixtures/cl/fake-modern-aes.pfx.b64?raw";
import { storeRows } from "../../test/helpers/store";
import { cryptoFloor, RECIPIENT, supplier } from "./fixture";
import { mailWithEnvelope } from "./mail";

type Verify = typeof import("../../src/countries/cl/exchange/verify");

const SMOKE = (env as unknown as { BENCH_SMOKE?: string }).BENCH_SMOKE === "1";
/** DTEs per envelope of each size measured. */
const SIZES = SMOKE ? [1] : [1, 50, 500];
/** E-mails timed per envelope size (after one that makes the company's stores). */
const EMAILS_PER_SIZE = SMOKE ? 1 : 5;
/** Interleaved slices, and blocks of the cross-check, per envelope size. */
const slicesOf = (n: number) => (SMOKE ? 3 : n === 500 ? 15 : 31);
const BLOCKS = SMOKE ? 1 : 5;


/** `time()` right beside `floorOf()`, the floor first when `floorFirst`: the verification's figure and the floor's. */
async function beside<F>(floorFirst: boolean, floorOf: () => Promise<F>, time: () => Promise<number>): Promise<[number, F]> {
  if (floorFirst) {
    const floor = await floorOf();
    return [await time(), floor];
  }
  const per = await time();
  return [per, await floorOf()];
}

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

  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const trust = receptionCafTrust("simulator");
  // Written by the global set-up (bundle.ts); not a literal, so that the type checker does not look for it.
  const bundlePath = "./.bundle/verify.mjs";
  const bundled = (await import(/* @vite-ignore */ bundlePath)) as Verify;
  const bundledTrust = bundled.receptionCafTrust("simulator");
  const parserPath = "./.bundle/xml.mjs";
  const parser = (await import(/* @vite-ignore */ parserPath)) as typeof import("../../src/countries/cl/xml/xml");
  const results = { verification: [] as Record<string, number>[], email: [] as Record<string, number>[] };
  const quartiles = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return `${s[Math.floor(s.length / 4)]!.toFixed(2)}–${s[Math.floor((3 * s.length) / 4)]!.toFixed(2)}`; };
  for (const n of SIZES) {
    const xml = await envelopeOf(n);
    // The crypto floor of this envelope (fixture.ts), timed interleaved with verifyInbound.
    const f = await cryptoFloor(signer, xml, () => performance.now());
    await f.dtes(50);
    await verifyInbound(xml, trust);
    expect((await bundled.verifyInbound(xml, bundledTrust)).ok).toBe(true);
    const timed = async (verify: Verify["verifyInbound"], o: typeof trust, reps: number) => {
      const t0 = performance.now();
      for (let j = 0; j < reps; j++) if (!(await verify(xml, o)).ok) throw new Error("the envelope did not verify");
      return (performance.now() - t0) / (n * reps);
    };
    // Slices of about 30 ms (the Worker's clock counts whole milliseconds), each timed right beside
    // its floor: a pause of the machine (this VM's run-to-run spread is large) weighs on a few
    // slices, and the median of their ratios leaves them out. Which goes first alternates.
    // Warmed up first; then as many envelopes, and as many of the floor's, as take about 30 ms each.
    await timed(bundled.verifyInbound, bundledTrust, Math.ceil(200 / n));
    const reps = Math.max(1, Math.round(30 / (n * (await timed(bundled.verifyInbound, bundledTrust, Math.ceil(200 / n))))));
    const floorReps = Math.max(1, Math.round(30 / (n * (await f.dtes(200)) + (await f.envelope(10)) / 10)));
    const slices = slicesOf(n);
    const floors: number[] = [];
    const pers: number[] = [];
    const ratios: number[] = [];
    const envelopeRatios: number[] = [];
    /** The floor of `floorReps` envelopes: per DTE, and per DTE with the envelope's own signature in it. */
    const measureFloor = async () => {
      const floor = await f.dtes(n * floorReps);
      return { floor, envelopeFloor: floor + (await f.envelope(floorReps)) / (n * floorReps) };
    };
    for (let k = 0; k < slices; k++) {
      const [per, { floor, envelopeFloor }] = await beside(k % 2 === 0, measureFloor, () => timed(bundled.verifyInbound, bundledTrust, reps));
      floors.push(floor);
      pers.push(per);
      ratios.push(per / floor);
      envelopeRatios.push(per / envelopeFloor);
    }
    // The cross-check: the verification back to back for about 300 ms beside its floor as long, five
    // times, the order alternating; the median of the blocks' ratios. A block pays all of its own
    // garbage collection, which a 30 ms slice may leave to the floor's slice after it.
    const blockRatios: number[] = [];
    const floorBlock = async () => {
      let floor = 0;
      for (let j = 0; j < 10; j++) floor += (await measureFloor()).envelopeFloor / 10;
      return floor;
    };
    for (let k = 0; k < BLOCKS; k++) {
      const [per, floor] = await beside(k % 2 === 1, floorBlock, () => timed(bundled.verifyInbound, bundledTrust, reps * 10));
      blockRatios.push(per / floor);
    }
    // The parser's share: decoding and parseXml alone (what every verification starts with), per DTE, beside the same floor.
    const parsed = async () => {
      const t0 = performance.now();
      for (let j = 0; j < reps; j++) parser.parseXml(parser.decodeXmlBytes(xml), "bench");
      return (performance.now() - t0) / (n * reps);
    };
    const parseRatios: number[] = [];
    for (let k = 0; k < slices; k++) {
      const [per, { floor }] = await beside(k % 2 === 0, measureFloor, parsed);
      parseRatios.push(per / floor);
    }
    console.log(`verifyInbound, envelope of ${String(n).padEnd(3)} DTEs, bundled as deployed (esbuild, one module): ${median(pers).toFixed(3)} ms/DTE (${(1000 / median(pers)).toFixed(0)} DTEs/s); crypto floor ${median(floors).toFixed(3)} ms/DTE (signed lengths: SignedInfo ${f.sizes.signedInfo}, DD ${f.sizes.dd}, Documento ${f.sizes.documento}, SetDTE ${f.sizes.setDte} bytes)`);
    console.log(`  ratio to the floor with the envelope's own signature in it ${median(envelopeRatios).toFixed(2)}× (median of ${slices} slices of ${n * reps} DTEs and floors of ${n * floorReps}, quartiles ${quartiles(envelopeRatios)}); to the DTEs' floor alone ${median(ratios).toFixed(2)}×; in blocks of ${n * reps * 10} DTEs ${median(blockRatios).toFixed(2)}× (${blockRatios.map((r) => r.toFixed(2)).join(", ")}); the parse alone ${median(parseRatios).toFixed(2)}× the DTEs' floor`);
    results.verification.push({ dtes: n, ms_per_dte: +median(pers).toFixed(4), floor_ms_per_dte: +median(floors).toFixed(4), ratio_to_envelope_floor: +median(envelopeRatios).toFixed(2), ratio_to_dte_floor: +median(ratios).toFixed(2), ratio_in_blocks: +median(blockRatios).toFixed(2), parse_ratio_to_dte_floor: +median(parseRatios).toFixed(2) });
  }
  // The company's stores are made by its first message: one e-mail first, not timed, so
  // that the figures below are throughput, not the company's first minute.
  await deliver(to, mailWithEnvelope(to, await envelopeOf(1)));
  for (const n of SIZES) {
    const times: number[] = [];
    for (let k = 0; k < EMAILS_PER_SIZE; k++) {
      const raw = mailWithEnvelope(to, await envelopeOf(n));
      const t0 = performance.now();
      await deliver(to, raw);
      times.push(performance.now() - t0);
      // The company's messages live in its document stores.
      const [row] = await storeRows<{ outcome: string; documents: number }>("cmp_bench", "SELECT outcome, documents FROM inbound_messages ORDER BY created_at DESC, id DESC LIMIT 1");
      expect(row).toEqual({ outcome: "STORED", documents: n });
    }
    const ms = median(times);
    console.log(`e-mail of ${String(n).padEnd(3)} DTEs through email()             ${ms.toFixed(0)} ms = ${((n * 1000) / ms).toFixed(0)} DTEs/s (median of ${EMAILS_PER_SIZE} e-mails, each of new DTEs: ${times.map((t) => t.toFixed(0)).join(", ")} ms)`);
    results.email.push({ dtes: n, ms: Math.round(ms), dtes_per_second: Math.round((n * 1000) / ms) });
  }
  console.log(`RESULTS ${JSON.stringify(results)}`);
});
