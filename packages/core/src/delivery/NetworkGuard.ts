/**
 * The SSRF guard of outbound webhook requests: only HTTPS URLs, and only to public addresses. A host on the
 * allow-list (tests, private deployments) skips the address check, never the HTTPS rule. For development on one
 * machine (`loopbackHttp`, which the server grants only when it listens on loopback itself), plain HTTP is accepted
 * to a loopback address (127.0.0.0/8, ::1, localhost) and to nothing else.
 */
import ipaddr from "ipaddr.js"

/**
 * Why an address may not be called, or `undefined` when it is a public unicast address. Parsing and the special
 * ranges are ipaddr.js's (IANA's registries); the policy is an allow-list: only plain unicast passes, and an IPv6
 * form that carries an IPv4 address (mapped, IPv4-compatible, NAT64, SIIT, 6to4, Teredo) passes only when every
 * IPv4 address it carries would.
 */
export const forbiddenAddress = (input: string): string | undefined => {
  let ip = input.replace(/^\[|\]$/g, "")
  const zone = ip.indexOf("%")
  if (zone !== -1) ip = ip.slice(0, zone)
  if (ipaddr.IPv4.isValidFourPartDecimal(ip)) return forbiddenV4(ipaddr.IPv4.parse(ip))
  if (!ipaddr.IPv6.isValid(ip)) return `not an IP address: ${input}`
  return forbiddenV6(ipaddr.IPv6.parse(ip))
}

const v4Reasons: Record<string, string> = {
  unspecified: "an unspecified/this-network address (0.0.0.0/8)",
  broadcast: "a reserved or broadcast address",
  multicast: "a multicast address",
  linkLocal: "a link-local address (cloud metadata lives here)",
  loopback: "a loopback address",
  carrierGradeNat: "a carrier-grade NAT address",
  private: "a private address"
}

const forbiddenV4 = (ip: ipaddr.IPv4): string | undefined => {
  const range = ip.range()
  if (range === "unicast") return undefined
  const [a, b] = ip.octets
  if (a === 198 && (b === 18 || b === 19)) return "a benchmarking address"
  return v4Reasons[range] ?? `a reserved address (${range})`
}

const v6Reasons: Record<string, string> = {
  unspecified: "an unspecified address (::)",
  loopback: "a loopback address (::1)",
  linkLocal: "a link-local address",
  deprecatedSiteLocal: "a site-local address",
  multicast: "a multicast address",
  uniqueLocal: "a unique-local (private) address",
  reserved: "a documentation or reserved address"
}

/** IPv4 from two 16-bit groups. */
const v4Of = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff])

/** The IPv4 addresses a transition form carries, with the form's name; undefined for other addresses. */
const carried = (ip: ipaddr.IPv6): { readonly kind: string; readonly v4: ReadonlyArray<ipaddr.IPv4> } | undefined => {
  const g = ip.parts
  switch (ip.range()) {
    case "ipv4Mapped":
      return { kind: "an IPv4-mapped address", v4: [v4Of(g[6]!, g[7]!)] }
    case "rfc6145":
      return { kind: "an IPv4-translated (SIIT) address", v4: [v4Of(g[6]!, g[7]!)] }
    case "rfc6052":
      return { kind: "a NAT64 address", v4: [v4Of(g[6]!, g[7]!)] }
    case "6to4":
      return { kind: "a 6to4 address", v4: [v4Of(g[1]!, g[2]!)] }
    case "teredo":
      // The Teredo server, and the client's address stored inverted in the last 32 bits.
      return { kind: "a Teredo address", v4: [v4Of(g[2]!, g[3]!), v4Of(~g[6]! & 0xffff, ~g[7]! & 0xffff)] }
    default:
      // IPv4-compatible (::a.b.c.d, deprecated but still parsed by stacks); `::` and `::1` have their own ranges.
      return g.slice(0, 6).every((x) => x === 0) && ip.range() === "unicast"
        ? { kind: "an IPv4-compatible address", v4: [v4Of(g[6]!, g[7]!)] }
        : undefined
  }
}

const forbiddenV6 = (ip: ipaddr.IPv6): string | undefined => {
  const g = ip.parts
  if (g[0] === 0xfd00 && g[1] === 0x0ec2) return "a cloud metadata address (unique-local)"
  const transition = carried(ip)
  if (transition !== undefined) {
    for (const v4 of transition.v4) {
      const reason = forbiddenV4(v4)
      if (reason !== undefined) return `${transition.kind} of ${reason}`
    }
    return undefined
  }
  const range = ip.range()
  if (range === "unicast") return undefined
  return v6Reasons[range] ?? `a special-purpose address (${range})`
}

/** A webhook URL after the static checks (scheme, credentials, host). */
export interface CheckedUrl {
  readonly url: string
  /** Host name or IP, without brackets. */
  readonly host: string
}

/** Whether `host` (no brackets) is a loopback address or `localhost`. */
export const isLoopback = (host: string): boolean => {
  if (host.toLowerCase() === "localhost") return true
  if (ipaddr.IPv4.isValidFourPartDecimal(host)) return ipaddr.IPv4.parse(host).range() === "loopback"
  return ipaddr.IPv6.isValid(host) && ipaddr.IPv6.parse(host).range() === "loopback"
}

/**
 * Why a URL cannot be a webhook, before any name is resolved; or the parsed URL (`plain` when it is the plain HTTP
 * to loopback that `loopbackHttp` accepts).
 */
export const checkUrl = (
  input: string,
  loopbackHttp = false
): (CheckedUrl & { readonly plain: boolean }) | { readonly reason: string } => {
  if (input.length > 2048) return { reason: "the URL is longer than 2048 characters" }
  let url: URL
  try {
    url = new URL(input)
  } catch {
    return { reason: "not a valid absolute URL" }
  }
  const host = url.hostname.replace(/^\[|\]$/g, "")
  const plain = url.protocol === "http:" && loopbackHttp && isLoopback(host)
  if (url.protocol !== "https:" && !plain)
    return {
      reason: loopbackHttp
        ? "only https URLs are allowed, and plain http to loopback (127.0.0.1, ::1, localhost)"
        : "only https URLs are allowed (for a receiver on this machine while developing, start the server on loopback with VIGIL_WEBHOOK_LOOPBACK_HTTP=1)"
    }
  if (url.username !== "" || url.password !== "") return { reason: "credentials in the URL are not allowed" }
  if (url.hostname === "") return { reason: "the URL has no host" }
  return { url: url.toString(), host, plain }
}

/** Whether `host` is on the allow-list (case-insensitive exact match). */
export const allowed = (allowHosts: ReadonlyArray<string>, host: string): boolean =>
  allowHosts.some((h) => h.toLowerCase() === host.toLowerCase())
