/**
 * Who a request is charged to: the authenticated principal, else an API key (hashed), else
 * the client's network address (IPv6 masked to a prefix, since one subscriber usually holds
 * a whole /56 or /64).
 *
 * @module
 */
import { problems } from '@api-blocks/problem-details'
import { formatIp, maskIp, parseIp, unmapIpv4 } from './internal/ip.ts'

/**
 * API key header values longer than this answer 431 `header-too-large`.
 *
 * @example
 * ```ts
 * if (apiKey.length > MAX_API_KEY_LENGTH) console.log('will answer 431')
 * ```
 */
export const MAX_API_KEY_LENGTH = 1024

/**
 * Options of {@link rateLimitKey}.
 *
 * @example
 * ```ts
 * const options: RateLimitKeyOptions = { apiKeyHeader: 'x-api-key', clientIp: () => '2001:db8::1', ipv6PrefixLength: 64 }
 * ```
 */
export interface RateLimitKeyOptions {
  /**
   * The authenticated principal, when there is one (for example the bearer package's
   * `Principal`, or a subject string). It wins over everything else.
   */
  principal?: string | { readonly subject: string } | undefined
  /**
   * The header carrying an API key (for example `x-api-key`). The key is hashed (SHA-256,
   * 128 bits kept) and never stored. Only use it where the key has been verified before the
   * limiter runs: an unverified header lets a client mint a fresh budget per request.
   */
  apiKeyHeader?: string
  /**
   * The client address, as the adapter knows it from the socket (or from a proxy header the
   * deployment trusts). Without it, or when it answers text that is not an IP address, every
   * such request shares the single key `ip:unknown`: conservative, never a free pass.
   */
  clientIp?: (request: Request) => string | undefined
  /** Bits of an IPv6 address that identify a client (default 56, as express-rate-limit). */
  ipv6PrefixLength?: number
  /** Bits of an IPv4 address that identify a client (default 32). */
  ipv4PrefixLength?: number
}

async function sha256Base64url(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text))
  let binary = ''
  // 128 bits are plenty to tell keys apart and halve the memory per stored key.
  for (const byte of new Uint8Array(digest, 0, 16)) binary += String.fromCharCode(byte)
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}

function prefixLength(value: number | undefined, fallback: number, max: number): number {
  if (value === undefined) return fallback
  if (!Number.isInteger(value) || value < 0 || value > max) {
    throw new RangeError(`Rate limit key: a prefix length must be a whole number 0-${max}`)
  }
  return value
}

/**
 * The rate-limit key of a request: `principal:<subject>`, else `api-key:<hash>`, else
 * `ip:<masked address>/<prefix length>` (IPv4-mapped IPv6 counted as IPv4), else `ip:unknown`.
 * Throws the 431 `header-too-large` problem for an API key longer than
 * {@link MAX_API_KEY_LENGTH} characters.
 *
 * @example
 * ```ts
 * const key = await rateLimitKey(request, {
 *   principal: principal?.subject,
 *   apiKeyHeader: 'x-api-key',
 *   clientIp: () => '2001:db8:1:2a3::7',
 * })
 * // 'ip:2001:db8:1:200::/56' when neither a principal nor an API key is present
 * ```
 */
export async function rateLimitKey(
  request: Request,
  options: RateLimitKeyOptions = {},
): Promise<string> {
  const { principal, apiKeyHeader, clientIp } = options
  const v6 = prefixLength(options.ipv6PrefixLength, 56, 128)
  const v4 = prefixLength(options.ipv4PrefixLength, 32, 32)
  const subject = typeof principal === 'string' ? principal : principal?.subject
  if (subject !== undefined && subject !== '') return `principal:${subject}`
  if (apiKeyHeader !== undefined) {
    const apiKey = request.headers.get(apiKeyHeader)?.trim()
    if (apiKey !== undefined && apiKey !== '') {
      if (apiKey.length > MAX_API_KEY_LENGTH) {
        throw problems.headerTooLarge.error({
          header: apiKeyHeader,
          detail: `The ${apiKeyHeader} header is longer than ${MAX_API_KEY_LENGTH} characters.`,
        })
      }
      return `api-key:${await sha256Base64url(apiKey)}`
    }
  }
  const text = clientIp?.(request)
  const parsed = text === undefined ? undefined : parseIp(text)
  if (parsed === undefined) return 'ip:unknown'
  const address = unmapIpv4(parsed)
  const bits = address.version === 4 ? v4 : v6
  return `ip:${formatIp(maskIp(address, bits))}/${bits}`
}
