/**
 * Which network a client address belongs to: the address masked to the prefix that usually
 * names one subscriber (an IPv6 customer is handed a whole /56 or /64, so counting each /128
 * as a client would let one customer pose as millions). The rate limit keys on it, and the
 * idempotency store bounds records per client with it.
 *
 * @module
 */
import { formatIp, maskIp, parseIp, unmapIpv4 } from './internal/ip.ts'

/**
 * Options of {@link clientNetwork}.
 *
 * @example
 * ```ts
 * const options: ClientNetworkOptions = { ipv6PrefixLength: 64 }
 * ```
 */
export interface ClientNetworkOptions {
  /** Bits of an IPv6 address that identify a client (default 56, as express-rate-limit). */
  ipv6PrefixLength?: number | undefined
  /** Bits of an IPv4 address that identify a client (default 32). */
  ipv4PrefixLength?: number | undefined
}

function prefixLength(value: number | undefined, fallback: number, max: number): number {
  if (value === undefined) return fallback
  if (!Number.isInteger(value) || value < 0 || value > max) {
    throw new RangeError(`clientNetwork(): a prefix length must be a whole number 0-${max}`)
  }
  return value
}

/**
 * The network of a client address in CIDR notation (`<masked address>/<prefix length>`, the
 * address in its RFC 5952 form; an IPv4-mapped IPv6 address counts as IPv4), or `undefined`
 * when `address` is not IP address text (RFC 4291 §2.2, or dotted-quad decimal).
 *
 * @throws {RangeError} for a prefix length outside 0-32 (IPv4) or 0-128 (IPv6).
 * @example
 * ```ts
 * clientNetwork('2001:db8:1:2a3::7') // '2001:db8:1:200::/56'
 * clientNetwork('::ffff:203.0.113.7') // '203.0.113.7/32'
 * clientNetwork('not an address') // undefined
 * ```
 */
export function clientNetwork(
  address: string,
  options: ClientNetworkOptions = {},
): string | undefined {
  const v6 = prefixLength(options.ipv6PrefixLength, 56, 128)
  const v4 = prefixLength(options.ipv4PrefixLength, 32, 32)
  const parsed = parseIp(address)
  if (parsed === undefined) return undefined
  const unmapped = unmapIpv4(parsed)
  const bits = unmapped.version === 4 ? v4 : v6
  return `${formatIp(maskIp(unmapped, bits))}/${bits}`
}
