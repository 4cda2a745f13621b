/**
 * The reception verification cost in Node, on the same code as the workerd bench
 * (reception.bench.test.ts): envelopes of 1, 50 and 500 DTEs, verifyInbound CPU per DTE against the
 * crypto floor of a DTE (fixture.ts cryptoFloor: two RSA-SHA1 verifies under keys of the sizes that
 * sign them, and the SHA-1 of its Documento), timed
 * interleaved, median of rounds. PROFILE_OUT=dir writes a CPU profile of the verification loops only
 * (dir/reception-<n>.cpuprofile, open in Chrome DevTools); PROFILE_ONLY=50 runs only that envelope
 * size; PROFILE_ROUNDS sets the rounds (default 7).
 *   node --import tsx bench/reception/profile.node.ts
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import path from "node:path";
import { receptionCafTrust, verifyInbound } from "../../src/countries/cl/exchange/verify";
import { cryptoFloor, RECIPIENT, supplier } from "./fixture";

const root = path.resolve(import.meta.dirname, "../..");

const cpuMs = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const { signer, envelopeOf } = await supplier(readFileSync(path.join(root, "test/fixtures/cl/fake-modern-aes.pfx.b64"), "utf8"));

const trust = receptionCafTrust("simulator");
const sizes = process.env.PROFILE_ONLY ? [Number(process.env.PROFILE_ONLY)] : [1, 50, 500];
const rounds = Number(process.env.PROFILE_ROUNDS ?? 7);
for (const n of sizes) {
  const xml = await envelopeOf(n);
  const f = await cryptoFloor(signer, xml, cpuMs);
  await f.dtes(50);
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
    const floor = await f.dtes(n * reps);
    const envelopeFloor = floor + (await f.envelope(reps)) / (n * reps);
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
