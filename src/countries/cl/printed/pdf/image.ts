/**
 * Logo images as PDF image XObjects, fast:
 * - PNG without alpha (gray, RGB, palette; not interlaced): the IDAT data goes into the PDF as is,
 *   with the PNG predictor declared (/DecodeParms /Predictor 15), so nothing is decoded or re-encoded;
 * - PNG with an 8-bit alpha channel: inflated natively, unfiltered, split into colour + soft mask and
 *   deflated natively;
 * - JPEG: passed through (DCTDecode), only the frame header is read;
 * - anything else (interlaced, 16-bit alpha, tRNS transparency): left to pdf-lib's embedPng.
 * Results are cached per isolate by content (a logo is the same for thousands of documents).
 */
import { deflateSync, inflateSync } from "node:zlib";

export interface ImageStream {
  dict: Record<string, unknown>;
  data: Uint8Array;
}

export interface PreparedImage {
  width: number;
  height: number;
  image: ImageStream;
  smask?: ImageStream;
}

export class ImageFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ImageFormatError";
  }
}

export type ImageKind = "png" | "jpg";

export function sniffImage(bytes: Uint8Array): ImageKind | undefined {
  if (bytes.length > 8 && bytes[0] === 0x89 && bytes[1] === 0x50 && bytes[2] === 0x4e && bytes[3] === 0x47) return "png";
  if (bytes.length > 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return "jpg";
  return undefined;
}

function u32(b: Uint8Array, o: number): number {
  return ((b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!) >>> 0;
}

interface PngInfo {
  width: number;
  height: number;
  depth: number;
  colorType: number;
  interlace: number;
  palette?: Uint8Array;
  hasTrns: boolean;
  idat: Uint8Array;
}

function readPng(bytes: Uint8Array): PngInfo {
  let o = 8;
  let info: Omit<PngInfo, "idat" | "hasTrns" | "palette"> | undefined;
  let palette: Uint8Array | undefined;
  let hasTrns = false;
  const idats: Uint8Array[] = [];
  while (o + 8 <= bytes.length) {
    const len = u32(bytes, o);
    const type = String.fromCharCode(bytes[o + 4]!, bytes[o + 5]!, bytes[o + 6]!, bytes[o + 7]!);
    const start = o + 8;
    if (start + len > bytes.length) throw new ImageFormatError("PNG chunk runs past the end of the file");
    const data = bytes.subarray(start, start + len);
    if (type === "IHDR") {
      if (len < 13) throw new ImageFormatError("PNG IHDR too short");
      info = { width: u32(data, 0), height: u32(data, 4), depth: data[8]!, colorType: data[9]!, interlace: data[12]! };
    } else if (type === "PLTE") palette = data;
    else if (type === "tRNS") hasTrns = true;
    else if (type === "IDAT") idats.push(data);
    else if (type === "IEND") break;
    o = start + len + 4;
  }
  if (!info || info.width === 0 || info.height === 0) throw new ImageFormatError("PNG without a valid IHDR");
  if (idats.length === 0) throw new ImageFormatError("PNG without image data");
  let idat: Uint8Array;
  if (idats.length === 1) idat = idats[0]!;
  else {
    idat = new Uint8Array(idats.reduce((a, d) => a + d.length, 0));
    let p = 0;
    for (const d of idats) {
      idat.set(d, p);
      p += d.length;
    }
  }
  return { ...info, palette, hasTrns, idat };
}

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/** Reverses the PNG row filters in place; returns the unfiltered pixel rows without filter bytes. */
function unfilter(raw: Uint8Array, width: number, height: number, bpp: number): Uint8Array {
  const stride = width * bpp;
  if (raw.length < height * (stride + 1)) throw new ImageFormatError("PNG image data is truncated");
  const out = new Uint8Array(height * stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    const src = y * (stride + 1) + 1;
    const dst = y * stride;
    const prev = dst - stride;
    for (let x = 0; x < stride; x++) {
      const v = raw[src + x]!;
      const a = x >= bpp ? out[dst + x - bpp]! : 0;
      const b = y > 0 ? out[prev + x]! : 0;
      const c = x >= bpp && y > 0 ? out[prev + x - bpp]! : 0;
      let r: number;
      switch (filter) {
        case 0: r = v; break;
        case 1: r = v + a; break;
        case 2: r = v + b; break;
        case 3: r = v + ((a + b) >> 1); break;
        case 4: r = v + paeth(a, b, c); break;
        default: throw new ImageFormatError(`PNG row filter ${filter} is invalid`);
      }
      out[dst + x] = r & 0xff;
    }
  }
  return out;
}

/** Prepares a PNG, or returns undefined when it needs the generic (pdf-lib) path. */
function preparePng(bytes: Uint8Array): PreparedImage | undefined {
  const png = readPng(bytes);
  const { width, height, depth, colorType } = png;
  if (png.interlace !== 0 || png.hasTrns) return undefined;
  const base = { Type: "XObject", Subtype: "Image", Width: width, Height: height };
  if (colorType === 0 || colorType === 2 || colorType === 3) {
    const colors = colorType === 2 ? 3 : 1;
    let colorSpace: unknown = colorType === 2 ? "DeviceRGB" : "DeviceGray";
    if (colorType === 3) {
      if (!png.palette || png.palette.length % 3 !== 0) throw new ImageFormatError("Palette PNG without a valid PLTE");
      colorSpace = ["Indexed", "DeviceRGB", png.palette.length / 3 - 1, { hex: bytesToHex(png.palette) }];
    }
    return {
      width,
      height,
      image: {
        dict: {
          ...base,
          ColorSpace: colorSpace,
          BitsPerComponent: depth,
          Filter: "FlateDecode",
          DecodeParms: { Predictor: 15, Colors: colors, BitsPerComponent: depth, Columns: width },
        },
        data: png.idat,
      },
    };
  }
  if ((colorType === 4 || colorType === 6) && depth === 8) {
    const channels = colorType === 6 ? 4 : 2;
    let raw: Uint8Array;
    try {
      raw = new Uint8Array(inflateSync(png.idat));
    } catch (e) {
      throw new ImageFormatError(`PNG image data does not inflate: ${(e as Error).message}`);
    }
    const px = unfilter(raw, width, height, channels);
    const colors = channels - 1;
    const color = new Uint8Array(width * height * colors);
    const alpha = new Uint8Array(width * height);
    for (let i = 0, c = 0; i < width * height; i++) {
      const o = i * channels;
      for (let k = 0; k < colors; k++) color[c++] = px[o + k]!;
      alpha[i] = px[o + colors]!;
    }
    const cs = colors === 3 ? "DeviceRGB" : "DeviceGray";
    return {
      width,
      height,
      image: { dict: { ...base, ColorSpace: cs, BitsPerComponent: 8, Filter: "FlateDecode" }, data: deflateSync(color, { level: 6 }) },
      smask: { dict: { ...base, ColorSpace: "DeviceGray", BitsPerComponent: 8, Filter: "FlateDecode" }, data: deflateSync(alpha, { level: 6 }) },
    };
  }
  return undefined;
}

function bytesToHex(b: Uint8Array): string {
  let s = "";
  for (let i = 0; i < b.length; i++) s += b[i]!.toString(16).padStart(2, "0");
  return s;
}

function prepareJpeg(bytes: Uint8Array): PreparedImage {
  let o = 2;
  while (o + 4 <= bytes.length) {
    if (bytes[o] !== 0xff) throw new ImageFormatError("JPEG marker expected");
    const marker = bytes[o + 1]!;
    if (marker === 0xff) {
      o++;
      continue;
    }
    const len = (bytes[o + 2]! << 8) | bytes[o + 3]!;
    // SOF0..SOF15 except DHT (C4), JPG (C8), DAC (CC)
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      if (o + 9 >= bytes.length) break;
      const depth = bytes[o + 4]!;
      const height = (bytes[o + 5]! << 8) | bytes[o + 6]!;
      const width = (bytes[o + 7]! << 8) | bytes[o + 8]!;
      const components = bytes[o + 9]!;
      if (!width || !height) throw new ImageFormatError("JPEG with zero size");
      const cs = components === 1 ? "DeviceGray" : components === 3 ? "DeviceRGB" : components === 4 ? "DeviceCMYK" : undefined;
      if (!cs) throw new ImageFormatError(`JPEG with ${components} components is not supported`);
      const dict: Record<string, unknown> = { Type: "XObject", Subtype: "Image", Width: width, Height: height, ColorSpace: cs, BitsPerComponent: depth, Filter: "DCTDecode" };
      // Adobe CMYK JPEGs are stored inverted.
      if (components === 4) dict.Decode = [1, 0, 1, 0, 1, 0, 1, 0];
      return { width, height, image: { dict, data: bytes } };
    }
    o += 2 + len;
  }
  throw new ImageFormatError("JPEG without a frame header");
}

/** Largest logo side accepted, in pixels (a logo prints at most 120 x 66 points). */
export const MAX_LOGO_SIDE = 4096;

export interface ImageCheck {
  kind: ImageKind;
  width: number;
  height: number;
}

const PNG_CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };

/**
 * Parses a logo completely and bounds it before anything decodes it: dimensions at most
 * MAX_LOGO_SIDE, a PNG's colour type and depth valid, its image data inflating (with a bounded
 * output, so a decompression bomb stops early) to at least the rows its header announces; a JPEG
 * with a frame header. Throws ImageFormatError. Used at upload and before every render.
 */
export function checkImage(bytes: Uint8Array): ImageCheck {
  const kind = sniffImage(bytes);
  if (!kind) throw new ImageFormatError("The image must be a PNG or JPEG");
  const { width, height } = kind === "png" ? readPng(bytes) : prepareJpeg(bytes);
  if (width > MAX_LOGO_SIDE || height > MAX_LOGO_SIDE) {
    throw new ImageFormatError(`The image is ${width} x ${height} pixels; at most ${MAX_LOGO_SIDE} x ${MAX_LOGO_SIDE}`);
  }
  if (kind === "png") checkPngData(readPng(bytes));
  return { kind, width, height };
}

function checkPngData(png: PngInfo): void {
  const channels = PNG_CHANNELS[png.colorType];
  if (!channels || ![1, 2, 4, 8, 16].includes(png.depth)) throw new ImageFormatError(`PNG colour type ${png.colorType} with depth ${png.depth} is invalid`);
  if (png.colorType === 3 && (!png.palette || png.palette.length % 3 !== 0)) throw new ImageFormatError("Palette PNG without a valid PLTE");
  const rowBytes = Math.ceil((png.width * channels * png.depth) / 8);
  const expected = png.height * (rowBytes + 1);
  let raw: Uint8Array;
  try {
    // Interlaced images carry a few more filter bytes; twice the plain size bounds both.
    raw = inflateSync(png.idat, { maxOutputLength: expected * 2 + 1024 });
  } catch (e) {
    throw new ImageFormatError(`PNG image data does not inflate within its announced size: ${(e as Error).message}`);
  }
  if (png.interlace === 0 && raw.length < expected) throw new ImageFormatError("PNG image data is truncated");
}

const cache: { key: Uint8Array; value: PreparedImage }[] = [];
const CACHE_SIZE = 8;

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * The XObject streams for a logo, or undefined when the generic path (pdf-lib embedPng) must be used.
 * Throws ImageFormatError for broken files.
 */
export function prepareImage(bytes: Uint8Array): PreparedImage | undefined {
  for (let i = 0; i < cache.length; i++) {
    if (sameBytes(cache[i]!.key, bytes)) return cache[i]!.value;
  }
  const kind = sniffImage(bytes);
  if (!kind) throw new ImageFormatError("The image must be a PNG or JPEG");
  const copy = bytes.slice(); // the cached streams must not change if the caller reuses its buffer
  const value = kind === "png" ? preparePng(copy) : prepareJpeg(copy);
  if (value) {
    cache.unshift({ key: copy, value });
    if (cache.length > CACHE_SIZE) cache.pop();
  }
  return value;
}
