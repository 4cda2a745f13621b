/**
 * The reception verification cost in Node, on the same code as the workerd bench
 * (reception.bench.test.ts): envelopes of 1, 50 and 500 DTEs, verifyInbound CPU per DTE against the
 * crypto floor of a DTE (two RSA-SHA1 verifies and a SHA-1 of a DTE-sized Documento), timed
 * interleaved, median of rounds. PROFILE_OUT=dir writes a CPU profile of the verification loops only
 * (dir/reception-<n>.cpuprofile, open in Chrome DevTools); PROFILE_ONLY=50 runs only that envelope
 * size; PROFILE_ROUNDS sets the rounds (default 7).
 *   node --import tsx bench/reception/profile.node.ts
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import path from "node:path";
import { receptionCafTrust, verifyInbound } from "../../src/countries/cl/exchange/verify";
import { RECIPIENT, supplier } from "./fixture";

const root = path.resolve(import.meta.dirname, "../..");

const cpuMs = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const { signer, envelopeOf } = await supplier(readFileSync(path.join(root, "test/fixtures/cl/fake-modern-aes.pfx.b64"), "utf8"));

const message = new Uint8Array(2500).fill(65);
const signature = await crypto.subtle.sign("RSASSA-PKCS1-v1_5", signer.privateKey, message);
const b64url = (b: Uint8Array) => Buffer.from(b).toString("base64url");
const pub = await crypto.subtle.importKey("jwk", { kty: "RSA", n: b64url(signer.modulus), e: b64url(signer.exponent), ext: true }, { name: "RSASSA-PKCS1-v1_5", hash: "SHA-1" }, false, ["verify"]);
const documento = new Uint8Array(4500).fill(66);
const floorOf = async (n: number) => {
  const t0 = cpuMs();
  for (let i = 0; i < n; i++) {
    if (!(await crypto.subtle.verify("RSASSA-PKCS1-v1_5", pub, signature, message))) throw new Error("floor");
    await crypto.subtle.verify("RSASSA-PKCS1-v1_5", pub, signature, message);
    await crypto.subtle.digest("SHA-1", documento);
  }
  return (cpuMs() - t0) / n;
};

// The envelope's own signature, `reps` times for envelopes of n DTEs: one verify and the SHA-1 of n Documentos' worth.
const setDte = new Uint8Array(4500 * 500).fill(67);
const envelopeFloorOf = async (n: number, reps: number) => {
  const t0 = cpuMs();
  for (let j = 0; j < reps; j++) {
    await crypto.subtle.verify("RSASSA-PKCS1-v1_5", pub, signature, message);
    await crypto.subtle.digest("SHA-1", setDte.subarray(0, 4500 * n));
  }
  return cpuMs() - t0;
};

await floorOf(50);
const trust = receptionCafTrust("simulator");
const sizes = process.env.PROFILE_ONLY ? [Number(process.env.PROFILE_ONLY)] : [1, 50, 500];
const rounds = Number(process.env.PROFILE_ROUNDS ?? 7);
for (const n of sizes) {
  const xml = await envelopeOf(n);
  const first = await verifyInbound(xml, trust);
  if (!first.ok) throw new Error(`verifyInbound: ${first.message}`);
  const reps = Math.ceil(500 / n);
  const floors: number[] = [];
  const pers: number[] = [];
  const ratios: number[] = [];
  const envelopeRatios: number[] = [];
  const session = process.env.PROFILE_OUT ? new Session() : null;
  if (session) {
    session.connect();
    await session.post("Profiler.enable");
    await session.post("Profiler.setSamplingInterval", { interval: 100 });
    await session.post("Profiler.start");
  }
  for (let k = 0; k < rounds; k++) {
    const floor = await floorOf(n * reps);
    const envelopeFloor = floor + (await envelopeFloorOf(n, reps)) / (n * reps);
    const t0 = cpuMs();
    for (let j = 0; j < reps; j++) if (!(await verifyInbound(xml, trust)).ok) throw new Error("verify");
    const per = (cpuMs() - t0) / (n * reps);
    floors.push(floor);
    pers.push(per);
    ratios.push(per / floor);
    envelopeRatios.push(per / envelopeFloor);
  }
  if (session) {
    const { profile } = await session.post("Profiler.stop");
    mkdirSync(process.env.PROFILE_OUT!, { recursive: true });
    writeFileSync(path.join(process.env.PROFILE_OUT!, `reception-${n}.cpuprofile`), JSON.stringify(profile));
    session.disconnect();
  }
  console.log(`envelope of ${String(n).padEnd(3)} DTEs (${xml.length} chars)  ${median(pers).toFixed(3)} ms/DTE CPU; floor ${median(floors).toFixed(3)} ms; ratio ${median(ratios).toFixed(2)}×, with the envelope's signature in the floor ${median(envelopeRatios).toFixed(2)}× (median of ${rounds})`);
}
