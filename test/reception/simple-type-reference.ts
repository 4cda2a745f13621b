/**
 * The simple-type check of documents/dte-schema.ts as it was before its fast paths (one-pass
 * white-space, integer and base64 reads, the length in code points worked out only when needed,
 * compiled patterns on the types): the reference simple-types.node.test.ts holds it equal to.
 */
import type { SimpleType } from "../../src/countries/cl/documents/dte-schema";

const INTEGER = /^[+-]?\d+$/;
const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})(Z|[+-]\d{2}:\d{2})?$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})?$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const NCNAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
const LONG_MIN = -(2n ** 63n);
const LONG_MAX = 2n ** 63n - 1n;
const ULONG_MAX = 2n ** 64n - 1n;

const patterns = new Map<string, RegExp>();
const anchored = (p: string) => {
  let r = patterns.get(p);
  if (!r) patterns.set(p, (r = new RegExp(`^(?:${p})$`, "u")));
  return r;
};

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
function validDate(y: string, m: string, d: string): boolean {
  const month = Number(m);
  const day = Number(d);
  if (month < 1 || month > 12 || day < 1) return false;
  if (month !== 2) return day <= MONTH_DAYS[month - 1]!;
  const leap = (Number(y) % 4 === 0 && Number(y) % 100 !== 0) || Number(y) % 400 === 0;
  return day <= (leap ? 29 : 28);
}

/** Digits of a decimal lexical value: [total significant digits, fraction digits]. */
function digits(v: string): [number, number] {
  let start = v.charCodeAt(0) === 43 || v.charCodeAt(0) === 45 ? 1 : 0;
  while (start < v.length - 1 && v.charCodeAt(start) === 48 && v.charCodeAt(start + 1) !== 46) start++;
  const dot = v.indexOf(".");
  if (dot < 0) return [Math.max(1, v.length - start), 0];
  let end = v.length;
  while (end > dot + 1 && v.charCodeAt(end - 1) === 48) end--;
  const int = dot - start - (v.charCodeAt(start) === 48 ? 1 : 0);
  const frac = end - dot - 1;
  return [Math.max(1, int + frac), frac];
}
/** A numeric enumeration's values as numbers (worked out once per type). */
const numericEnums = new WeakMap<SimpleType, Set<number>>();
function numericValues(t: SimpleType): Set<number> {
  let set = numericEnums.get(t);
  if (!set) numericEnums.set(t, (set = new Set(t.en!.map(Number))));
  return set;
}
const WS = /[\t\n\r ]/;
const SURROGATE = /[\uD800-\uDFFF]/;
export function referenceSimpleProblem(raw: string, t: SimpleType): string | null {
  const isString = t.b === "string";
  const v = isString || !WS.test(raw) ? raw : raw.replace(/[\t\n\r ]+/g, " ").trim();
  let num: number | null = null;
  switch (t.b) {
    case "string":
      break;
    case "positiveInteger":
    case "nonNegativeInteger":
    case "integer":
    case "long":
    case "unsignedLong": {
      if (!INTEGER.test(v)) return `'${v}' is not an integer`;
      num = Number(v);
      if (t.b === "positiveInteger" && num < 1) return `'${v}' is not a positive integer`;
      if ((t.b === "nonNegativeInteger" || t.b === "unsignedLong") && num < 0) return `'${v}' is negative`;
      if (v.length > 15) {
        const n = BigInt(v);
        if (t.b === "long" && (n < LONG_MIN || n > LONG_MAX)) return `'${v}' is out of range`;
        if (t.b === "unsignedLong" && n > ULONG_MAX) return `'${v}' is out of range`;
      }
      break;
    }
    case "decimal":
      if (!DECIMAL.test(v)) return `'${v}' is not a decimal number`;
      num = Number(v);
      break;
    case "date": {
      const m = DATE.exec(v);
      if (!m || !validDate(m[1]!, m[2]!, m[3]!)) return `'${v}' is not a date (YYYY-MM-DD)`;
      break;
    }
    case "dateTime": {
      const m = DATE_TIME.exec(v);
      if (!m || !validDate(m[1]!, m[2]!, m[3]!) || Number(m[4]) > 23 || Number(m[5]) > 59 || Number(m[6]) > 59) return `'${v}' is not a date and time (YYYY-MM-DDTHH:MM:SS)`;
      break;
    }
    case "base64Binary": {
      const b = v.replace(/\s+/g, "");
      if (!BASE64.test(b) || b.length % 4 !== 0) return "not base64";
      break;
    }
    case "ID":
      if (!NCNAME.test(v)) return `'${v}' is not an XML name`;
      break;
    default:
      return `type ${t.b} is not supported`;
  }
  if (t.en) {
    const ok = num === null ? t.en.includes(v) : numericValues(t).has(num);
    if (!ok) return `'${v}' is not one of ${t.en.join(", ")}`;
  }
  if (t.len !== undefined || t.minL !== undefined || t.maxL !== undefined) {
    const length = SURROGATE.test(v) ? [...v].length : v.length;
    if (t.len !== undefined && length !== t.len) return `'${v}' must be ${t.len} characters long`;
    if (t.minL !== undefined && length < t.minL) return `'${v}' is shorter than ${t.minL} characters`;
    if (t.maxL !== undefined && length > t.maxL) return `'${v.slice(0, 40)}…' is longer than ${t.maxL} characters`;
  }
  if (t.pat !== undefined && !anchored(t.pat).test(v)) return `'${v}' does not match ${t.pat}`;
  if (num !== null) {
    const [total, fraction] = digits(v);
    if (t.td !== undefined && total > t.td) return `'${v}' has more than ${t.td} digits`;
    if (t.fd !== undefined && fraction > t.fd) return `'${v}' has more than ${t.fd} decimals`;
    if (t.min !== undefined && num < (t.minN ?? Number(t.min))) return `'${v}' is below ${t.min}`;
    if (t.max !== undefined && num > (t.maxN ?? Number(t.max))) return `'${v}' is above ${t.max}`;
  } else if (t.b === "date" || t.b === "dateTime") {
    if (t.min !== undefined && v < t.min) return `'${v}' is before ${t.min}`;
    if (t.max !== undefined && v.slice(0, t.max.length) > t.max) return `'${v}' is after ${t.max}`;
  }
  return null;
}
