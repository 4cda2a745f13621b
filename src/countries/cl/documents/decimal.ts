/**
 * Exact decimal arithmetic for money: values are BigInt scaled by 10^scale. No binary floating point
 * is ever used for amounts. JSON numbers are converted through their shortest round-trip decimal
 * string (String(n)), which is exactly what the client wrote for any value with ≤ 15 significant digits.
 */
import { EngineError } from "../errors";

const DECIMAL = /^(-?)(\d+)(?:\.(\d+))?$/;

export function pow10(n: number): bigint {
  return 10n ** BigInt(n);
}

/**
 * Parses a JSON number or decimal string into an integer scaled by 10^scale. Rejects exponents that
 * do not reduce to a plain decimal, more than `scale` decimals, and negatives unless allowed.
 */
export function parseScaled(value: unknown, scale: number, field: string, opts: { allowNegative?: boolean } = {}): bigint {
  let s: string;
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new EngineError("INVALID_NUMBER", `${field} must be a finite number`, { field });
    s = numberToPlain(value);
  } else if (typeof value === "string") {
    s = value.trim();
  } else if (typeof value === "bigint") {
    s = value.toString();
  } else {
    throw new EngineError("INVALID_NUMBER", `${field} must be a number`, { field });
  }
  const m = DECIMAL.exec(s);
  if (!m) throw new EngineError("INVALID_NUMBER", `${field} must be a plain decimal number, got "${s}"`, { field });
  const neg = m[1] === "-";
  const frac = (m[3] ?? "").replace(/0+$/, "");
  if (frac.length > scale) {
    throw new EngineError("INVALID_NUMBER", `${field} allows at most ${scale} decimal places, got "${s}"`, { field });
  }
  const v = BigInt(m[2]! + frac.padEnd(scale, "0"));
  if (neg && v !== 0n && !opts.allowNegative) throw new EngineError("INVALID_NUMBER", `${field} must not be negative`, { field });
  return neg ? -v : v;
}

/** Converts a JS number to a plain (non-exponent) decimal string, exactly as its shortest repr. */
export function numberToPlain(n: number): string {
  const s = String(n);
  if (!/e/i.test(s)) return s;
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/i.exec(s);
  if (!m) return s;
  const digits = m[2]! + (m[3] ?? "");
  const exp = Number(m[4]);
  const point = 1 + exp; // position of the decimal point in `digits`
  let out: string;
  if (point <= 0) out = "0." + "0".repeat(-point) + digits;
  else if (point >= digits.length) out = digits + "0".repeat(point - digits.length);
  else out = digits.slice(0, point) + "." + digits.slice(point);
  return m[1] + out;
}

/** n / d rounded half away from zero (PHP round(), the rule the SII recomputes with). d > 0. */
export function divRound(n: bigint, d: bigint): bigint {
  if (d <= 0n) throw new RangeError("divRound: divisor must be positive");
  const neg = n < 0n;
  const a = neg ? -n : n;
  const q = a / d;
  const r = a % d;
  const rounded = r * 2n >= d ? q + 1n : q;
  return neg ? -rounded : rounded;
}

/** Re-scales a value from one scale to another, rounding half away from zero when reducing. */
export function rescale(v: bigint, from: number, to: number): bigint {
  if (to >= from) return v * pow10(to - from);
  return divRound(v, pow10(from - to));
}

/** Formats a scaled integer as a decimal string without insignificant trailing zeros ("12.5", "100"). */
export function formatScaled(v: bigint, scale: number): string {
  const neg = v < 0n;
  let s = (neg ? -v : v).toString();
  if (scale > 0) {
    s = s.padStart(scale + 1, "0");
    const int = s.slice(0, s.length - scale);
    const frac = s.slice(s.length - scale).replace(/0+$/, "");
    s = frac ? `${int}.${frac}` : int;
  }
  return (neg ? "-" : "") + s;
}
