/**
 * Which IP addresses a webhook may never be sent to (docs/spec.md §4.4): the special-purpose
 * ranges of RFC 6890 and the IANA IPv4 and IPv6 Special-Purpose Address Registries, the
 * private, loopback, link-local and shared (CGNAT) ranges, cloud metadata addresses, and any
 * address ipaddr.js does not class `unicast`. IPv4 carried inside IPv6 (mapped, compatible,
 * NAT64, 6to4) is taken out and judged as IPv4, so `::ffff:127.0.0.1` is refused like
 * `127.0.0.1` and `64:ff9b::8.8.8.8` is allowed like `8.8.8.8`.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6890
 * @see https://www.iana.org/assignments/iana-ipv4-special-registry
 * @see https://www.iana.org/assignments/iana-ipv6-special-registry
 * @module
 */
import ipaddr from 'ipaddr.js'

type IPv4 = ipaddr.IPv4
type IPv6 = ipaddr.IPv6

/** One refused range: the CIDR, what it is, and where it is defined. */
export interface RefusedRange {
  readonly cidr: string
  readonly name: string
  readonly reference: string
}

/**
 * IPv4 ranges refused. Mostly the IANA IPv4 Special-Purpose Address Registry (RFC 6890 §2.2.2
 * and its updates), whether or not the registry calls them globally reachable: no webhook
 * receiver lives in a documentation, benchmarking or relay range.
 */
export const REFUSED_IPV4: readonly RefusedRange[] = [
  { cidr: '0.0.0.0/8', name: '"this network"', reference: 'RFC 791 §3.2, RFC 6890 §2.2.2' },
  { cidr: '10.0.0.0/8', name: 'private-use', reference: 'RFC 1918 §3' },
  {
    cidr: '100.64.0.0/10',
    // Holds Alibaba Cloud's metadata service, 100.100.100.200.
    name: 'shared address space (carrier-grade NAT)',
    reference: 'RFC 6598 §7',
  },
  { cidr: '127.0.0.0/8', name: 'loopback', reference: 'RFC 1122 §3.2.1.3' },
  {
    cidr: '169.254.0.0/16',
    // Holds the metadata service of AWS, GCP, Azure, OCI and DigitalOcean (169.254.169.254)
    // and AWS ECS task metadata (169.254.170.2).
    name: 'link-local',
    reference: 'RFC 3927 §2.1',
  },
  { cidr: '172.16.0.0/12', name: 'private-use', reference: 'RFC 1918 §3' },
  {
    cidr: '192.0.0.0/24',
    // Holds Oracle Cloud Classic's metadata service, 192.0.0.192.
    name: 'IETF protocol assignments',
    reference: 'RFC 6890 §2.1',
  },
  { cidr: '192.0.2.0/24', name: 'documentation (TEST-NET-1)', reference: 'RFC 5737 §3' },
  { cidr: '192.31.196.0/24', name: 'AS112-v4', reference: 'RFC 7535 §4' },
  { cidr: '192.52.193.0/24', name: 'AMT', reference: 'RFC 7450 §7' },
  { cidr: '192.88.99.0/24', name: 'deprecated 6to4 relay anycast', reference: 'RFC 7526 §4' },
  { cidr: '192.168.0.0/16', name: 'private-use', reference: 'RFC 1918 §3' },
  { cidr: '192.175.48.0/24', name: 'direct delegation AS112 service', reference: 'RFC 7534 §3' },
  { cidr: '198.18.0.0/15', name: 'benchmarking', reference: 'RFC 2544 §C.2.2' },
  { cidr: '198.51.100.0/24', name: 'documentation (TEST-NET-2)', reference: 'RFC 5737 §3' },
  { cidr: '203.0.113.0/24', name: 'documentation (TEST-NET-3)', reference: 'RFC 5737 §3' },
  { cidr: '224.0.0.0/4', name: 'multicast', reference: 'RFC 5771 §3' },
  {
    cidr: '240.0.0.0/4',
    name: 'reserved, and the limited broadcast address 255.255.255.255',
    reference: 'RFC 1112 §4, RFC 919 §7',
  },
  {
    cidr: '168.63.129.16/32',
    // A public address by every registry (ipaddr.js classes it `unicast`), but inside Azure it
    // is the platform's WireServer (DHCP, DNS, health probes, the VM agent), so a range-only
    // filter lets it through.
    name: 'Azure WireServer',
    reference: 'Microsoft Azure, "What is IP address 168.63.129.16?"',
  },
]

/**
 * IPv6 ranges refused: the IANA IPv6 Special-Purpose Address Registry (RFC 6890 §2.2.3 and its
 * updates) and the other non-global ranges of RFC 4291. The prefixes that carry an IPv4
 * address to unwrap are in {@link EMBEDDED_IPV4}, not here. Besides these, every address
 * outside 2000::/3, the only block IANA allocates for global unicast (RFC 4291 §2.4), is
 * refused.
 */
export const REFUSED_IPV6: readonly RefusedRange[] = [
  { cidr: '::/128', name: 'unspecified', reference: 'RFC 4291 §2.5.2' },
  { cidr: '::1/128', name: 'loopback', reference: 'RFC 4291 §2.5.3' },
  {
    cidr: '::ffff:0:0:0/96',
    name: 'IPv4-translated (SIIT)',
    reference: 'RFC 7915 §4.1 (was RFC 6145)',
  },
  {
    cidr: '64:ff9b:1::/48',
    // Local-use: the operator chooses how IPv4 is embedded (any RFC 6052 prefix length), so
    // nothing can be unwrapped reliably; the registry says it is not globally reachable.
    name: 'local-use IPv4/IPv6 translation',
    reference: 'RFC 8215 §4',
  },
  { cidr: '100::/64', name: 'discard-only', reference: 'RFC 6666 §4' },
  {
    cidr: '2001::/23',
    // Holds Teredo, benchmarking, ORCHID and the AMT, AS112 and drone-identity assignments.
    name: 'IETF protocol assignments',
    reference: 'RFC 2928 §2',
  },
  {
    cidr: '2001::/32',
    // Its IPv4 server and client addresses are obfuscated in the address: refused outright.
    name: 'Teredo',
    reference: 'RFC 4380 §2.6',
  },
  { cidr: '2001:2::/48', name: 'benchmarking', reference: 'RFC 5180 §8' },
  { cidr: '2001:10::/28', name: 'deprecated ORCHID', reference: 'RFC 4843 §2' },
  { cidr: '2001:20::/28', name: 'ORCHIDv2', reference: 'RFC 7343 §2' },
  { cidr: '2001:db8::/32', name: 'documentation', reference: 'RFC 3849 §2' },
  { cidr: '2620:4f:8000::/48', name: 'direct delegation AS112 service', reference: 'RFC 7534 §3' },
  { cidr: '3fff::/20', name: 'documentation', reference: 'RFC 9637 §2' },
  { cidr: '5f00::/16', name: 'SRv6 SIDs', reference: 'RFC 9602 §3' },
  {
    cidr: 'fc00::/7',
    // Holds AWS's metadata service fd00:ec2::254, EKS Pod Identity fd00:ec2::23 and GCP's
    // fd20:ce::254.
    name: 'unique local',
    reference: 'RFC 4193 §3.1',
  },
  { cidr: 'fe80::/10', name: 'link-local unicast', reference: 'RFC 4291 §2.5.6' },
  { cidr: 'fec0::/10', name: 'deprecated site-local unicast', reference: 'RFC 3879 §4' },
  { cidr: 'ff00::/8', name: 'multicast', reference: 'RFC 4291 §2.7' },
]

/** A prefix whose addresses carry an IPv4 address, and where in the 128 bits it sits. */
export interface EmbeddingPrefix {
  readonly cidr: string
  readonly name: string
  readonly reference: string
  /** Index of the first of the two 16-bit parts that hold the IPv4 address. */
  readonly part: number
}

/**
 * IPv6 forms of an IPv4 address: the IPv4 address decides. Mapped is what a dual-stack socket
 * reports for an IPv4 peer; NAT64 is what DNS64 answers for an IPv4-only host on an IPv6-only
 * network (refusing it would refuse every receiver there); 6to4 and compatible are deprecated
 * but still dialled by some stacks.
 */
export const EMBEDDED_IPV4: readonly EmbeddingPrefix[] = [
  { cidr: '::ffff:0:0/96', name: 'IPv4-mapped', reference: 'RFC 4291 §2.5.5.2', part: 6 },
  { cidr: '64:ff9b::/96', name: 'NAT64 well-known prefix', reference: 'RFC 6052 §2.1', part: 6 },
  { cidr: '2002::/16', name: '6to4', reference: 'RFC 3056 §2', part: 1 },
  // Last: ::/128 and ::1/128 are inside it and unwrap to 0.0.0.0 and 0.0.0.1, refused as
  // "this network" either way.
  { cidr: '::/96', name: 'IPv4-compatible (deprecated)', reference: 'RFC 4291 §2.5.5.1', part: 6 },
]

type Cidr<T> = [T, number]

function parseRanges<T extends IPv4 | IPv6>(ranges: readonly { cidr: string }[]): Cidr<T>[] {
  return ranges.map(({ cidr }) => ipaddr.parseCIDR(cidr) as Cidr<T>)
}

const REFUSED_V4 = parseRanges<IPv4>(REFUSED_IPV4)
const REFUSED_V6 = parseRanges<IPv6>(REFUSED_IPV6)
const EMBEDDED = EMBEDDED_IPV4.map((prefix) => ({
  range: ipaddr.parseCIDR(prefix.cidr) as Cidr<IPv6>,
  part: prefix.part,
}))
const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3') as Cidr<IPv6>

/**
 * Parses an address the way the guard reads it: any form ipaddr.js accepts (an IPv4 address in
 * the dotted, short, octal or hexadecimal forms the WHATWG URL parser also reads; an IPv6
 * address with or without a zone), or `undefined`. Never throws.
 */
function parseAddress(address: string): IPv4 | IPv6 | undefined {
  if (typeof address !== 'string' || address.length > 64) return undefined
  try {
    return ipaddr.parse(address)
  } catch {
    return undefined
  }
}

/** The IPv4 address an IPv6 address carries in one of the {@link EMBEDDED_IPV4} forms. */
function embeddedIPv4(address: IPv6): IPv4 | undefined {
  for (const { range, part } of EMBEDDED) {
    if (address.match(range)) {
      const high = address.parts[part]!
      const low = address.parts[part + 1]!
      return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff])
    }
  }
  return undefined
}

function refusedIPv4(address: IPv4): boolean {
  if (address.range() !== 'unicast') return true
  return REFUSED_V4.some((range) => address.match(range))
}

function refusedIPv6(address: IPv6): boolean {
  const inner = embeddedIPv4(address)
  if (inner !== undefined) return refusedIPv4(inner)
  if (!address.match(GLOBAL_UNICAST)) return true
  if (address.range() !== 'unicast') return true
  return REFUSED_V6.some((range) => address.match(range))
}

/**
 * Whether the SSRF guard refuses to connect to `address`: `true` for an address in a refused
 * range (private, loopback, link-local, CGNAT, multicast, documentation, cloud metadata, …, see
 * the tables in this file), for an IPv6 address that carries such an IPv4 address
 * (`::ffff:127.0.0.1`, `64:ff9b::a9fe:a9fe`, `2002:7f00:1::`), and for anything that is not an
 * IP address at all. Never throws.
 *
 * @example
 * ```ts
 * isRefusedAddress('169.254.169.254') // true: cloud metadata
 * isRefusedAddress('::ffff:7f00:1') // true: 127.0.0.1, IPv4-mapped
 * isRefusedAddress('fd00:ec2::254') // true: unique local (AWS metadata)
 * isRefusedAddress('93.184.215.14') // false
 * isRefusedAddress('example.com') // true: not an address
 * ```
 */
export function isRefusedAddress(address: string): boolean {
  const parsed = parseAddress(address)
  if (parsed === undefined) return true
  return parsed.kind() === 'ipv4' ? refusedIPv4(parsed as IPv4) : refusedIPv6(parsed as IPv6)
}

/**
 * An address range as {@link parseCidr} makes it.
 */
export type AddressRange = readonly [IPv4 | IPv6, number]

/** Parses `10.0.0.0/8` or `fd00::/8`; throws on anything else. */
export function parseCidr(cidr: string): AddressRange {
  return ipaddr.parseCIDR(cidr)
}

/**
 * Whether `address` is in one of `ranges`; an IPv6 form of an IPv4 address (mapped, NAT64,
 * 6to4, compatible) is also matched against the IPv4 ranges.
 */
export function inRanges(address: string, ranges: readonly AddressRange[]): boolean {
  const parsed = parseAddress(address)
  if (parsed === undefined) return false
  const inner = parsed.kind() === 'ipv6' ? embeddedIPv4(parsed as IPv6) : undefined
  return ranges.some(
    ([base, bits]) =>
      (base.kind() === parsed.kind() && parsed.match(base, bits)) ||
      (inner !== undefined && base.kind() === 'ipv4' && inner.match(base, bits)),
  )
}
