/**
 * Where webhooks may be sent (SSRF guard). In production: https only, no credentials in the URL, and
 * no host that is literally (or by a reserved name) loopback, private, link-local, carrier-grade NAT,
 * unique-local, multicast or a cloud metadata address. A Worker cannot resolve a name before `fetch`
 * (no DNS API), so a public name that resolves to a private address is not caught here; Cloudflare's
 * egress from Workers does not reach private networks, which closes that path in production.
 * Redirects are never followed (each attempt uses `redirect: "manual"`). In development and tests,
 * http is allowed to loopback hosts (127.0.0.1, localhost, [::1]) so a local receiver works.
 */
const BLOCKED_NAMES = [/^localhost$/, /\.localhost$/, /\.local$/, /\.internal$/, /^metadata(\.|$)/, /^instance-data(\.|$)/];
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

function ipv4(host: string): number[] | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  if (!m) return null;
  const parts = m.slice(1).map(Number);
  return parts.every((p) => p <= 255) ? parts : null;
}

function privateIpv4([a, b]: number[]): boolean {
  return a === 0 || a === 10 || a === 127 || (a === 169 && b === 254) || (a === 172 && b! >= 16 && b! <= 31) || (a === 192 && b === 168) || (a === 100 && b! >= 64 && b! <= 127) || a! >= 224;
}

function privateIpv6(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  if (h === "::" || h === "::1") return true;
  if (/^(fc|fd)/.test(h) || /^fe[89ab]/.test(h) || /^ff/.test(h)) return true;
  // IPv4-mapped (::ffff:a.b.c.d, which URL normalises to ::ffff:XXXX:XXXX) and NAT64 forms.
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(h);
  if (mapped) {
    const hi = parseInt(mapped[1]!, 16);
    const lo = parseInt(mapped[2]!, 16);
    return privateIpv4([hi >> 8, hi & 255, lo >> 8, lo & 255]);
  }
  return h.startsWith("::ffff:") || h.startsWith("64:ff9b:");
}

/** Why a URL may not receive webhooks, or null when it may. */
export function webhookUrlProblem(raw: string, production: boolean): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "not an absolute URL";
  }
  if (url.username || url.password) return "credentials in the URL are not allowed (use the signature to authenticate us)";
  if (url.hash) return "a fragment (#…) is not allowed";
  const host = url.hostname.toLowerCase();
  if (!production && url.protocol === "http:" && LOOPBACK_HOSTS.has(host)) return null;
  if (url.protocol !== "https:") return production ? "only https URLs are allowed" : "only https URLs are allowed (http only to 127.0.0.1, localhost or [::1] outside production)";
  if (!production && LOOPBACK_HOSTS.has(host)) return null;
  const v4 = ipv4(host);
  if (v4 && privateIpv4(v4)) return "the host is a private, loopback, link-local or reserved address";
  if (host.startsWith("[") && privateIpv6(host)) return "the host is a private, loopback, link-local or reserved IPv6 address";
  if (BLOCKED_NAMES.some((re) => re.test(host)) || host === "169.254.169.254") return "the host name is reserved for local or metadata services";
  if (!v4 && !host.startsWith("[") && !host.includes(".")) return "the host must be a fully qualified domain name";
  return null;
}
