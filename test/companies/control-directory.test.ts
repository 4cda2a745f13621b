import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { siiAuthority } from "../../src/countries/cl";
import { createDb } from "../../src/storage/db/client";
import { companyEntry, directory, DIRECTORY_TTL_MS, forgetInDirectory, HOLD_MS, keyEntry, type DirectoryEnv } from "../../src/storage/db/control-directory";
import { closePartition, forgetDirectory, openPartition } from "../../src/storage/db/document-store";
import { authenticate, hashApiKey, LAST_USED_RESOLUTION_MS } from "../../src/accounts/access/api-keys";
import { revokeKey, setGrant } from "../../src/accounts/access/users";
import { forgetAccess } from "../../src/accounts/access/cache";
import { companyControl, forgetCompanyControl, readCompanyControl } from "../../src/accounts/companies/control-cache";
import { randomUlid } from "../../src/lib/ids";
import { companyContext, signerFor, type StepDeps } from "../../src/invoices/pipeline/steps";
import type { ControlDirectory } from "../../src/index";
import { call, expectError, newCompany, newKey, newOwner } from "../helpers/api";
import { makeFakeCertificate, makeFakePfx } from "../helpers/fake-certificates";
import { readyIssuer } from "../helpers/issuer";

/**
 * The control directory: a company's control data, open partition and CAF rows, and a
 * key's row and grants, held by Durable Objects so that an isolate's cache miss does not read D1.
 * "Another isolate" is simulated by dropping this isolate's caches (forgetCompanyControl,
 * forgetAccess, forgetDirectory): what is read then comes from the objects.
 */
const deps = (at = new Date()): StepDeps => {
  const db = createDb(env.DB);
  return { db, store: db, ordinal: 0, env, authority: siiAuthority(env), now: () => at };
};
const pepper = () => env.API_KEY_PEPPER!;
const companyStub = (companyId: string) => directory(env, companyEntry(companyId)) as DurableObjectStub<ControlDirectory>;

function upload(base: string, key: string, rut = "22222222-2") {
  return makeFakeCertificate({ rut, notBefore: new Date(Date.now() - 86_400_000), notAfter: new Date(Date.now() + 30 * 86_400_000) }).then((cert) => {
    const form = new FormData();
    form.append("certificate", new File([makeFakePfx(cert, "pw", "modern") as Uint8Array<ArrayBuffer>], "otra.pfx"));
    form.append("password", "pw");
    return call("POST", `${base}/certificates`, { key, body: form });
  });
}

describe("an object serves what it filled without D1", () => {
  it("the company's control data: a D1 change behind its back stays invisible until it forgets", async () => {
    const { companyId } = await readyIssuer([33], 5);
    forgetCompanyControl(companyId);
    expect((await companyContext(deps(), companyId)).timeZone).toBe("America/Santiago");
    await env.DB.prepare("UPDATE company_settings SET time_zone = 'America/Punta_Arenas' WHERE company_id = ?").bind(companyId).run();
    forgetCompanyControl(companyId);
    expect((await companyContext(deps(), companyId)).timeZone).toBe("America/Santiago");
    await forgetInDirectory(env, [companyEntry(companyId)]);
    forgetCompanyControl(companyId);
    expect((await companyContext(deps(), companyId)).timeZone).toBe("America/Punta_Arenas");
  });

  it("the open partition: a new isolate takes it from the object", async () => {
    const companyId = `cmp_${randomUlid()}`;
    expect((await openPartition(env, companyId)).ordinal).toBe(1);
    forgetDirectory();
    expect((await openPartition(env, companyId)).ordinal).toBe(1); // fills the object
    await env.DB.prepare("UPDATE document_partitions SET store_name = 'moved' WHERE company_id = ?").bind(companyId).run();
    forgetDirectory();
    expect((await openPartition(env, companyId)).storeName).toBe(`${companyId}:1`);
  });

  it("a cold company's row for access and its control data: one fill, the row read once", async () => {
    const { companyId } = await readyIssuer([33], 5);
    await forgetInDirectory(env, [companyEntry(companyId)]);
    // The access check's read on a cold object fills the control data as well (one D1 batch)…
    expect((await companyStub(companyId).company(companyId))?.id).toBe(companyId);
    const parts = await runInDurableObject(companyStub(companyId), (_o: ControlDirectory, state: DurableObjectState) =>
      state.storage.sql.exec<{ part: string }>("SELECT part FROM entries ORDER BY part").toArray().map((r) => r.part),
    );
    expect(parts).toEqual(["company", "control"]);
    // …so the first document's control data comes from the object, not D1 (a change behind its back is not seen).
    await env.DB.prepare("UPDATE company_settings SET time_zone = 'America/Punta_Arenas' WHERE company_id = ?").bind(companyId).run();
    forgetCompanyControl(companyId);
    expect((await companyContext(deps(), companyId)).timeZone).toBe("America/Santiago");
    // And the row for access is the control data's while the object holds it.
    await env.DB.prepare("UPDATE companies SET legal_name = 'OTRO NOMBRE' WHERE id = ?").bind(companyId).run();
    await runInDurableObject(companyStub(companyId), (_o: ControlDirectory, state: DurableObjectState) => {
      state.storage.sql.exec("DELETE FROM entries WHERE part = 'company'");
    });
    expect((await companyStub(companyId).company(companyId))?.legalName).not.toBe("OTRO NOMBRE");
  });

  it("an entry older than the safety TTL is read again", async () => {
    const { companyId } = await readyIssuer([33], 5);
    forgetCompanyControl(companyId);
    await companyContext(deps(), companyId);
    await env.DB.prepare("UPDATE company_settings SET time_zone = 'America/Punta_Arenas' WHERE company_id = ?").bind(companyId).run();
    await runInDurableObject(companyStub(companyId), (_o: ControlDirectory, state: DurableObjectState) => {
      state.storage.sql.exec("UPDATE entries SET filled_at = filled_at - ?", DIRECTORY_TTL_MS);
    });
    forgetCompanyControl(companyId);
    expect((await companyContext(deps(), companyId)).timeZone).toBe("America/Punta_Arenas");
  });
});

describe("absence is never stored", () => {
  it("a company without a certificate, an unknown key, a company with no partition: each works at once when made", async () => {
    const owner = await newOwner();
    const companyId = await newCompany(owner);
    forgetCompanyControl(companyId);
    expect((await companyControl(env, companyId, Date.now()))?.certificate).toBeUndefined();
    expect((await upload(`/api/companies/${companyId}`, owner.key, "11111111-1")).status).toBe(201);
    // Behind the API's back would be the same: nothing was stored to forget.
    forgetCompanyControl(companyId);
    expect((await companyControl(env, companyId, Date.now()))?.certificate).toBeDefined();
    const unknown = `dte_test_${"A".repeat(40)}`;
    expect(await directory(env, keyEntry(await hashApiKey(pepper(), unknown))).key(await hashApiKey(pepper(), unknown))).toBeNull();
    expect(await companyStub(`cmp_${randomUlid()}`).openPartition("none")).toBeNull();
    await runInDurableObject(companyStub(`cmp_${randomUlid()}`), async (o: ControlDirectory, state: DurableObjectState) => {
      expect(await o.company("nobody")).toBeNull();
      expect(state.storage.sql.exec("SELECT count(*) AS n FROM sqlite_master WHERE name = 'entries'").one().n).toBe(0); // nothing written
    });
  });

  it("a failed read is not stored", async () => {
    await runInDurableObject(companyStub(`cmp_${randomUlid()}`), async (o: ControlDirectory) => {
      await expect(o.entry("x", false, () => Promise.reject(new Error("D1 down")))).rejects.toThrow("D1 down");
      expect(await o.entry("x", false, async () => "read again")).toBe("read again");
    });
  });
});

describe("a fill that read D1 before a write and ends after its forget is not stored", () => {
  it("the generation counter", async () => {
    const { companyId } = await readyIssuer([33], 5);
    await runInDurableObject(companyStub(companyId), async (o: ControlDirectory) => {
      let release!: () => void;
      let readDone!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const hasRead = new Promise<void>((r) => (readDone = r));
      const db = createDb(env.DB);
      // The fill reads D1 now, and is held before it can store.
      const slow = o.entry("control", false, async () => {
        const read = await readCompanyControl(db, companyId);
        readDone();
        await gate;
        return read;
      });
      await hasRead;
      await env.DB.prepare("UPDATE company_settings SET time_zone = 'America/Punta_Arenas' WHERE company_id = ?").bind(companyId).run();
      o.forget(); // the write's forget, after its commit
      release();
      expect((await slow)?.settings?.timeZone).toBe("America/Santiago"); // handed to its caller, not kept
      expect((await o.control(companyId))?.settings?.timeZone).toBe("America/Punta_Arenas");
    });
  });
});

describe("a forget that fails", () => {
  it("is tried 3 times and logged, never thrown (the write it follows is committed; the entry's TTL bounds it)", async () => {
    let calls = 0;
    // An unreachable object: the binding answers a stub whose call fails (the platform's part, not ours).
    const unreachable = {
      CONTROL_DIRECTORY: {
        idFromName: (name: string) => env.CONTROL_DIRECTORY.idFromName(name),
        get: () => ({ forget: () => Promise.reject(new Error(`object unreachable (${++calls})`)) }),
      },
    } as unknown as DirectoryEnv;
    await expect(forgetInDirectory(unreachable, [companyEntry(`cmp_${randomUlid()}`)])).resolves.toBeUndefined();
    expect(calls).toBe(3);
  });
});

/** A binding whose objects cannot be reached (the platform's part, not ours); counts the calls. */
function unreachableDirectory() {
  const counter = { calls: 0 };
  const binding = {
    CONTROL_DIRECTORY: {
      idFromName: (name: string) => env.CONTROL_DIRECTORY.idFromName(name),
      get: () => ({ forget: () => Promise.reject(new Error(`object unreachable (${++counter.calls})`)) }),
    },
  } as unknown as DirectoryEnv;
  return { binding, counter };
}

describe("a withdrawal holds the objects before its D1 write", () => {
  it("while held, an object serves what D1 says but keeps nothing, so a lost forget after the write cannot keep the old row", async () => {
    const { companyId } = await readyIssuer([33], 5);
    await runInDurableObject(companyStub(companyId), async (o: ControlDirectory) => {
      expect((await o.control(companyId))?.settings?.timeZone).toBe("America/Santiago");
      o.forget(undefined, HOLD_MS); // the hold, before the write
      expect((await o.control(companyId))?.settings?.timeZone).toBe("America/Santiago"); // a fill during the hold, as D1 still is
      await env.DB.prepare("UPDATE company_settings SET time_zone = 'America/Punta_Arenas' WHERE company_id = ?").bind(companyId).run();
      // No forget after the write (lost): the fill above was not kept, so the object reads the write.
      expect((await o.control(companyId))?.settings?.timeZone).toBe("America/Punta_Arenas");
    });
  });

  it("the hold is in the object's storage (a new instance after an eviction keeps it) and a forget does not drop it", async () => {
    const { companyId } = await readyIssuer([33], 5);
    const before = Date.now();
    await runInDurableObject(companyStub(companyId), async (o: ControlDirectory, state) => {
      o.forget(undefined, HOLD_MS);
      o.forget();
      const [row] = state.storage.sql.exec<{ filled_at: number }>("SELECT filled_at FROM entries WHERE part = 'hold'").toArray();
      expect(row?.filled_at).toBeGreaterThanOrEqual(before + HOLD_MS);
    });
  });

  it("a key revoked when its object cannot be held: 503, nothing changed, the key still works", async () => {
    const owner = await newOwner();
    const admin = await newKey(owner.clientId, "ADMIN");
    const { binding, counter } = unreachableDirectory();
    const principal = { apiKeyId: owner.apiKeyId, clientId: owner.clientId, role: owner.role, livemode: owner.livemode };
    await expect(revokeKey(createDb(env.DB), binding, principal, admin.apiKeyId)).rejects.toMatchObject({ code: "CONTROL_DIRECTORY_UNAVAILABLE" });
    expect(counter.calls).toBe(3);
    const row = await env.DB.prepare("SELECT revoked_at FROM api_keys WHERE id = ?").bind(admin.apiKeyId).first<{ revoked_at: string | null }>();
    expect(row?.revoked_at).toBeNull();
    forgetAccess();
    expect((await call("GET", "/api/companies", { key: admin.key })).status).toBe(200);
  });

  it("a grant withdrawn when its object cannot be held: 503, the grant stays", async () => {
    const owner = await newOwner();
    const companyId = await newCompany(owner);
    const member = await newKey(owner.clientId, "MEMBER");
    expect((await call("PUT", `/api/api-keys/${member.apiKeyId}/companies/${companyId}`, { key: owner.key })).status).toBe(200);
    const principal = { apiKeyId: owner.apiKeyId, clientId: owner.clientId, role: owner.role, livemode: owner.livemode };
    await expect(setGrant(createDb(env.DB), unreachableDirectory().binding, principal, member.apiKeyId, companyId, false)).rejects.toMatchObject({ code: "CONTROL_DIRECTORY_UNAVAILABLE" });
    forgetAccess();
    expect((await call("GET", `/api/companies/${companyId}`, { key: member.key })).status).toBe(200);
  });
});

describe("every control write is visible at once through the objects", () => {
  it("settings", async () => {
    const { owner, companyId } = await readyIssuer([33], 5);
    await companyContext(deps(), companyId);
    expect((await call("PATCH", `/api/companies/${companyId}/settings`, { key: owner.key, json: { time_zone: "America/Punta_Arenas" } })).status).toBe(200);
    forgetCompanyControl(companyId);
    expect((await companyContext(deps(), companyId)).timeZone).toBe("America/Punta_Arenas");
  });

  it("certificate upload, activation and deletion", async () => {
    const issuer = await readyIssuer([33], 5);
    const first = (await signerFor(deps(), issuer.companyId)).certificateId;
    const up = await upload(issuer.base, issuer.owner.key);
    expect(up.status).toBe(201);
    forgetCompanyControl(issuer.companyId);
    expect((await signerFor(deps(), issuer.companyId)).certificateId).toBe(up.body.id);
    expect((await call("POST", `${issuer.base}/certificates/${first}/activate`, { key: issuer.owner.key })).status).toBe(200);
    forgetCompanyControl(issuer.companyId);
    expect((await signerFor(deps(), issuer.companyId)).certificateId).toBe(first);
    expect((await call("DELETE", `${issuer.base}/certificates/${first}`, { key: issuer.owner.key })).status).toBe(200);
    forgetCompanyControl(issuer.companyId);
    expect((await companyControl(env, issuer.companyId, Date.now()))?.certificate).toBeUndefined();
  });

  it("a CAF loaded", async () => {
    const issuer = await readyIssuer([33], 5);
    expect((await companyControl(env, issuer.companyId, Date.now()))?.cafTypes).toEqual([33]);
    expect((await call("POST", `${issuer.base}/enumeration/refetch`, { key: issuer.owner.key, json: { document_type: "39", quantity: 5 } })).status).toBe(201);
    forgetCompanyControl(issuer.companyId);
    expect([...((await companyControl(env, issuer.companyId, Date.now()))?.cafTypes ?? [])].sort()).toEqual([33, 39]);
  });

  it("a company deleted", async () => {
    const owner = await newOwner();
    const companyId = await newCompany(owner);
    expect((await call("GET", `/api/companies/${companyId}`, { key: owner.key })).status).toBe(200);
    expect((await call("DELETE", `/api/companies/${companyId}`, { key: owner.key })).status).toBe(200);
    forgetAccess();
    expectError(await call("GET", `/api/companies/${companyId}`, { key: owner.key }), 404, "COMPANY_NOT_FOUND");
  });

  it("a key revoked is refused as soon as the isolate's entry is gone (at most ACCESS_CACHE_MS elsewhere)", async () => {
    const owner = await newOwner();
    const admin = await newKey(owner.clientId, "ADMIN");
    expect((await call("GET", "/api/companies", { key: admin.key })).status).toBe(200);
    expect((await call("DELETE", `/api/api-keys/${admin.apiKeyId}`, { key: owner.key })).status).toBe(200);
    forgetAccess();
    expectError(await call("GET", "/api/companies", { key: admin.key }), 401, "AUTH_INVALID_API_KEY");
  });

  it("a grant given and withdrawn", async () => {
    const owner = await newOwner();
    const companyId = await newCompany(owner);
    const member = await newKey(owner.clientId, "MEMBER");
    expectError(await call("GET", `/api/companies/${companyId}`, { key: member.key }), 403, "AUTH_COMPANY_ACCESS_DENIED");
    expect((await call("PUT", `/api/api-keys/${member.apiKeyId}/companies/${companyId}`, { key: owner.key })).status).toBe(200);
    forgetAccess();
    expect((await call("GET", `/api/companies/${companyId}`, { key: member.key })).status).toBe(200);
    expect((await call("DELETE", `/api/api-keys/${member.apiKeyId}/companies/${companyId}`, { key: owner.key })).status).toBe(200);
    forgetAccess();
    expectError(await call("GET", `/api/companies/${companyId}`, { key: member.key }), 403, "AUTH_COMPANY_ACCESS_DENIED");
  });

  it("a user revoked: every key of the user", async () => {
    const owner = await newOwner();
    const user = (await call("POST", "/api/users", { key: owner.key, json: { email: `u${crypto.randomUUID().slice(0, 8)}@example.cl`, name: "Ana" } })).body;
    const keys = await Promise.all(["MEMBER", "ADMIN"].map(async (role) => (await call("POST", `/api/users/${user.id}/api-keys`, { key: owner.key, json: { name: role, role } })).body.api_key as string));
    for (const key of keys) expect((await call("GET", "/api/me", { key })).status).toBe(200);
    expect((await call("DELETE", `/api/users/${user.id}`, { key: owner.key })).status).toBe(200);
    forgetAccess();
    for (const key of keys) expectError(await call("GET", "/api/me", { key }), 401, "AUTH_INVALID_API_KEY");
  });

  it("a partition closed", async () => {
    const companyId = `cmp_${randomUlid()}`;
    await openPartition(env, companyId);
    forgetDirectory();
    expect((await openPartition(env, companyId)).ordinal).toBe(1); // held by the object
    await closePartition(env, companyId, 1, "SIZE", 10);
    forgetDirectory();
    expect((await openPartition(env, companyId)).ordinal).toBe(2);
  });
});

describe("the key's last use", () => {
  it("is written at most once an hour per key, across isolates", async () => {
    const owner = await newOwner();
    const t0 = new Date(Date.now() + 60_000);
    forgetAccess();
    const first = await authenticate(env, pepper(), owner.key, t0);
    expect(first.ok && first.touch).toBeTruthy();
    if (first.ok) await first.touch!();
    // Another isolate a few minutes later: the key's object shows the use, nothing to write.
    forgetAccess();
    const later = await authenticate(env, pepper(), owner.key, new Date(t0.getTime() + 10 * 60_000));
    expect(later.ok && later.touch).toBeNull();
    forgetAccess();
    const nextHour = await authenticate(env, pepper(), owner.key, new Date(t0.getTime() + LAST_USED_RESOLUTION_MS + 1));
    expect(nextHour.ok && nextHour.touch).toBeTruthy();
    if (nextHour.ok) await nextHour.touch!();
    const [row] = (await env.DB.prepare("SELECT last_used_at FROM api_keys WHERE id = ?").bind(owner.apiKeyId).all<{ last_used_at: string }>()).results;
    expect(row!.last_used_at).toBe(new Date(t0.getTime() + LAST_USED_RESOLUTION_MS + 1).toISOString());
  });
});
