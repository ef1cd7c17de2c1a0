/**
 * The Fetch layer: `rateLimit()` middleware and the 429 response it answers.
 *
 * @module
 */
import type { Middleware, StoreBreakerOptions } from '@api-blocks/core'
import { storeGuard } from '@api-blocks/core'
import { errorResponse } from '@api-blocks/http'
import type { ProblemResponseOptions } from '@api-blocks/problem-details'
import { problems, toProblemResponse } from '@api-blocks/problem-details'
import type { RateLimitErrorCode } from './error.ts'
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
 * What the middleware reports through `onEvent`. Each event carries the code of the
 * `RateLimitError` it stands for, so logs and metrics can count by code.
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
  | {
      readonly type: 'rejected'
      readonly code: Extract<RateLimitErrorCode, 'QUOTA_EXCEEDED'>
      readonly key: string
      readonly result: RateLimitResult
    }
  /** The store failed; `error` is the store's error, `action` what the middleware did. */
  | {
      readonly type: 'store-error'
      readonly code: Extract<RateLimitErrorCode, 'STORE_UNAVAILABLE'>
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
 *   key: (request) => rateLimitKey(request),
 *   onStoreError: 'fail-closed',
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
   * What happens when the store fails. `fail-open` (the default) lets the request through
   * without rate-limit fields: a limiter that is down does not take the API down with it.
   * `fail-closed` answers 503 `service-unavailable`. Never a 429: the client did nothing
   * wrong. Either way the failure is reported (see `onEvent`).
   */
  onStoreError?: 'fail-open' | 'fail-closed'
  /** Units a request costs (default 1): a whole number >= 0, or a function of the request. */
  cost?: number | ((request: Request) => number | Promise<number>)
  /** Milliseconds since the epoch (default `Date.now`). */
  clock?: () => number
  /** Which rate-limit fields to write (defaults: `RateLimit-*` and `X-RateLimit-*`). */
  headers?: RateLimitHeaderOptions
  /** Problem serialisation options of the 429 and the 503 (the `type` base, the language). */
  problem?: RateLimitProblemOptions
  /**
   * The longest wait for the store, in milliseconds (default 200). A store that has not
   * answered by then counts as failed: the request is handled as `onStoreError` says (it
   * passes, by default) and the failure is reported with a `StoreGuardError` of
   * `@api-blocks/core` (`STORE_TIMEOUT`) as its `error`. A healthy Redis answers within a
   * millisecond; this bounds what a paused or unreachable one costs each request.
   */
  storeTimeoutMs?: number
  /**
   * The circuit breaker in front of the store (default `{ failureThreshold: 5, cooldownMs:
   * 1000 }`): after that many failures in a row the store is not called for `cooldownMs`, and
   * every request is handled as `onStoreError` says at once (reported with `STORE_CIRCUIT_OPEN`);
   * then one request probes it. `false`: every request tries the store (and waits up to
   * `storeTimeoutMs`).
   */
  storeBreaker?: StoreBreakerOptions | false
  /**
   * Observes rejections and store errors. Errors thrown here are ignored. Without it, store
   * errors are written with `console.error`, at most once a minute (by `clock`) per middleware,
   * the first error of the minute in full and a count of the others; rejections are not
   * reported.
   */
  onEvent?: (event: RateLimitEvent) => void
}

/** The default `storeTimeoutMs`. */
const DEFAULT_STORE_TIMEOUT_MS = 200

/** How often, at most, the default report writes a store error to the console. */
const STORE_ERROR_REPORT_INTERVAL_MS = 60_000

/**
 * The report when no `onEvent` is given: a failing store must not go unnoticed (fail-open
 * hides it from clients), but a store that is down fails every request, so one line a minute.
 */
function consoleStoreErrorReport(clock: () => number): (event: RateLimitEvent) => void {
  let nextReportAt = Number.NEGATIVE_INFINITY
  let unreported = 0
  return (event) => {
    if (event.type !== 'store-error') return
    const now = clock()
    if (now < nextReportAt) {
      unreported++
      return
    }
    nextReportAt = now + STORE_ERROR_REPORT_INTERVAL_MS
    const others = unreported === 0 ? '' : ` (${unreported} more since the last report, not shown)`
    unreported = 0
    const answer =
      event.action === 'fail-open'
        ? 'requests pass unlimited (fail-open)'
        : 'requests get 503 (fail-closed)'
    console.error(
      `@api-blocks/rate-limit: the rate-limit store failed, ${answer}${others}. At most one report a minute; pass onEvent to rateLimit() to report store errors yourself.`,
      event.error,
    )
  }
}

/**
 * Fetch middleware that rate-limits requests with a GCRA over several policies. A request
 * that every policy allows is charged and passes, and its response gets the rate-limit fields
 * (merged, never overwriting fields an inner layer set). What the handler throws is answered
 * as its problem (`errorResponse` of `@api-blocks/http`: the options and `onError` of
 * `requestId()`) and keeps the fields too. A denied request is answered 429 with the
 * `quota-exceeded` problem and is not charged. When the store fails or does not answer within
 * `storeTimeoutMs`, the request passes (`onStoreError: 'fail-open'`, the default) and the
 * failure is reported; while the store is known to be down (the breaker is open), at once.
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
 * })
 * const response = await limit(new Request('https://api.example/v1/orders'), async () => Response.json([]))
 * ```
 */
export function rateLimit(options: RateLimitOptions): Middleware {
  const { onStoreError = 'fail-open', cost = 1, headers: headerOptions, problem } = options
  if (onStoreError !== 'fail-open' && onStoreError !== 'fail-closed') {
    throw new TypeError("rateLimit(): onStoreError must be 'fail-open' or 'fail-closed'")
  }
  if (typeof options.key !== 'function') throw new TypeError('rateLimit(): key must be a function')
  const clock = options.clock ?? Date.now
  // The limiter is in front of every route: whatever the store does, a request waits for it
  // at most storeTimeoutMs, and not at all while the breaker knows it is down.
  const guard = storeGuard({
    timeoutMs: options.storeTimeoutMs ?? DEFAULT_STORE_TIMEOUT_MS,
    breaker: options.storeBreaker ?? {},
    clock,
  })
  const { store } = options
  const guarded: RateLimitStore = {
    consume: (check) => guard.run(() => store.consume(check)),
    reset: (key) => guard.run(() => store.reset(key)),
  }
  const limiter = createRateLimiter({ store: guarded, policies: options.policies, clock })
  const onEvent = options.onEvent ?? consoleStoreErrorReport(clock)
  const emit = (event: RateLimitEvent): void => {
    try {
      onEvent(event)
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
      if (!(error instanceof RateLimitError) || error.code !== 'STORE_UNAVAILABLE') throw error
      emit({
        type: 'store-error',
        code: 'STORE_UNAVAILABLE',
        key,
        error: error.cause,
        action: onStoreError,
      })
      if (onStoreError === 'fail-open') return next(request)
      // RFC 9110 §10.2.3: when the store may be back (the breaker's cooldown, at least 1 s).
      return toProblemResponse(error.toProblem(), {
        ...problem,
        request,
        headers: { 'retry-after': String(guard.retryAfterSeconds()) },
      })
    }
    if (!result.allowed) {
      emit({ type: 'rejected', code: 'QUOTA_EXCEEDED', key, result })
      return rateLimitedResponse(result, {
        ...problem,
        request,
        ...(headerOptions === undefined ? {} : { headers: headerOptions }),
      })
    }
    let response: Response
    try {
      response = await next(request)
    } catch (error) {
      // The request was charged, so its answer reports the numbers even when the handler threw:
      // answer the error here, as errorBoundary() would, and add the fields to that.
      response = errorResponse(error, request)
    }
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
