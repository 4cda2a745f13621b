import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { checkImage, MAX_LOGO_SIDE } from "../../src/countries/cl/printed/pdf/image";
import { renderPdf } from "../../src/countries/cl/printed/pdf/render";
import { call, expectError, newCompany, newOwner, type Actor } from "../helpers/api";
import { loadPdf } from "../pdf/helpers";
import { sampleDocument, samplePng } from "../pdf/samples";

/** Starts like a PNG (signature and a plausible IHDR) and then is garbage. */
function pngLookalike(): Uint8Array {
  const real = samplePng();
  const out = real.slice(0, 40);
  out.fill(0x41, 33);
  return out;
}

/** A real PNG whose IHDR announces width x height (the image data stays the small one's). */
function pngAnnouncing(width: number, height: number): Uint8Array {
  const png = samplePng();
  const view = new DataView(png.buffer, png.byteOffset);
  view.setUint32(16, width);
  view.setUint32(20, height);
  return png;
}

function logoForm(bytes: Uint8Array): FormData {
  const form = new FormData();
  form.append("logo", new File([bytes as Uint8Array<ArrayBuffer>], "logo.png", { type: "image/png" }));
  return form;
}

let owner: Actor;
let company: string;
beforeAll(async () => {
  owner = await newOwner("Logos");
  company = await newCompany(owner);
});

describe("logos are parsed and bounded at upload by the routine the PDF uses", () => {
  it("checkImage: a real PNG passes; lookalikes, huge and truncated images do not", () => {
    expect(checkImage(samplePng({ width: 24, height: 12 }))).toEqual({ kind: "png", width: 24, height: 12 });
    expect(() => checkImage(pngLookalike())).toThrow();
    expect(() => checkImage(pngAnnouncing(MAX_LOGO_SIDE + 1, 10))).toThrow(/at most 4096 x 4096/);
    expect(() => checkImage(pngAnnouncing(24, 4000))).toThrow(/truncated/);
  });

  it("the upload refuses a file that only starts like a PNG, a huge one and a truncated one", async () => {
    for (const bytes of [pngLookalike(), pngAnnouncing(100_000, 100_000), pngAnnouncing(24, 4000)]) {
      const res = await call("POST", `/api/companies/${company}/logo`, { key: owner.key, body: logoForm(bytes) });
      expectError(res, 400, "LOGO_INVALID_FORMAT");
    }
    expect((await call("GET", `/api/companies/${company}/settings`, { key: owner.key })).body.logo).toBeNull();
    const ok = await call("POST", `/api/companies/${company}/logo`, { key: owner.key, body: logoForm(samplePng()) });
    expect(ok.status).toBe(201);
  });

  it("a logo that cannot be drawn renders as no logo, never an error", async () => {
    for (const logo of [pngLookalike(), pngAnnouncing(100_000, 100_000), new Uint8Array([1, 2, 3, 4, 5])]) {
      const pdf = await renderPdf(sampleDocument(33, { lines: 1, logo }), "A4");
      const loaded = await loadPdf(pdf);
      expect(loaded.pages[0]!.xobjects.some((x) => x.includes("Image"))).toBe(false);
    }
    const withLogo = await loadPdf(await renderPdf(sampleDocument(33, { lines: 1, logo: samplePng() }), "A4"));
    expect(withLogo.pages[0]!.xobjects.some((x) => x.includes("Image"))).toBe(true);
  });
});

describe("logo files", () => {
  it("are served with nosniff, and no longer once the company is deleted", async () => {
    const c = await newCompany(owner);
    const up = await call("POST", `/api/companies/${c}/logo`, { key: owner.key, body: logoForm(samplePng()) });
    expect(up.status).toBe(201);
    const path = new URL(up.body.file_url).pathname;
    const served = await call("GET", path);
    expect(served.status).toBe(200);
    expect(served.headers.get("X-Content-Type-Options")).toBe("nosniff");
    expect((await call("DELETE", `/api/companies/${c}`, { key: owner.key })).status).toBe(200);
    const gone = await call("GET", path);
    expectError(gone, 404, "LOGO_NOT_FOUND");
    expect(gone.headers.get("X-Content-Type-Options")).toBe("nosniff");
    expect(await env.FILES.head(path.replace(/^\/files\/logos\/([^/]+)\//, "companies/$1/logos/"))).not.toBeNull(); // kept, not served
  });

  it("every response carries nosniff", async () => {
    expect((await call("GET", "/health")).headers.get("X-Content-Type-Options")).toBe("nosniff");
    expect((await call("GET", "/openapi.json")).headers.get("X-Content-Type-Options")).toBe("nosniff");
  });
});
