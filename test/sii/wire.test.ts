import { describe, expect, it } from "vitest";
import { SiiClient, siiEndpoints } from "../../src/countries/cl/sii/client";
import { SiiError } from "../../src/countries/cl/sii/errors";
import { envioOutcome, explainSiiStatus, SII_STATUS_TEXT } from "../../src/countries/cl/sii/status";
import {
  buildMultipart,
  buildRecepcionDte,
  buildRespuesta,
  parseMultipart,
  parseRecepcionDte,
  parseRespuesta,
  parseSoapRequest,
  parseSoapResponse,
  soapFault,
  soapRequest,
  soapResponse,
} from "../../src/countries/cl/sii/wire";
import { decodeLatin1, encodeLatin1 } from "../../src/countries/cl/xml/xml";
import { STEP_MS, visibleState } from "../../src/countries/cl/simulator/store";

const latin1 = (s: string) => encodeLatin1(s);

describe("SOAP rpc/encoded", () => {
  it("builds a request whose operation and string parameters read back, with XML escaped", () => {
    const x = soapRequest("getToken", [["pszXml", '<getToken><item><Semilla>1</Semilla></item></getToken>']]);
    expect(x).toContain('soapenv:encodingStyle="http://schemas.xmlsoap.org/soap/encoding/"');
    expect(x).toContain("&lt;getToken&gt;");
    const r = parseSoapRequest(x);
    expect(r.method).toBe("getToken");
    expect(r.params.pszXml).toBe("<getToken><item><Semilla>1</Semilla></item></getToken>");
  });
  it("reads the ...Return string and Faults", () => {
    const inner = buildRespuesta([["ESTADO", "00"]], [["SEMILLA", "012345678901"]]);
    const r = parseSoapResponse(soapResponse("getSeed", inner));
    expect(r).toEqual({ kind: "return", value: inner });
    const parsed = parseRespuesta(inner);
    expect(parsed.hdr.ESTADO).toBe("00");
    expect(parsed.body).toEqual([["SEMILLA", "012345678901"]]);
    expect(parseSoapResponse(soapFault("Error de Autenticacion: TOKEN invalido"))).toEqual({ kind: "fault", faultCode: "soapenv:Server.userException", faultString: "Error de Autenticacion: TOKEN invalido" });
    expect(() => parseSoapResponse("<html>nope</html>")).toThrow(/not a SOAP envelope/);
    expect(() => parseSoapResponse("Error 500")).toThrow();
  });
  it("parses the SII's own RESPUESTA shape (prefixed wrappers, unprefixed children, body before header)", () => {
    const x = `<?xml version="1.0" encoding="UTF-8"?><SII:RESPUESTA xmlns:SII="http://www.sii.cl/XMLSchema"><SII:RESP_BODY><TIPO_DOCTO>33</TIPO_DOCTO><INFORMADOS>2</INFORMADOS><ACEPTADOS>1</ACEPTADOS><RECHAZADOS>1</RECHAZADOS><REPAROS>0</REPAROS><TIPO_DOCTO>61</TIPO_DOCTO><INFORMADOS>1</INFORMADOS><ACEPTADOS>1</ACEPTADOS><RECHAZADOS>0</RECHAZADOS><REPAROS>1</REPAROS></SII:RESP_BODY><SII:RESP_HDR><TRACKID>1234</TRACKID><ESTADO>EPR</ESTADO><GLOSA>Envio Procesado</GLOSA></SII:RESP_HDR></SII:RESPUESTA>`;
    const r = parseRespuesta(x);
    expect(r.hdr).toMatchObject({ TRACKID: "1234", ESTADO: "EPR" });
    expect(r.body.filter(([k]) => k === "TIPO_DOCTO").map(([, v]) => v)).toEqual(["33", "61"]);
  });
});

describe("DTEUpload answer", () => {
  it("round-trips RECEPCIONDTE with STATUS, TRACKID and DETAIL/ERROR", () => {
    const x = buildRecepcionDte({ rutSender: "11111111-1", rutCompany: "76086428-5", file: "envio.xml", timestamp: "2026-11-22 06:00:00", status: 7, errors: ["Raiz no corresponde"] });
    expect(parseRecepcionDte(x)).toEqual({ rutSender: "11111111-1", rutCompany: "76086428-5", file: "envio.xml", timestamp: "2026-11-22 06:00:00", status: 7, errors: ["Raiz no corresponde"] });
    expect(parseRecepcionDte("<RECEPCIONDTE><STATUS>0</STATUS><TRACKID>0001234</TRACKID></RECEPCIONDTE>")).toMatchObject({ status: 0, trackId: "0001234" });
    expect(() => parseRecepcionDte("<RECEPCIONDTE><TRACKID>1</TRACKID></RECEPCIONDTE>")).toThrow(/STATUS/);
  });
});

describe("multipart/form-data built as bytes", () => {
  const file = latin1('<?xml version="1.0" encoding="ISO-8859-1"?>\n<EnvioDTE>Ñuñoa</EnvioDTE>\n');
  const fields = [
    { name: "rutSender", value: "11111111" },
    { name: "dvSender", value: "1" },
    { name: "rutCompany", value: "76086428" },
    { name: "dvCompany", value: "5" },
    { name: "archivo", filename: "envio.xml", contentType: "text/xml", data: file },
  ];
  it("keeps the field order and the file's ISO-8859-1 bytes, and parses back", () => {
    const mp = buildMultipart(fields, "BOUNDARY123");
    expect(mp.contentType).toBe("multipart/form-data; boundary=BOUNDARY123");
    const text = decodeLatin1(mp.body);
    const order = ["rutSender", "dvSender", "rutCompany", "dvCompany", "archivo"].map((n) => text.indexOf(`name="${n}"`));
    expect(order.every((v, i) => v > 0 && (i === 0 || v > order[i - 1]!))).toBe(true);
    expect(text).toContain('filename="envio.xml"\r\nContent-Type: text/xml\r\n\r\n<?xml');
    expect(text.endsWith("--BOUNDARY123--\r\n")).toBe(true);
    // Ñ stays one byte (0xD1), not UTF-8 (0xC3 0x91)
    expect([...mp.body].includes(0xd1)).toBe(true);
    expect([...mp.body].includes(0xc3)).toBe(false);
    const parts = parseMultipart(mp.body, mp.contentType);
    expect(parts.map((p) => p.name)).toEqual(["rutSender", "dvSender", "rutCompany", "dvCompany", "archivo"]);
    expect(parts[4]!.data).toEqual(file);
    expect(parts[4]!.filename).toBe("envio.xml");
  });
  it("a truncated body is refused by the parser", () => {
    const mp = buildMultipart(fields, "B");
    expect(() => parseMultipart(mp.body.slice(0, mp.body.length - 40), mp.contentType)).toThrow(/truncated/);
  });
  it("the client sends DTEUpload with Content-Length, cookie, Mozilla UA, no chunking, fields in order", async () => {
    const seen: Request[] = [];
    const bodies: Uint8Array[] = [];
    const fetcher = async (req: Request) => {
      seen.push(req);
      bodies.push(new Uint8Array(await req.clone().arrayBuffer()));
      const url = new URL(req.url);
      if (url.pathname.endsWith("CrSeed.jws")) return new Response(soapResponse("getSeed", buildRespuesta([["ESTADO", "00"]], [["SEMILLA", "000000000042"]])));
      if (url.pathname.endsWith("GetTokenFromSeed.jws")) return new Response(soapResponse("getToken", buildRespuesta([["ESTADO", "00"]], [["TOKEN", "TOKENXYZ"]])));
      return new Response(buildRecepcionDte({ status: 0, trackId: "0000012345", errors: [] }));
    };
    const { fakeCredentials } = await import("./helpers");
    const cert = await fakeCredentials();
    const client = new SiiClient({ mode: "certification", fetcher });
    const r = await client.uploadEnvio({ cert, companyRut: "76.086.428-5", file, fileName: "envio.xml" });
    expect(r).toMatchObject({ trackId: "12345", status: 0, duplicate: false });
    const up = seen[2]!;
    expect(up.url).toBe("https://maullin.sii.cl/cgi_dte/UPL/DTEUpload");
    expect(up.headers.get("content-length")).toBe(String(bodies[2]!.length));
    expect(up.headers.get("transfer-encoding")).toBeNull();
    expect(up.headers.get("cookie")).toBe("TOKEN=TOKENXYZ");
    expect(up.headers.get("user-agent")).toMatch(/^Mozilla\/4\.0 \(compatible; PROG 1\.0/);
    const parts = parseMultipart(bodies[2]!, up.headers.get("content-type")!);
    expect(parts.map((p) => [p.name, p.name === "archivo" ? p.filename : p.text])).toEqual([
      ["rutSender", "11111111"],
      ["dvSender", "1"],
      ["rutCompany", "76086428"],
      ["dvCompany", "5"],
      ["archivo", "envio.xml"],
    ]);
    // the token request was SOAP to GetTokenFromSeed, carrying a signed <getToken> with the seed
    const tokenReq = parseSoapRequest(new TextDecoder().decode(bodies[1]!));
    expect(tokenReq.params.pszXml).toContain("<Semilla>000000000042</Semilla>");
    expect(tokenReq.params.pszXml).toContain('<Reference URI="">');
    expect(seen[1]!.url).toBe("https://maullin.sii.cl/DTEWS/GetTokenFromSeed.jws");
  });
});

describe("hosts", () => {
  it("simulator, certification and production", () => {
    expect(siiEndpoints("simulator")).toEqual({ soapBase: "http://sii.simulator/simulator/sii", restBase: "http://sii.simulator/simulator/sii/recursos/v1", restUploadBase: "http://sii.simulator/simulator/sii/recursos/v1" });
    expect(siiEndpoints("certification")).toEqual({ soapBase: "https://maullin.sii.cl", restBase: "https://apicert.sii.cl/recursos/v1", restUploadBase: "https://pangal.sii.cl/recursos/v1" });
    expect(siiEndpoints("production")).toEqual({ soapBase: "https://palena.sii.cl", restBase: "https://api.sii.cl/recursos/v1", restUploadBase: "https://rahue.sii.cl/recursos/v1" });
  });
});

describe("transport errors are typed and retryable where a retry can help", () => {
  const err = async (p: Promise<unknown>) => {
    try {
      await p;
    } catch (e) {
      if (e instanceof SiiError) return e;
      throw e;
    }
    throw new Error("expected SiiError");
  };
  it("network failure, 5xx, 'Error 500' body, seed error states, unreadable answers", async () => {
    const c = (f: (r: Request) => Promise<Response>) => new SiiClient({ mode: "production", fetcher: f });
    expect(await err(c(async () => Promise.reject(new TypeError("connection reset"))).getSeed())).toMatchObject({ code: "NETWORK", retryable: true });
    expect(await err(c(async () => new Response("busy", { status: 503 })).getSeed())).toMatchObject({ code: "HTTP_ERROR", retryable: true, httpStatus: 503 });
    expect(await err(c(async () => new Response("Error 500 -- internal")).getSeed())).toMatchObject({ code: "SERVICE_ERROR", retryable: true });
    expect(await err(c(async () => new Response(soapResponse("getSeed", buildRespuesta([["ESTADO", "-1"]])))).getSeed())).toMatchObject({ code: "SEED_FAILED", retryable: true, siiCode: "-1" });
    expect(await err(c(async () => new Response("<foo/>")).getSeed())).toMatchObject({ code: "BAD_RESPONSE", retryable: true });
    const e = await err(c(async () => new Response(soapFault("java.lang.NullPointerException"), { status: 500 })).getSeed());
    expect(e).toMatchObject({ code: "HTTP_ERROR", retryable: true });
  });
});

describe("status mapping table", () => {
  it("decides the disputed codes and maps every family", () => {
    expect(explainSiiStatus("envio", "PRD").outcome).toBe("PENDING");
    for (const c of ["RLV", "RPR"]) {
      expect(explainSiiStatus("envio", c).outcome).toBe("ACCEPTED_WITH_OBJECTIONS");
      expect(explainSiiStatus("document", c).outcome).toBe("ACCEPTED_WITH_OBJECTIONS");
    }
    for (const c of ["RCH", "RSC", "RFR", "RCT", "RPT", "VOF"]) expect(explainSiiStatus("envio", c).outcome).toBe("REJECTED");
    for (const c of ["REC", "SOK", "CRT", "FOK", "PDR"]) expect(explainSiiStatus("envio", c).outcome).toBe("PENDING");
    expect(explainSiiStatus("envio", "-11").outcome).toBe("RETRYABLE_ERROR");
    expect(explainSiiStatus("envio", "001").outcome).toBe("RETRYABLE_ERROR");
    expect(explainSiiStatus("dte", "DOK").outcome).toBe("ACCEPTED");
    expect(explainSiiStatus("dte", "FAU").outcome).toBe("PENDING");
    expect(explainSiiStatus("dte", "FAN").outcome).toBe("REJECTED");
    expect(explainSiiStatus("dte", "ANC").outcome).toBe("ACCEPTED");
    expect(explainSiiStatus("dte", "EMP").outcome).toBe("TERMINAL_ERROR");
    expect(explainSiiStatus("upload", 0).outcome).toBe("PENDING");
    expect(explainSiiStatus("upload", 99).outcome).toBe("PENDING");
    expect(explainSiiStatus("upload", 9).outcome).toBe("RETRYABLE_ERROR");
    expect(explainSiiStatus("upload", 7).outcome).toBe("TERMINAL_ERROR");
    expect(explainSiiStatus("auth", "05").outcome).toBe("TERMINAL_ERROR");
    expect(explainSiiStatus("auth", "08").outcome).toBe("RETRYABLE_ERROR");
    expect(explainSiiStatus("auth", "-1").outcome).toBe("RETRYABLE_ERROR");
    // every entry has both languages
    for (const table of Object.values(SII_STATUS_TEXT)) for (const v of Object.values(table)) expect(v.es.length * v.en.length).toBeGreaterThan(0);
    // unknown codes never finalise a document
    expect(explainSiiStatus("envio", "XYZ")).toMatchObject({ known: false, outcome: "PENDING" });
    expect(explainSiiStatus("envio", "-99")).toMatchObject({ known: false, outcome: "RETRYABLE_ERROR" });
  });
  it("EPR verdicts from the counts", () => {
    const c = (informed: number, accepted: number, rejected: number, objected: number) => [{ type: 33, informed, accepted, rejected, objected }];
    expect(envioOutcome("EPR", c(1, 1, 0, 0))).toBe("ACCEPTED");
    expect(envioOutcome("EPR", c(1, 1, 0, 1))).toBe("ACCEPTED_WITH_OBJECTIONS");
    expect(envioOutcome("EPR", c(1, 0, 1, 0))).toBe("REJECTED");
    expect(envioOutcome("EPR", c(2, 1, 1, 0))).toBe("PARTIAL");
    expect(envioOutcome("EPR", [])).toBe("PENDING");
    expect(envioOutcome("SOK", [])).toBe("PENDING");
    expect(envioOutcome("RFR", [])).toBe("REJECTED");
  });
});

describe("simulator progression rule", () => {
  const t0 = new Date("2026-11-22T06:00:00.000Z");
  const at = (ms: number) => new Date(t0.getTime() + ms);
  const e = (finalStatus: string, hold: { holdPolls?: number; holdUntil?: string | null } = {}) => ({ finalStatus, receivedAt: t0.toISOString(), holdPolls: hold.holdPolls ?? 0, holdUntil: hold.holdUntil ?? null });
  it("advances one state per poll, or per STEP_MS without polls", () => {
    expect([1, 2, 3, 4, 5].map((p) => visibleState(e("EPR"), p, t0))).toEqual(["REC", "SOK", "FOK", "EPR", "EPR"]);
    expect(visibleState(e("EPR"), 1, at(STEP_MS * 3))).toBe("EPR");
    expect(visibleState(e("EPR"), 1, at(STEP_MS))).toBe("SOK");
    // Never polled (an envelope injected into the register): time alone.
    expect([0, STEP_MS, STEP_MS * 3].map((ms) => visibleState(e("EPR"), 0, at(ms)))).toEqual(["REC", "SOK", "EPR"]);
    expect([1, 2, 3].map((p) => visibleState(e("RSC"), p, t0))).toEqual(["REC", "RSC", "RSC"]);
    expect([1, 2, 3].map((p) => visibleState(e("RFR"), p, t0))).toEqual(["REC", "SOK", "RFR"]);
  });
  it("a delay holds REC/SOK for its polls and its time", () => {
    expect([1, 2, 3, 4].map((p) => visibleState(e("EPR", { holdPolls: 3 }), p, at(STEP_MS * 10)))).toEqual(["REC", "SOK", "SOK", "EPR"]);
    const until = at(60_000).toISOString();
    expect(visibleState(e("EPR", { holdUntil: until }), 9, at(59_000))).toBe("SOK");
    expect(visibleState(e("EPR", { holdUntil: until }), 9, at(60_001))).toBe("EPR");
  });
});
