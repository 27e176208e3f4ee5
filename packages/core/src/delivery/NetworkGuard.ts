/**
 * The SSRF guard of outbound webhook requests: only HTTPS URLs, and only to public addresses. A host on the
 * allow-list (tests, private deployments) skips the address check, never the HTTPS rule.
 */

/** Why an address may not be called, or `undefined` when it is a public unicast address. */
export const forbiddenAddress = (ip: string): string | undefined => {
  const v4 = parseIpv4(ip)
  if (v4 !== undefined) return forbiddenV4(v4)
  const v6 = parseIpv6(ip)
  if (v6 === undefined) return `not an IP address: ${ip}`
  return forbiddenV6(v6)
}

const parseIpv4 = (ip: string): ReadonlyArray<number> | undefined => {
  const parts = ip.split(".")
  if (parts.length !== 4) return undefined
  const bytes = parts.map((p) => (/^\d{1,3}$/.test(p) ? Number(p) : NaN))
  return bytes.every((b) => b >= 0 && b <= 255) ? bytes : undefined
}

const forbiddenV4 = ([a, b, c]: ReadonlyArray<number>): string | undefined => {
  if (a === 0) return "an unspecified/this-network address (0.0.0.0/8)"
  if (a === 127) return "a loopback address"
  if (a === 10 || (a === 172 && b! >= 16 && b! <= 31) || (a === 192 && b === 168)) return "a private address"
  if (a === 169 && b === 254) return "a link-local address (cloud metadata lives here)"
  if (a === 100 && b! >= 64 && b! <= 127) return "a carrier-grade NAT address"
  if (a! >= 224 && a! <= 239) return "a multicast address"
  if (a! >= 240) return "a reserved or broadcast address"
  if (a === 192 && b === 0 && (c === 0 || c === 2)) return "a reserved address"
  if (a === 198 && (b === 18 || b === 19)) return "a benchmarking address"
  if ((a === 198 && b === 51 && c === 100) || (a === 203 && b === 0 && c === 113)) return "a documentation address"
  return undefined
}

/** Eight 16-bit groups, or undefined. Accepts `::` compression, an embedded IPv4 tail and a zone index. */
const parseIpv6 = (input: string): ReadonlyArray<number> | undefined => {
  let ip = input.replace(/^\[|\]$/g, "")
  const zone = ip.indexOf("%")
  if (zone !== -1) ip = ip.slice(0, zone)
  if (!ip.includes(":")) return undefined
  let tail: Array<number> = []
  const lastColon = ip.lastIndexOf(":")
  if (ip.slice(lastColon + 1).includes(".")) {
    const v4 = parseIpv4(ip.slice(lastColon + 1))
    if (v4 === undefined) return undefined
    tail = [(v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!]
    ip = ip.slice(0, lastColon + 1)
    if (!ip.endsWith("::")) ip = ip.slice(0, -1)
  }
  const halves = ip.split("::")
  if (halves.length > 2) return undefined
  const groups = (part: string) => (part === "" ? [] : part.split(":"))
  const head = groups(halves[0]!)
  const rest = halves.length === 2 ? groups(halves[1]!) : []
  if ([...head, ...rest].some((g) => !/^[0-9a-fA-F]{1,4}$/.test(g))) return undefined
  const known = head.length + rest.length + tail.length
  if (halves.length === 1 ? known !== 8 : known > 7) return undefined
  const hex = (gs: ReadonlyArray<string>) => gs.map((g) => parseInt(g, 16))
  return [...hex(head), ...Array<number>(8 - known).fill(0), ...hex(rest), ...tail]
}

const forbiddenV6 = (g: ReadonlyArray<number>): string | undefined => {
  const [g0, g1, g2, g3, g4, g5, g6, g7] = g as [number, number, number, number, number, number, number, number]
  const zeroUpTo = (n: number) => g.slice(0, n).every((x) => x === 0)
  if (zeroUpTo(8)) return "an unspecified address (::)"
  if (zeroUpTo(7) && g7 === 1) return "a loopback address (::1)"
  if (zeroUpTo(5) && g5 === 0xffff) return embedded(g6, g7, "an IPv4-mapped address")
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) {
    return embedded(g6, g7, "a NAT64 address")
  }
  if ((g0 & 0xfe00) === 0xfc00) return "a unique-local (private) address"
  if ((g0 & 0xffc0) === 0xfe80) return "a link-local address"
  if ((g0 & 0xffc0) === 0xfec0) return "a site-local address"
  if ((g0 & 0xff00) === 0xff00) return "a multicast address"
  if (g0 === 0x2001 && g1 === 0x0db8) return "a documentation address"
  if (g0 === 0xfd00 && g1 === 0x0ec2) return "a cloud metadata address"
  return undefined
}

const embedded = (hi: number, lo: number, kind: string) => {
  const v4 = [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]
  const reason = forbiddenV4(v4)
  return reason === undefined ? undefined : `${kind} of ${reason}`
}

/** A webhook URL after the static checks (scheme, credentials, host). */
export interface CheckedUrl {
  readonly url: string
  /** Host name or IP, without brackets. */
  readonly host: string
}

/** Why a URL cannot be a webhook, before any name is resolved; or the parsed URL. */
export const checkUrl = (input: string): CheckedUrl | { readonly reason: string } => {
  if (input.length > 2048) return { reason: "the URL is longer than 2048 characters" }
  let url: URL
  try {
    url = new URL(input)
  } catch {
    return { reason: "not a valid absolute URL" }
  }
  if (url.protocol !== "https:") return { reason: "only https URLs are allowed" }
  if (url.username !== "" || url.password !== "") return { reason: "credentials in the URL are not allowed" }
  if (url.hostname === "") return { reason: "the URL has no host" }
  return { url: url.toString(), host: url.hostname.replace(/^\[|\]$/g, "") }
}

/** Whether `host` is on the allow-list (case-insensitive exact match). */
export const allowed = (allowHosts: ReadonlyArray<string>, host: string): boolean =>
  allowHosts.some((h) => h.toLowerCase() === host.toLowerCase())
