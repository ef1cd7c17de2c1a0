/**
 * Who a request is charged to: the authenticated principal (core's `principalOf`), else an API
 * key (hashed), else the client's network address (core's `clientAddressOf`; IPv6 masked to a
 * prefix, since one subscriber usually holds a whole /56 or /64).
 *
 * @module
 */
import type { Principal } from '@api-blocks/core'
import {
  clientAddressOf,
  clientNetwork,
  encodeBase64url,
  principalKey,
  principalOf,
} from '@api-blocks/core'
import { sha256 } from '@api-blocks/core/crypto'
import { problems } from '@api-blocks/problem-details'

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
 * Options of {@link rateLimitKey}. Every one is optional: with none, a request is keyed by the
 * principal an authentication layer recorded (`setPrincipal`), else by the address the adapter
 * recorded (`setClientAddress`).
 *
 * @example
 * ```ts
 * const options: RateLimitKeyOptions = { apiKeyHeader: 'x-api-key', clientIp: () => '2001:db8::1', ipv6PrefixLength: 64 }
 * ```
 */
export interface RateLimitKeyOptions {
  /**
   * The authenticated principal. It wins over everything else. Default (absent or
   * `undefined`): `principalOf(request)` of `@api-blocks/core`, what the authentication layer
   * recorded. A string is taken as a subject. `null` (or `''`) keys the request without a
   * principal, by API key or address, whoever is signed in (a login-attempt limit, say).
   */
  principal?: Principal | string | null | undefined
  /**
   * The header carrying an API key (for example `x-api-key`). The key is hashed (SHA-256,
   * 128 bits kept) and never stored. Only use it where the key has been verified before the
   * limiter runs: an unverified header lets a client mint a fresh budget per request.
   */
  apiKeyHeader?: string
  /**
   * The client address. Default: `clientAddressOf(request)` of `@api-blocks/core`, the address
   * the adapter recorded (the socket's, or the one the framework resolved under its trust-proxy
   * setting). Give a function only to read a proxy header your own deployment sets. When there
   * is no address, or its text is not an IP address, every such request shares the single key
   * `ip:unknown`: conservative, never a free pass.
   */
  clientIp?: (request: Request) => string | undefined
  /** Bits of an IPv6 address that identify a client (default 56, as express-rate-limit). */
  ipv6PrefixLength?: number
  /** Bits of an IPv4 address that identify a client (default 32). */
  ipv4PrefixLength?: number
}

// 128 bits are plenty to tell keys apart and halve the memory per stored key.
const API_KEY_HASH_BYTES = 16

/** The principal's part of the key, or `undefined` when the request is keyed without one. */
function principalPart(
  request: Request,
  principal: Principal | string | null | undefined,
): string | undefined {
  const chosen = principal === undefined ? principalOf(request) : principal
  if (chosen === null || chosen === undefined || chosen === '') return undefined
  // A principal with neither a subject nor a client id names nobody (`principalKey` answers
  // undefined): the request is keyed as if unauthenticated, which never buys a fresh quota.
  return principalKey(
    typeof chosen === 'string' ? { subject: chosen, scopes: [], claims: {} } : chosen,
  )
}

/**
 * The rate-limit key of a request: `principal:<principalKey>` (`principal:sub:<subject>`, or
 * `principal:client:<client id>` for a client acting for itself), else `api-key:<hash>`, else
 * `ip:<masked address>/<prefix length>` (IPv4-mapped IPv6 counted as IPv4), else `ip:unknown`.
 * The principal and the address come from the request's context (`principalOf`,
 * `clientAddressOf` of `@api-blocks/core`) unless the options give them. Throws the 431
 * `header-too-large` problem for an API key longer than {@link MAX_API_KEY_LENGTH} characters.
 *
 * @example
 * ```ts
 * const key = await rateLimitKey(request, { apiKeyHeader: 'x-api-key' })
 * // 'principal:sub:user-42' once an authentication layer called setPrincipal(request, …);
 * // else 'api-key:…' for a request with an x-api-key header;
 * // else 'ip:2001:db8:1:200::/56' for a client the adapter saw at 2001:db8:1:2a3::7
 * ```
 */
export async function rateLimitKey(
  request: Request,
  options: RateLimitKeyOptions = {},
): Promise<string> {
  const { apiKeyHeader, clientIp = clientAddressOf } = options
  const prefixes = {
    ipv4PrefixLength: options.ipv4PrefixLength,
    ipv6PrefixLength: options.ipv6PrefixLength,
  }
  const principal = principalPart(request, options.principal)
  if (principal !== undefined) return `principal:${principal}`
  if (apiKeyHeader !== undefined) {
    const apiKey = request.headers.get(apiKeyHeader)?.trim()
    if (apiKey !== undefined && apiKey !== '') {
      if (apiKey.length > MAX_API_KEY_LENGTH) {
        throw problems.headerTooLarge.error({
          header: apiKeyHeader,
          detail: `The ${apiKeyHeader} header is longer than ${MAX_API_KEY_LENGTH} characters.`,
        })
      }
      const digest = await sha256(apiKey)
      return `api-key:${encodeBase64url(digest.subarray(0, API_KEY_HASH_BYTES))}`
    }
  }
  // No address (or text that is not one) still checks the prefix lengths: a RangeError.
  const network = clientNetwork(clientIp(request) ?? '', prefixes)
  return network === undefined ? 'ip:unknown' : `ip:${network}`
}
