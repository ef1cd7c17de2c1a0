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
import { checkFetchUrl } from './internal/http-url.ts'
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

/** @internal What an active answer must also satisfy, resolved from the options. */
interface Checks {
  /** `undefined`: any audience (`audience: false`). */
  readonly audience: readonly string[] | undefined
  readonly issuer: string | undefined
  readonly requireTokenType: boolean
  readonly toleranceSeconds: number
}

function checksOf(options: InProcessIntrospectionOptions | HttpIntrospectionOptions): Checks {
  return {
    audience: audienceOf(options.audience),
    issuer: options.issuer,
    requireTokenType: options.requireTokenType ?? true,
    toleranceSeconds: toleranceOf(options.clockToleranceSeconds),
  }
}

function audienceOf(
  value: string | readonly string[] | false | undefined,
): readonly string[] | undefined {
  if (value === false) return undefined
  if (value === undefined) {
    throw new TypeError(
      "introspection.audience is required: this API's identifier(s), or false to accept tokens of any audience (unsafe, RFC 9700 §2.3)",
    )
  }
  const list = typeof value === 'string' ? [value] : value
  if (
    !Array.isArray(list) ||
    list.length === 0 ||
    list.some((item) => typeof item !== 'string' || item === '')
  ) {
    throw new TypeError('introspection.audience lists non-empty strings')
  }
  return list
}

function toleranceOf(value: number | undefined): number {
  const tolerance = value ?? 30
  if (!Number.isInteger(tolerance) || tolerance < 0 || tolerance > 300) {
    throw new RangeError('introspection.clockToleranceSeconds is a whole number of 0 to 300')
  }
  return tolerance
}

// What an active answer must also satisfy before its token is accepted.
function acceptedPrincipal(answer: IntrospectionResponse, checks: Checks, now: number): Principal {
  // RFC 7662 §2.2: `active` is the authorisation server's verdict (unknown, expired, revoked).
  if (!answer.active) throw invalid('The access token is not active.')
  // RFC 6750 §1.2 / RFC 7662 §2.2 `token_type`: only an access token of the bearer type. A
  // refresh token an authorisation server answers as active must not pass for one.
  if (answer.token_type === undefined) {
    if (checks.requireTokenType) throw invalid('The token is not a bearer access token.')
  } else if (answer.token_type.toLowerCase() !== 'bearer') {
    throw invalid('The token is not a bearer access token.')
  }
  // `token_use` (as some authorisation servers answer it): only an access token.
  if (answer['token_use'] !== undefined && answer['token_use'] !== 'access_token') {
    throw invalid('The token is not a bearer access token.')
  }
  // RFC 9449 §7.1, RFC 8705 §3: a sender-constrained token counts only with a proof of its key.
  if (answer.cnf !== undefined) {
    throw invalid('The access token is bound to a key and is not a bearer token.')
  }
  // RFC 9700 §2.3: the resource server checks that the token is meant for it.
  if (checks.audience !== undefined) {
    const aud = typeof answer.aud === 'string' ? [answer.aud] : (answer.aud ?? [])
    if (!aud.some((item) => checks.audience!.includes(item))) {
      throw invalid("The access token's audience is not this resource server.")
    }
  }
  if (checks.issuer !== undefined && answer.iss !== checks.issuer) {
    throw invalid("The access token's issuer is not accepted.")
  }
  // A user token without a subject would pass for its client (the principal would have no
  // subject, and every user of the client would share one identity): refused, as RFC 9068
  // §2.2 requires `sub` of a JWT access token.
  if (typeof answer.sub !== 'string' || answer.sub === '') {
    throw invalid('The access token has no sub.')
  }
  // RFC 7662 §2.2 `exp`, `nbf`: the same tolerance as a JWT's (RFC 7519 §4.1.4, §4.1.5), in
  // case the authorisation server answers active for a token its own clock no longer holds.
  const seconds = Math.floor(now / 1000)
  if (answer.exp !== undefined && answer.exp <= seconds - checks.toleranceSeconds) {
    throw new BearerError('TOKEN_EXPIRED', 'The access token expired.')
  }
  if (answer.nbf !== undefined && answer.nbf > seconds + checks.toleranceSeconds) {
    throw invalid('The access token is not valid yet.')
  }
  return principalOf(answer)
}

// The principal of an accepted answer; an answer that cannot be copied (an in-process answer
// with a function or a typed array in it) is the authorisation server's failure.
function principalOf(answer: IntrospectionResponse): Principal {
  try {
    return principalFromClaims(answer)
  } catch (cause) {
    throw new BearerError(
      'INTROSPECTION_UNAVAILABLE',
      'The introspection answer is not plain data.',
      {
        cause,
      },
    )
  }
}

function inProcess(
  options: InProcessIntrospectionOptions,
  clock: () => number,
): IntrospectionVerify {
  if (typeof options.introspect !== 'function') {
    throw new TypeError('introspection.introspect must be a function')
  }
  const checks = checksOf(options)
  return async (token) => {
    let answer: unknown
    try {
      answer = await options.introspect(token)
    } catch (cause) {
      if (cause instanceof BearerError) throw cause
      throw new BearerError('INTROSPECTION_UNAVAILABLE', 'Token introspection failed.', { cause })
    }
    return acceptedPrincipal(checkIntrospectionResponse(answer), checks, clock())
  }
}

function whole(
  value: number | undefined,
  fallback: number,
  name: string,
  least: number,
  most = Number.MAX_SAFE_INTEGER,
): number {
  const result = value ?? fallback
  if (!Number.isInteger(result) || result < least || result > most) {
    throw new RangeError(
      `introspection.${name} must be a whole number of ${least} to ${most}, got ${result}`,
    )
  }
  return result
}

function overHttp(options: HttpIntrospectionOptions, clock: () => number): IntrospectionVerify {
  const url = checkFetchUrl(options.url, 'introspection.url', options.allowInsecureHttp)
  if (typeof options.clientId !== 'string' || options.clientId === '') {
    throw new TypeError('introspection.clientId is required')
  }
  if (typeof options.clientSecret !== 'string' || options.clientSecret === '') {
    throw new TypeError('introspection.clientSecret is required')
  }
  const endpoint: IntrospectionEndpoint = {
    url: url.href,
    authorization: basicAuthorization(options.clientId, options.clientSecret),
    timeoutMs: whole(options.timeoutMs, 5000, 'timeoutMs', 1),
    fetch: options.fetch,
  }
  const checks = checksOf(options)
  // At most five minutes: the longest a revoked token is still accepted.
  const maxAgeMs = whole(options.cache?.maxAgeSeconds, 60, 'cache.maxAgeSeconds', 0, 300) * 1000
  const cache = new ExpiringLru<Principal>(
    whole(options.cache?.maxEntries, 10_000, 'cache.maxEntries', 0),
  )
  const inFlight = new Map<string, Promise<Principal>>()

  async function introspect(key: string, token: string): Promise<Principal> {
    const answer = await requestIntrospection(endpoint, token)
    const now = clock()
    const principal = acceptedPrincipal(answer, checks, now)
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
  return 'introspect' in options ? inProcess(options, clock) : overHttp(options, clock)
}
