/**
 * Opaque access tokens, verified by asking the authorisation server (RFC 7662): in process
 * through an `introspect` function, or over HTTP with a bounded cache of active answers.
 *
 * Caching policy: an active answer is kept at most `maxAgeSeconds` and never past the token's
 * `exp`, keyed by the token's SHA-256 (the cache never holds a token). Inactive answers are not
 * cached: a token never becomes active again, but a flood of made-up tokens would otherwise
 * evict the live entries; rate-limit unauthenticated callers instead. Concurrent requests with
 * the same token share one introspection request.
 *
 * @module
 */
import type { Principal } from '@api-blocks/core'
import { sha256Base64url } from '@api-blocks/core/crypto'
import { BearerError } from './error.ts'
import { ExpiringLru } from './internal/expiring-lru.ts'
import type { IntrospectionEndpoint } from './internal/introspection-request.ts'
import {
  basicAuthorization,
  checkIntrospectionResponse,
  requestIntrospection,
} from './internal/introspection-request.ts'
import { principalFromClaims } from './internal/principal.ts'
import type {
  HttpIntrospectionOptions,
  InProcessIntrospectionOptions,
  IntrospectionResponse,
} from './options.ts'

/** @internal Verifies one token: the principal, or a BearerError. */
export type IntrospectionVerify = (token: string) => Promise<Principal>

function invalid(description: string): BearerError {
  return new BearerError('TOKEN_INVALID', description)
}

function listOf(value: string | readonly string[] | undefined): readonly string[] | undefined {
  if (value === undefined) return undefined
  const list = typeof value === 'string' ? [value] : value
  if (list.length === 0 || list.some((item) => typeof item !== 'string' || item === '')) {
    throw new TypeError('introspection.audience lists non-empty strings')
  }
  return list
}

// What an active answer must also satisfy before its token is accepted.
function acceptedPrincipal(
  answer: IntrospectionResponse,
  audience: readonly string[] | undefined,
  issuer: string | undefined,
): Principal {
  // RFC 7662 §2.2: `active` is the authorisation server's verdict (unknown, expired, revoked).
  if (!answer.active) throw invalid('The access token is not active.')
  // RFC 6750 §1.2 / RFC 7662 §2.2 `token_type`: only an access token of the bearer type.
  if (answer.token_type !== undefined && answer.token_type.toLowerCase() !== 'bearer') {
    throw invalid('The token is not a bearer access token.')
  }
  // RFC 9449 §7.1, RFC 8705 §3: a sender-constrained token counts only with a proof of its key.
  if (answer.cnf !== undefined) {
    throw invalid('The access token is bound to a key and is not a bearer token.')
  }
  // RFC 9700 §2.3: the resource server checks that the token is meant for it.
  if (audience !== undefined) {
    const aud = typeof answer.aud === 'string' ? [answer.aud] : (answer.aud ?? [])
    if (!aud.some((item) => audience.includes(item))) {
      throw invalid("The access token's audience is not this resource server.")
    }
  }
  if (issuer !== undefined && answer.iss !== issuer) {
    throw invalid("The access token's issuer is not accepted.")
  }
  return principalFromClaims(answer)
}

function inProcess(options: InProcessIntrospectionOptions): IntrospectionVerify {
  if (typeof options.introspect !== 'function') {
    throw new TypeError('introspection.introspect must be a function')
  }
  const audience = listOf(options.audience)
  return async (token) => {
    let answer: unknown
    try {
      answer = await options.introspect(token)
    } catch (cause) {
      if (cause instanceof BearerError) throw cause
      throw new BearerError('INTROSPECTION_UNAVAILABLE', 'Token introspection failed.', { cause })
    }
    return acceptedPrincipal(checkIntrospectionResponse(answer), audience, options.issuer)
  }
}

function whole(value: number | undefined, fallback: number, name: string): number {
  const result = value ?? fallback
  if (!Number.isInteger(result) || result < 0) {
    throw new RangeError(
      `introspection.${name} must be a whole number of at least 0, got ${result}`,
    )
  }
  return result
}

function overHttp(options: HttpIntrospectionOptions, clock: () => number): IntrospectionVerify {
  const url = new URL(options.url)
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new TypeError(`introspection.url must be an http(s) URL, got ${url.protocol}`)
  }
  if (typeof options.clientId !== 'string' || options.clientId === '') {
    throw new TypeError('introspection.clientId is required')
  }
  if (typeof options.clientSecret !== 'string' || options.clientSecret === '') {
    throw new TypeError('introspection.clientSecret is required')
  }
  const endpoint: IntrospectionEndpoint = {
    url: url.href,
    authorization: basicAuthorization(options.clientId, options.clientSecret),
    timeoutMs: whole(options.timeoutMs, 5000, 'timeoutMs'),
    fetch: options.fetch,
  }
  const audience = listOf(options.audience)
  const maxAgeMs = whole(options.cache?.maxAgeSeconds, 60, 'cache.maxAgeSeconds') * 1000
  const cache = new ExpiringLru<Principal>(
    whole(options.cache?.maxEntries, 10_000, 'cache.maxEntries'),
  )
  const inFlight = new Map<string, Promise<Principal>>()

  async function introspect(key: string, token: string): Promise<Principal> {
    const answer = await requestIntrospection(endpoint, token)
    const principal = acceptedPrincipal(answer, audience, options.issuer)
    const now = clock()
    // Never past the token's own expiry (RFC 7662 §4: a cache must not outlive the token).
    const expiresAt = Math.min(
      now + maxAgeMs,
      answer.exp === undefined ? Infinity : answer.exp * 1000,
    )
    cache.set(key, principal, expiresAt, now)
    return principal
  }

  return async (token) => {
    const key = await sha256Base64url(token)
    const cached = cache.get(key, clock())
    if (cached !== undefined) return cached
    let pending = inFlight.get(key)
    if (pending === undefined) {
      pending = introspect(key, token).finally(() => inFlight.delete(key))
      inFlight.set(key, pending)
    }
    return pending
  }
}

/** @internal The introspection verifier of `options`, checked at once. */
export function createIntrospectionVerify(
  options: InProcessIntrospectionOptions | HttpIntrospectionOptions,
  clock: () => number,
): IntrospectionVerify {
  return 'introspect' in options ? inProcess(options) : overHttp(options, clock)
}
