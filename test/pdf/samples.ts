/**
 * Sample printable documents for tests and the benchmark. All data is fictitious test material: the
 * RUTs are valid check-digit-wise, the CAF inside the TED is random (not a real SII authorisation).
 */
import type { DteTypeCode, PrintableDocument, PrintableLine } from "../../src/countries/cl/printed/pdf/model";

function pseudoRandom(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
function fakeB64(rnd: () => number, len: number): string {
  let s = "";
  for (let i = 0; i < len; i++) s += B64[Math.floor(rnd() * 64)];
  return s;
}

function xmlEscape(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** A flattened TED shaped like a real one (DD with a CAF, FRMT), about 700-750 bytes. */
export function sampleTed(d: { type: number; folio: number; issuerRut: string; recipientRut: string; recipientName: string; total: string; firstItem: string; date: string }, seed = 1): string {
  const rnd = pseudoRandom(seed + d.folio * 31 + d.type);
  const caf =
    `<CAF version="1.0"><DA><RE>${d.issuerRut}</RE><RS>EMPRESA DE PRUEBA</RS><TD>${d.type}</TD><RNG><D>1</D><H>1000</H></RNG>` +
    `<FA>2026-01-15</FA><RSAPK><M>${fakeB64(rnd, 86)}==</M><E>Aw==</E></RSAPK><IDK>100</IDK></DA>` +
    `<FRMA algoritmo="SHA1withRSA">${fakeB64(rnd, 86)}==</FRMA></CAF>`;
  return (
    `<TED version="1.0"><DD><RE>${d.issuerRut}</RE><TD>${d.type}</TD><F>${d.folio}</F><FE>${d.date}</FE>` +
    `<RR>${d.recipientRut}</RR><RSR>${xmlEscape(d.recipientName.slice(0, 40))}</RSR><MNT>${d.total}</MNT>` +
    `<IT1>${xmlEscape(d.firstItem.slice(0, 40))}</IT1>${caf}<TSTED>${d.date}T10:15:30</TSTED></DD>` +
    `<FRMT algoritmo="SHA1withRSA">${fakeB64(rnd, 86)}==</FRMT></TED>`
  );
}

const ITEMS = [
  "Servicio de consultoría en diseño ñandú",
  "Cable eléctrico 2,5 mm² (rollo 100 m)",
  "Café de grano orgánico 1 kg",
  "Mantención preventiva equipo N° 4",
  "Licencia anual software \"Pingüino\" & soporte <24x7>",
  "Transporte Santiago - Viña del Mar",
];

export function sampleDocument(type: DteTypeCode, opts: { lines?: number; folio?: number; logo?: Uint8Array; exempt?: boolean } = {}): PrintableDocument {
  const rnd = pseudoRandom(type * 7 + (opts.lines ?? 3));
  const nLines = opts.lines ?? 3;
  const exemptDoc = type === 34 || type === 41 || type === 110 || type === 111 || type === 112 || opts.exempt === true;
  const boleta = type === 39 || type === 41;
  const lines: PrintableLine[] = [];
  let net = 0;
  for (let i = 0; i < nLines; i++) {
    const qty = i % 4 === 1 ? "2.5" : String(1 + Math.floor(rnd() * 12));
    const price = 1000 + Math.floor(rnd() * 90000);
    const gross = i % 4 === 1 ? Math.round(2.5 * price) : Number(qty) * price;
    const discount = i % 5 === 2 ? Math.round(gross * 0.1) : 0;
    const amount = gross - discount;
    net += amount;
    lines.push({
      code: i % 3 === 0 ? `SKU-${1000 + i}` : undefined,
      description: `${ITEMS[i % ITEMS.length]}${nLines > 6 ? ` (${i + 1})` : ""}`,
      detail: i === 0 ? "Incluye instalación, configuración y capacitación del personal en terreno." : undefined,
      quantity: qty,
      unit: i % 2 === 0 ? "UN" : "KG",
      unitPrice: price,
      discount: discount || undefined,
      discountPercent: discount ? "10" : undefined,
      amount,
      exempt: exemptDoc,
    });
  }
  const folio = opts.folio ?? 123;
  const iva = exemptDoc ? 0 : Math.round(net * 0.19);
  const total = net + iva;
  const issuerRut = "76086428-5";
  const recipientRut = boleta ? "66666666-6" : "77777777-7";
  const recipientName = boleta ? "Cliente anónimo" : "Comercial Ñuñoa & Compañía Limitada";
  const doc: PrintableDocument = {
    type,
    folio,
    issueDate: "2026-11-20",
    dueDate: boleta ? undefined : "2026-12-20",
    paymentMethod: boleta ? undefined : 2,
    transferType: type === 52 ? 1 : undefined,
    issuer: {
      rut: issuerRut,
      name: "Servicios Informáticos Pehuén SpA",
      activity: "Desarrollo de software, asesorías informáticas y venta de equipos computacionales",
      address: "Av. Apoquindo 4501, oficina 1902",
      comuna: "Las Condes",
      city: "Santiago",
      siiOffice: "SANTIAGO ORIENTE", // from the communes catalog in the app (src/countries/cl/catalogs/communes.ts)
      email: "facturacion@pehuen.example",
      phone: "+56 2 2345 6789",
    },
    recipient: {
      rut: recipientRut,
      name: recipientName,
      activity: boleta ? undefined : "Comercio al por menor de artículos de ferretería",
      address: boleta ? undefined : "Irarrázaval 2401, local 3",
      comuna: boleta ? undefined : "Ñuñoa",
      city: boleta ? undefined : "Santiago",
    },
    lines,
    references:
      type === 61 || type === 56
        ? [
            { typeCode: 33, folio: 98, date: "2026-11-02", reasonCode: 1, reason: "Anula factura por devolución de mercadería" },
            { typeCode: 801, folio: "OC-4521", date: "2026-10-28" },
          ]
        : type === 33
          ? [{ typeCode: 801, folio: "4500012345", date: "2026-11-15" }]
          : type === 112
            ? [{ typeCode: 110, folio: 55, date: "2026-11-01", reasonCode: 1, reason: "Anula factura de exportación" }]
            : undefined,
    totals: exemptDoc ? { exempt: net, total } : { net, ivaRate: "19", iva, total },
    resolution: { number: 80, date: "2014-08-22" },
    ted: "",
    notes: type === 52 ? "Traslado de mercadería vendida. Entregar en bodega 2, horario 9:00 a 17:00." : undefined,
    logo: opts.logo,
  };
  doc.ted = sampleTed({ type, folio, issuerRut, recipientRut, recipientName, total: String(total), firstItem: lines[0]?.description ?? "", date: doc.issueDate });
  return doc;
}

/** Pixels of the sample logo: red/white stripes, alpha fading left to right (when requested). */
export function samplePixels(w: number, h: number, alpha: boolean): Uint8Array {
  const ch = alpha ? 4 : 3;
  const px = new Uint8Array(w * h * ch);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const o = (y * w + x) * ch;
      const white = Math.floor(x / 4) % 2 === 1;
      px[o] = white ? 255 : 200;
      px[o + 1] = white ? 255 : (20 + y * 3) & 255;
      px[o + 2] = white ? 255 : 20;
      if (alpha) px[o + 3] = Math.round((255 * x) / (w - 1));
    }
  }
  return px;
}

/**
 * A small valid PNG built by hand (signature, IHDR, one stored-deflate IDAT, IEND), 8-bit RGB or RGBA.
 * Each row uses a different PNG filter (row y: filter y mod 5) so decoders must undo all five.
 */
export function samplePng(opts: { width?: number; height?: number; alpha?: boolean } = {}): Uint8Array {
  const w = opts.width ?? 24;
  const h = opts.height ?? 12;
  const alpha = opts.alpha ?? false;
  const bpp = alpha ? 4 : 3;
  const px = samplePixels(w, h, alpha);
  const stride = w * bpp;
  const raw: number[] = [];
  const at = (x: number, y: number) => (x < 0 || y < 0 ? 0 : px[y * stride + x]!);
  for (let y = 0; y < h; y++) {
    const filter = y % 5;
    raw.push(filter);
    for (let x = 0; x < stride; x++) {
      const v = at(x, y);
      const a = at(x - bpp, y);
      const b = at(x, y - 1);
      const c = at(x - bpp, y - 1);
      const p = a + b - c;
      const pred = [0, a, b, (a + b) >> 1, Math.abs(p - a) <= Math.abs(p - b) && Math.abs(p - a) <= Math.abs(p - c) ? a : Math.abs(p - b) <= Math.abs(p - c) ? b : c][filter]!;
      raw.push((v - pred) & 255);
    }
  }
  const crcTable = Array.from({ length: 256 }, (_, k) => {
    let c = k;
    for (let i = 0; i < 8; i++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (b: number[]) => {
    let c = 0xffffffff;
    for (const x of b) c = crcTable[(c ^ x) & 0xff]! ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const u32 = (v: number) => [(v >>> 24) & 255, (v >>> 16) & 255, (v >>> 8) & 255, v & 255];
  const chunk = (type: string, data: number[]) => {
    const td = [...type].map((c) => c.charCodeAt(0)).concat(data);
    return [...u32(data.length), ...td, ...u32(crc(td))];
  };
  let a = 1;
  let b = 0;
  for (const x of raw) {
    a = (a + x) % 65521;
    b = (b + a) % 65521;
  }
  // zlib header, then stored deflate blocks of at most 65535 bytes
  const zlib: number[] = [0x78, 0x01];
  for (let i = 0; i < raw.length || i === 0; i += 65535) {
    const block = raw.slice(i, i + 65535);
    const last = i + 65535 >= raw.length ? 1 : 0;
    zlib.push(last, block.length & 255, block.length >> 8, ~block.length & 255, (~block.length >> 8) & 255, ...block);
  }
  zlib.push(...u32(((b << 16) | a) >>> 0));
  return new Uint8Array([
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a,
    ...chunk("IHDR", [...u32(w), ...u32(h), 8, alpha ? 6 : 2, 0, 0, 0]),
    ...chunk("IDAT", zlib),
    ...chunk("IEND", []),
  ]);
}

/** A JPEG frame header only (SOI, SOF0 3 components, EOI): enough to test the pass-through, not to view. */
export function sampleJpegHeader(width: number, height: number): Uint8Array {
  return new Uint8Array([0xff, 0xd8, 0xff, 0xc0, 0x00, 0x11, 0x08, height >> 8, height & 255, width >> 8, width & 255, 0x03, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1, 0xff, 0xd9]);
}
