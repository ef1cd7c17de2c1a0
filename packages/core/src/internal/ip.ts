/**
 * IP address text: strict parsing (RFC 4291 §2.2 for IPv6, dotted-quad decimal for IPv4),
 * prefix masking and the RFC 5952 canonical form, behind `clientNetwork`. Written here rather
 * than taken from a dependency because the core package has none and the job is small: it only has to read
 * what a socket or a trusted proxy reports, and it is checked against the WHATWG URL parser
 * with fast-check.
 *
 * @module
 */

/** An address: 4 bytes (IPv4) or 8 sixteen-bit groups (IPv6). */
export type IpAddress =
  | { readonly version: 4; readonly bytes: readonly number[] }
  | { readonly version: 6; readonly groups: readonly number[] }

/** Text longer than this is not an address (the longest IPv6 text with a zone is far shorter). */
export const MAX_IP_TEXT_LENGTH = 100

const DECIMAL_OCTET = /^(?:0|[1-9][0-9]{0,2})$/
const HEX_GROUP = /^[0-9A-Fa-f]{1,4}$/

/**
 * Dotted-quad IPv4: four decimal octets 0-255 without leading zeros (a leading zero means
 * octal to `inet_aton`, so such text is refused rather than guessed).
 */
export function parseIpv4(text: string): number[] | undefined {
  const parts = text.split('.')
  if (parts.length !== 4) return undefined
  const bytes: number[] = []
  for (const part of parts) {
    if (!DECIMAL_OCTET.test(part)) return undefined
    const value = Number(part)
    if (value > 255) return undefined
    bytes.push(value)
  }
  return bytes
}

/**
 * IPv6 text (RFC 4291 §2.2): eight groups of 1-4 hex digits, one `::` for a run of zero
 * groups, optionally a dotted-quad IPv4 in the last 32 bits.
 */
export function parseIpv6(text: string): number[] | undefined {
  const halves = text.split('::')
  if (halves.length > 2) return undefined
  const parseGroups = (part: string, allowIpv4: boolean): number[] | undefined => {
    if (part === '') return []
    const pieces = part.split(':')
    const groups: number[] = []
    for (const [index, piece] of pieces.entries()) {
      if (allowIpv4 && index === pieces.length - 1 && piece.includes('.')) {
        const bytes = parseIpv4(piece)
        if (bytes === undefined) return undefined
        groups.push((bytes[0]! << 8) | bytes[1]!, (bytes[2]! << 8) | bytes[3]!)
      } else if (HEX_GROUP.test(piece)) {
        groups.push(Number.parseInt(piece, 16))
      } else {
        return undefined
      }
    }
    return groups
  }
  if (halves.length === 1) {
    const groups = parseGroups(text, true)
    return groups?.length === 8 ? groups : undefined
  }
  const head = parseGroups(halves[0]!, false)
  const tail = parseGroups(halves[1]!, true)
  if (head === undefined || tail === undefined) return undefined
  // "::" stands for one or more zero groups (RFC 4291 §2.2 item 2)
  const missing = 8 - head.length - tail.length
  if (missing < 1) return undefined
  return [...head, ...new Array<number>(missing).fill(0), ...tail]
}

/**
 * Reads an address as sockets and proxies write it: optional `[...]` brackets, an optional
 * `%zone` suffix (RFC 6874) dropped. `undefined` for anything else.
 */
export function parseIp(text: string): IpAddress | undefined {
  if (typeof text !== 'string' || text.length > MAX_IP_TEXT_LENGTH) return undefined
  let address = text.trim()
  if (address.startsWith('[') && address.endsWith(']')) address = address.slice(1, -1)
  if (address.includes(':')) {
    const zone = address.indexOf('%')
    if (zone !== -1) address = address.slice(0, zone)
    const groups = parseIpv6(address)
    return groups === undefined ? undefined : { version: 6, groups }
  }
  const bytes = parseIpv4(address)
  return bytes === undefined ? undefined : { version: 4, bytes }
}

/**
 * An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`, RFC 4291 §2.5.5.2) as the IPv4 address it
 * stands for; any other address unchanged. Dual-stack sockets report IPv4 clients this way.
 */
export function unmapIpv4(address: IpAddress): IpAddress {
  if (address.version === 4) return address
  const g = address.groups
  if (g[0] === 0 && g[1] === 0 && g[2] === 0 && g[3] === 0 && g[4] === 0 && g[5] === 0xffff) {
    return { version: 4, bytes: [g[6]! >> 8, g[6]! & 0xff, g[7]! >> 8, g[7]! & 0xff] }
  }
  return address
}

/** Keeps the first `prefixLength` bits of the address and zeroes the rest. */
export function maskIp(address: IpAddress, prefixLength: number): IpAddress {
  const units = address.version === 4 ? address.bytes : address.groups
  const width = address.version === 4 ? 8 : 16
  const masked = units.map((unit, index) => {
    const keep = Math.min(Math.max(prefixLength - index * width, 0), width)
    const mask = keep === 0 ? 0 : ((0xffff << (width - keep)) & ((1 << width) - 1)) >>> 0
    return unit & mask
  })
  return address.version === 4 ? { version: 4, bytes: masked } : { version: 6, groups: masked }
}

/**
 * The canonical text of an address: dotted quad for IPv4; RFC 5952 §4 for IPv6 (lowercase,
 * no leading zeros, the longest run of two or more zero groups as `::`, the first on a tie).
 */
export function formatIp(address: IpAddress): string {
  if (address.version === 4) return address.bytes.join('.')
  const groups = address.groups
  let bestStart = -1
  let bestLength = 1
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++
      continue
    }
    let j = i
    while (j < 8 && groups[j] === 0) j++
    if (j - i > bestLength) {
      bestStart = i
      bestLength = j - i
    }
    i = j
  }
  const hex = (from: number, to: number) =>
    groups
      .slice(from, to)
      .map((group) => group.toString(16))
      .join(':')
  if (bestStart === -1) return hex(0, 8)
  return `${hex(0, bestStart)}::${hex(bestStart + bestLength, 8)}`
}
