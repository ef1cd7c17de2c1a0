/**
 * Charging an operation's cost to @api-blocks/rate-limit: the requested cost, not a flat 1 per
 * request, so a client that asks for a lot of data spends its quota faster.
 *
 * @module
 */
import type { RateLimiter, RateLimitHeaderOptions, RateLimitResult } from '@api-blocks/rate-limit'
import { mergeRateLimitHeaders, mostRestrictivePolicy } from '@api-blocks/rate-limit'
import type { GraphQLError } from 'graphql'
import { codedError } from '../error.ts'

/**
 * The rate limit an endpoint charges operations to.
 *
 * @example
 * ```ts
 * const rateLimit: GraphQLRateLimit = {
 *   limiter: createRateLimiter({ store: new MemoryRateLimitStore(), policies: [{ name: 'cost', quota: 1000, windowSeconds: 60 }] }),
 *   key: (request) => rateLimitKey(request),
 * }
 * ```
 */
export interface GraphQLRateLimit {
  readonly limiter: RateLimiter
  /** Whose quota: the principal, an API key, the client address (`rateLimitKey` of @api-blocks/rate-limit). */
  readonly key: (request: Request) => string | Promise<string>
  /** Which RateLimit header fields are written (default: `RateLimit-*` and `X-RateLimit-*`). */
  readonly headers?: RateLimitHeaderOptions
}

/**
 * The `extensions.throttle` of a result: the most restrictive policy after this charge (the
 * numbers of the `RateLimit-*` header fields, for clients that read the body only).
 *
 * @example
 * ```ts
 * const throttle: ThrottleExtension = { limit: 1000, remaining: 987, resetSeconds: 1 }
 * ```
 */
export interface ThrottleExtension {
  readonly limit: number
  readonly remaining: number
  readonly resetSeconds: number
}

/**
 * The units charged for an operation of `cost`: `max(1, ceil(cost))` (a rate limiter counts
 * whole units, and every request costs at least one).
 *
 * @example
 * ```ts
 * chargeFor(0) // 1
 * chargeFor(12.5) // 13
 * ```
 */
export function chargeFor(cost: number): number {
  return Number.isFinite(cost) ? Math.max(1, Math.ceil(cost)) : Number.MAX_SAFE_INTEGER
}

/**
 * Charges `units` to the caller of `request`, writing the RateLimit header fields into
 * `headers`. `undefined` when the limiter's store failed (the operation runs: fail open, and
 * `report` is told).
 *
 * @example
 * ```ts
 * const result = await charge(rateLimit, request, 13, headers, console.error)
 * if (result !== undefined && !result.allowed) console.log(result.retryAfterSeconds)
 * ```
 */
export async function charge(
  rateLimit: GraphQLRateLimit,
  request: Request,
  units: number,
  headers: Headers,
  report: (error: unknown) => void,
): Promise<RateLimitResult | undefined> {
  let result: RateLimitResult
  try {
    result = await rateLimit.limiter.check(await rateLimit.key(request), units)
  } catch (error) {
    report(error)
    return undefined
  }
  mergeRateLimitHeaders(headers, result, rateLimit.headers)
  return result
}

/**
 * `extensions.throttle` for a result charged with `result`.
 *
 * @example
 * ```ts
 * const throttle = throttleOf(result) // { limit: 1000, remaining: 987, resetSeconds: 1 }
 * ```
 */
export function throttleOf(result: RateLimitResult): ThrottleExtension {
  const policy = mostRestrictivePolicy(result)
  return { limit: policy.quota, remaining: policy.remaining, resetSeconds: policy.resetSeconds }
}

/**
 * The one error of a refused charge (RFC 6585 §4: 429 with Retry-After).
 *
 * @example
 * ```ts
 * const error = rateLimitedError(result, 13)
 * ```
 */
export function rateLimitedError(result: RateLimitResult, units: number): GraphQLError {
  const retryAfterSeconds = Number.isFinite(result.retryAfterSeconds)
    ? result.retryAfterSeconds
    : null
  return codedError(
    'RATE_LIMITED',
    retryAfterSeconds === null
      ? `The operation costs ${units}, more than the rate limit allows at once.`
      : `Rate limit exceeded: the operation costs ${units}; retry in ${retryAfterSeconds} s.`,
    { cost: units, retryAfterSeconds },
  )
}
