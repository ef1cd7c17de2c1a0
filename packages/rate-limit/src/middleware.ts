/**
 * The Fetch layer: `rateLimit()` middleware and the 429 response it answers.
 *
 * @module
 */
import type { ProblemResponseOptions } from '@api-blocks/problem-details'
import { problems, toProblemResponse } from '@api-blocks/problem-details'
import { quotaExceededDetail, RateLimitError, violatedPolicies } from './error.ts'
import type { RateLimitResult } from './gcra.ts'
import type { RateLimitHeaderOptions } from './headers.ts'
import { mergeRateLimitHeaders } from './headers.ts'
import { createRateLimiter } from './limiter.ts'
import type { RateLimitPolicy } from './policy.ts'
import type { RateLimitStore } from './store.ts'

/**
 * Where a problem response's `type` resolves and what it localises against.
 *
 * @example
 * ```ts
 * const problem: RateLimitProblemOptions = { base: 'https://api.example/problems/', defaultLanguage: 'en' }
 * ```
 */
export type RateLimitProblemOptions = Omit<ProblemResponseOptions, 'request' | 'headers'>

/**
 * The 429 answer to a denied check: the IANA `quota-exceeded` problem
 * (draft-ietf-httpapi-ratelimit-headers-10 §5.1) with `violated-policies`, `Retry-After`
 * (omitted only when no wait can help: the cost exceeds a quota) and the rate-limit fields.
 *
 * @example
 * ```ts
 * const result = await limiter.check(key)
 * if (!result.allowed) return rateLimitedResponse(result, { request })
 * ```
 */
export function rateLimitedResponse(
  result: RateLimitResult,
  options: RateLimitProblemOptions & {
    request?: Request
    headers?: RateLimitHeaderOptions
  } = {},
): Response {
  const { headers: headerOptions, ...problemOptions } = options
  const headers = new Headers()
  mergeRateLimitHeaders(headers, result, headerOptions)
  const problem = problems.quotaExceeded.create({
    detail: quotaExceededDetail(result),
    'violated-policies': violatedPolicies(result),
  })
  return toProblemResponse(problem, { ...problemOptions, headers })
}

/**
 * What the middleware reports through `onEvent`.
 *
 * @example
 * ```ts
 * const onEvent = (event: RateLimitEvent) => {
 *   if (event.type === 'store-error') log.warn({ err: event.error, action: event.action })
 * }
 * ```
 */
export type RateLimitEvent =
  /** A request was refused with 429. */
  | { readonly type: 'rejected'; readonly key: string; readonly result: RateLimitResult }
  /** The store failed; `action` is what the middleware did about it. */
  | {
      readonly type: 'store-error'
      readonly key: string
      readonly error: unknown
      readonly action: 'fail-open' | 'fail-closed'
    }

/**
 * Options of {@link rateLimit}.
 *
 * @example
 * ```ts
 * const options: RateLimitOptions = {
 *   store: new MemoryRateLimitStore(),
 *   policies: [{ name: 'burst', quota: 10, windowSeconds: 1 }],
 *   key: (request) => rateLimitKey(request, { clientIp: () => '198.51.100.7' }),
 *   onStoreError: 'fail-open',
 *   headers: { structured: true },
 * }
 * ```
 */
export interface RateLimitOptions {
  /** Where state lives (`new MemoryRateLimitStore()` in one process). */
  store: RateLimitStore
  /** The policies each request is charged against, all or none. */
  policies: readonly RateLimitPolicy[]
  /**
   * The key a request is charged to (see `rateLimitKey`). `undefined` exempts the request:
   * it passes without a charge and without rate-limit fields.
   */
  key: (request: Request) => string | undefined | Promise<string | undefined>
  /**
   * What happens when the store fails, chosen explicitly (there is no default):
   * `fail-closed` answers 503 `service-unavailable`; `fail-open` lets the request through
   * without rate-limit fields. Never a 429: the client did nothing wrong. Either way the
   * error is reported to `onEvent`.
   */
  onStoreError: 'fail-open' | 'fail-closed'
  /** Units a request costs (default 1): a whole number >= 0, or a function of the request. */
  cost?: number | ((request: Request) => number | Promise<number>)
  /** Milliseconds since the epoch (default `Date.now`). */
  clock?: () => number
  /** Which rate-limit fields to write (defaults: `RateLimit-*` and `X-RateLimit-*`). */
  headers?: RateLimitHeaderOptions
  /** Problem serialisation options (the `type` base, the default language). */
  problem?: RateLimitProblemOptions
  /** Observes rejections and store errors. Errors thrown here are ignored. */
  onEvent?: (event: RateLimitEvent) => void
}

/**
 * Fetch middleware that rate-limits requests with a GCRA over several policies. A request
 * that every policy allows is charged and passes, and its response gets the rate-limit fields
 * (merged, never overwriting fields an inner layer set). A denied request is answered 429
 * with the `quota-exceeded` problem and is not charged.
 *
 * @example
 * ```ts
 * const limit = rateLimit({
 *   store: new MemoryRateLimitStore(),
 *   policies: [
 *     { name: 'burst', quota: 10, windowSeconds: 1 },
 *     { name: 'daily', quota: 1000, windowSeconds: 86_400 },
 *   ],
 *   key: (request) => rateLimitKey(request, { clientIp: () => '203.0.113.7' }),
 *   onStoreError: 'fail-open',
 * })
 * const response = await limit(new Request('https://api.example/v1/orders'), async () => Response.json([]))
 * ```
 */
export function rateLimit(
  options: RateLimitOptions,
): (request: Request, next: (request: Request) => Promise<Response>) => Promise<Response> {
  const { onStoreError, cost = 1, headers: headerOptions, problem, onEvent } = options
  if (onStoreError !== 'fail-open' && onStoreError !== 'fail-closed') {
    throw new TypeError("rateLimit(): onStoreError must be 'fail-open' or 'fail-closed'")
  }
  if (typeof options.key !== 'function') throw new TypeError('rateLimit(): key must be a function')
  const limiter = createRateLimiter({
    store: options.store,
    policies: options.policies,
    ...(options.clock === undefined ? {} : { clock: options.clock }),
  })
  const emit = (event: RateLimitEvent): void => {
    try {
      onEvent?.(event)
    } catch {
      // Ignored by contract: an observer must not change the answer.
    }
  }
  return async (request, next) => {
    const key = await options.key(request)
    if (key === undefined) return next(request)
    const units = typeof cost === 'function' ? await cost(request) : cost
    let result: RateLimitResult
    try {
      result = await limiter.check(key, units)
    } catch (error) {
      if (!(error instanceof RateLimitError) || error.reason !== 'store_unavailable') throw error
      emit({ type: 'store-error', key, error: error.cause, action: onStoreError })
      if (onStoreError === 'fail-open') return next(request)
      return toProblemResponse(error.toProblem(), { ...problem, request })
    }
    if (!result.allowed) {
      emit({ type: 'rejected', key, result })
      return rateLimitedResponse(result, {
        ...problem,
        request,
        ...(headerOptions === undefined ? {} : { headers: headerOptions }),
      })
    }
    const response = await next(request)
    return withRateLimitHeaders(response, result, headerOptions)
  }
}

/**
 * Adds the fields to a response. Responses with immutable headers (from `fetch()` or
 * `Response.redirect()`) are copied first.
 */
function withRateLimitHeaders(
  response: Response,
  result: RateLimitResult,
  options: RateLimitHeaderOptions | undefined,
): Response {
  try {
    mergeRateLimitHeaders(response.headers, result, options)
    return response
  } catch (error) {
    if (!(error instanceof TypeError)) throw error
    const copy = new Response(response.body, response)
    mergeRateLimitHeaders(copy.headers, result, options)
    return copy
  }
}
