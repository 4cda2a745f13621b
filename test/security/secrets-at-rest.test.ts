import { env } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { eq } from "drizzle-orm";
import { createDb } from "../../src/storage/db/client";
import { apiKeys, cafs, certificates, keyRotations, webhookEndpoints } from "../../src/storage/db/schema";
import { hashApiKey } from "../../src/accounts/access/api-keys";
import { requireSigningCredentials } from "../../src/accounts/certificates/certificates";
import { readCafFile } from "../../src/folios/caf-files";
import { rotateAll, rotationStep } from "../../src/accounts/secrets/rotation";
import { base64ToBytes, bytesToBase64 } from "../../src/lib/base64";
import { keyVersionOf, open, parseKeyRing, seal } from "../../src/lib/secrets";
import { signingSecrets } from "../../src/webhooks/endpoints";
import { call, newCompany, newOwner, nextRut, type Actor } from "../helpers/api";
import { makeFakeCertificate, makeFakePfx } from "../helpers/fake-certificates";
import { invoiceBody, untilFinal } from "../helpers/issuer";
import { register, receiverUrl } from "../webhooks/helpers";

const db = createDb(env.DB);
const PASSWORD = "Pfx-Password-Needle-7f3a9c";
const OLD_KEY = env.MASTER_KEY!;
const NEW_KEY = bytesToBase64(crypto.getRandomValues(new Uint8Array(32)));
const RING = `2:${NEW_KEY},1:${OLD_KEY}`;
const rotated = { ...env, MASTER_KEY: RING } as Env;

/** Every console line the Worker writes during this file (queue consumers included: same isolate). */
const logLines: string[] = [];
const spies = (["log", "info", "warn", "error", "debug"] as const).map((m) =>
  vi.spyOn(console, m).mockImplementation((...args: unknown[]) => void logLines.push(args.map(String).join(" "))),
);
afterAll(() => spies.forEach((s) => s.mockRestore()));

let owner: Actor;
let companyId: string;
let pfx: Uint8Array;
let privateKey: Uint8Array;
let webhookSecret: string;
let cafXml: string;

async function everythingInR2(): Promise<{ key: string; bytes: Uint8Array }[]> {
  const out: { key: string; bytes: Uint8Array }[] = [];
  let cursor: string | undefined;
  do {
    const page = await env.FILES.list({ cursor, limit: 1000 });
    for (const o of page.objects) out.push({ key: o.key, bytes: new Uint8Array(await (await env.FILES.get(o.key))!.arrayBuffer()) });
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  return out;
}

async function everythingInD1(): Promise<string> {
  const tables = await env.DB.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' AND name NOT LIKE 'd1_%'").all<{ name: string }>();
  const dumps: string[] = [];
  for (const { name } of tables.results) dumps.push(JSON.stringify((await env.DB.prepare(`SELECT * FROM "${name}"`).all()).results));
  return dumps.join("\n");
}

function contains(haystack: Uint8Array, needle: Uint8Array): boolean {
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

const latin1 = (b: Uint8Array) => new TextDecoder("latin1").decode(b);

beforeAll(async () => {
  owner = await newOwner("Secrets at rest");
  const rut = nextRut();
  companyId = await newCompany(owner, { tax_identification_document_number: rut, legal_name: "EMPRESA DE PRUEBA SPA" });
  const cert = await makeFakeCertificate({ rut: "11111111-1", notBefore: new Date(Date.now() - 86_400_000), notAfter: new Date(Date.now() + 365 * 86_400_000) });
  privateKey = cert.keyPkcs8;
  pfx = makeFakePfx(cert, PASSWORD, "modern");
  const form = new FormData();
  form.append("certificate", new File([pfx as Uint8Array<ArrayBuffer>], "firma.pfx"));
  form.append("password", PASSWORD);
  expect((await call("POST", `/api/companies/${companyId}/certificates`, { key: owner.key, body: form })).status).toBe(201);
  // One CAF downloaded from the simulated SII portal and uploaded, one granted through refetch.
  const caf = await call("POST", "/simulator/sii/caf", { key: owner.key, json: { rut, document_type: 33, from: 1, to: 50 } });
  expect(caf.status).toBe(200);
  cafXml = caf.body as string;
  const upload = new FormData();
  upload.append("file", new File([new TextEncoder().encode(cafXml)], "caf.xml"));
  expect((await call("POST", `/api/companies/${companyId}/enumeration/upload`, { key: owner.key, body: upload })).status).toBe(201);
  expect((await call("POST", `/api/companies/${companyId}/enumeration/refetch`, { key: owner.key, json: { document_type: "39", quantity: 10 } })).status).toBe(201);
  webhookSecret = (await register(owner, companyId, { url: receiverUrl("secrets").url, events: ["*"] })).secret;
  const issued = await call("POST", `/api/companies/${companyId}/invoices`, { key: owner.key, json: invoiceBody(rut, "33") });
  expect(issued.status, JSON.stringify(issued.body)).toBe(202);
  await untilFinal({ owner, companyId, rut, base: `/api/companies/${companyId}` }, issued.body.id);
});

describe("secrets at rest", () => {
  it("R2 holds no plaintext pfx, password, private key, RSASK or webhook secret", async () => {
    const objects = await everythingInR2();
    expect(objects.some((o) => o.key.includes("/cafs/"))).toBe(true);
    const pfxSlice = pfx.subarray(100, 164);
    const keySlice = privateKey.subarray(40, 104);
    for (const o of objects) {
      expect(contains(o.bytes, pfxSlice), o.key).toBe(false);
      expect(contains(o.bytes, keySlice), o.key).toBe(false);
      const text = latin1(o.bytes);
      for (const needle of [PASSWORD, webhookSecret, "RSASK", "PRIVATE KEY", bytesToBase64(privateKey).slice(0, 64)]) expect(text.includes(needle), `${o.key} holds ${needle.slice(0, 12)}…`).toBe(false);
    }
  });

  it("D1 holds no plaintext pfx, password, private key, RSASK, webhook secret or API key", async () => {
    const dump = await everythingInD1();
    for (const needle of [PASSWORD, webhookSecret, owner.key, "RSASK", "PRIVATE KEY", bytesToBase64(pfx).slice(40, 120), bytesToBase64(privateKey).slice(40, 120)]) {
      expect(dump.includes(needle), `D1 holds ${needle.slice(0, 12)}…`).toBe(false);
    }
  });

  it("API keys are stored only as keyed hashes (HMAC with the pepper)", async () => {
    const row = await db.query.apiKeys.findFirst({ where: eq(apiKeys.id, owner.apiKeyId) });
    expect(row!.keyHash).toBe(await hashApiKey(env.API_KEY_PEPPER!, owner.key));
    const plainSha = Array.from(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(owner.key))), (b) => b.toString(16).padStart(2, "0")).join("");
    expect(row!.keyHash).not.toBe(plainSha);
    expect(row!.keyHash).not.toBe(await hashApiKey("another-pepper-0123456789", owner.key));
  });

  it("the sealed CAF opens only under its own id and gives back the file as received", async () => {
    const [row] = await db.select().from(cafs).where(eq(cafs.companyId, companyId)).limit(1);
    expect(row!.fileKey.endsWith(".xml.sealed")).toBe(true);
    expect(latin1((await readCafFile(env, row!))!)).toContain("<AUTORIZACION>");
    await expect(readCafFile(env, { ...row!, id: "caf_other" })).rejects.toThrow();
  });

  it("no log line carries an API key, a password, a secret or a whole XML", () => {
    expect(logLines.length).toBeGreaterThan(0);
    for (const line of logLines) {
      for (const needle of [owner.key, PASSWORD, webhookSecret, NEW_KEY, OLD_KEY, env.API_KEY_PEPPER!, "PRIVATE KEY", "<?xml", "<AUTORIZACION>", "<DTE"]) {
        expect(line.includes(needle), `log line holds ${needle.slice(0, 12)}…: ${line.slice(0, 200)}`).toBe(false);
      }
    }
  });
});

describe("master key ring", () => {
  it("a single key is version 1; a ring's first entry is current; bad rings are refused", async () => {
    expect(parseKeyRing(OLD_KEY).current).toBe(1);
    expect(parseKeyRing(RING).current).toBe(2);
    expect(() => parseKeyRing(`2:${NEW_KEY},2:${OLD_KEY}`)).toThrow(/twice/);
    expect(() => parseKeyRing(`${NEW_KEY},${OLD_KEY}`)).toThrow(/<version>:<base64>/);
    expect(() => parseKeyRing("2:c2hvcnQ=")).toThrow(/32 bytes/);
    const v1 = await seal(OLD_KEY, new TextEncoder().encode("x"), "ad");
    expect(keyVersionOf(v1)).toBe(1);
    expect(new TextDecoder().decode(await open(RING, v1, "ad"))).toBe("x");
    const v2 = await seal(RING, new TextEncoder().encode("y"), "ad");
    expect(keyVersionOf(v2)).toBe(2);
    await expect(open(OLD_KEY, v2, "ad")).rejects.toThrow(/version 2/);
    await expect(open(RING, v2, "other")).rejects.toThrow();
  });

  it("rotation re-seals everything to the new version, resumes after a stop, and a second run changes nothing", async () => {
    // Also a CAF stored plain (as before sealing existed): rotation seals it and removes the plain copy.
    const [sealedCaf] = await db.select().from(cafs).where(eq(cafs.companyId, companyId)).limit(1);
    const legacyKey = sealedCaf!.fileKey.replace(/\.sealed$/, "");
    await env.FILES.put(legacyKey, (await readCafFile(env, sealedCaf!))!);
    await db.update(cafs).set({ fileKey: legacyKey }).where(eq(cafs.id, sealedCaf!.id));

    // A first run that stops after one small step (a crash), then a full run resumes from there.
    const first = await rotationStep(db, rotated, 1);
    expect(first.done).toBe(false);
    const state = await db.query.keyRotations.findFirst({ where: eq(keyRotations.version, 2) });
    expect(state!.cursor).not.toBe("");
    await rotateAll(db, rotated, 7);
    expect((await db.query.keyRotations.findFirst({ where: eq(keyRotations.version, 2) }))!.phase).toBe("done");

    // Every sealed value is now version 2 and opens with the ring.
    for (const cert of await db.select().from(certificates)) {
      expect(keyVersionOf(base64ToBytes(cert.passwordEnc))).toBe(2);
      expect(keyVersionOf(new Uint8Array(await (await env.FILES.get(cert.pfxKey))!.arrayBuffer()))).toBe(2);
    }
    for (const hook of await db.select().from(webhookEndpoints)) expect(keyVersionOf(base64ToBytes(hook.secretEnc))).toBe(2);
    for (const caf of await db.select().from(cafs)) {
      expect(caf.fileKey.endsWith(".sealed")).toBe(true);
      expect(keyVersionOf(new Uint8Array(await (await env.FILES.get(caf.fileKey))!.arrayBuffer()))).toBe(2);
    }
    expect(await env.FILES.get(legacyKey)).toBeNull();
    const migrated = await db.query.cafs.findFirst({ where: eq(cafs.id, sealedCaf!.id) });
    expect(latin1((await readCafFile(rotated, migrated!))!)).toContain("<AUTORIZACION>");
    const creds = await requireSigningCredentials(db, rotated, companyId);
    expect(creds.certificateId).toMatch(/^cer_/);
    const [hook] = await db.select().from(webhookEndpoints).where(eq(webhookEndpoints.companyId, companyId));
    expect(await signingSecrets(rotated, hook!)).toEqual([webhookSecret]);
    // The old key alone no longer opens them: the old key can be dropped from the ring.
    await expect(requireSigningCredentials(db, env, companyId)).rejects.toThrow(/version 2/);

    // Idempotent: nothing left to do, and a fresh walk of version 2 re-seals nothing.
    expect(await rotateAll(db, rotated)).toBe(0);
    await db.delete(keyRotations).where(eq(keyRotations.version, 2));
    expect(await rotateAll(db, rotated)).toBe(0);
  });
});
