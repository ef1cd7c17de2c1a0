/**
 * The one error class of @api-blocks/rate-limit.
 *
 * @module
 */
import { ProblemError, problems } from '@api-blocks/problem-details'
import type { RateLimitResult } from './gcra.ts'

/**
 * The stable code of a {@link RateLimitError}, in the UPPER_SNAKE_CASE of every api-blocks
 * error code. Switch on it in logs and metrics.
 * - `QUOTA_EXCEEDED`: a check was denied and the caller chose to throw it (429
 *   `quota-exceeded` with `violated-policies`).
 * - `STORE_UNAVAILABLE`: the store rejected, threw or answered a malformed reply (503
 *   `service-unavailable` when failing closed; never a 429).
 *
 * @example
 * ```ts
 * if (error instanceof RateLimitError && error.code === 'STORE_UNAVAILABLE') metrics.storeDown++
 * ```
 */
export type RateLimitErrorCode = 'QUOTA_EXCEEDED' | 'STORE_UNAVAILABLE'

/**
 * Options of {@link RateLimitError}: the standard `cause`, and the denied check of a
 * `QUOTA_EXCEEDED` error.
 *
 * @example
 * ```ts
 * const options: RateLimitErrorOptions = { cause: new Error('ECONNREFUSED') }
 * ```
 */
export interface RateLimitErrorOptions extends ErrorOptions {
  /** The denied check (`QUOTA_EXCEEDED`): its violated policies name the problem's members. */
  result?: RateLimitResult
}

/**
 * A rate-limit failure. It is a `ProblemError` (and so an `ApiBlocksError`), so adapters and
 * `errorResponse` answer it with its problem: 429 `quota-exceeded` for `QUOTA_EXCEEDED`, 503
 * `service-unavailable` for `STORE_UNAVAILABLE`. `instanceof` holds across duplicate installs
 * (the error base of `@api-blocks/core` sees to it, by the class's `kind`).
 *
 * @example
 * ```ts
 * const result = await limiter.check(key)
 * if (!result.allowed) throw RateLimitError.quotaExceeded(result)
 * ```
 */
export class RateLimitError extends ProblemError {
  static override readonly kind: string = 'rate-limit.RateLimitError'
  /** Why the error was raised. */
  declare readonly code: RateLimitErrorCode
  /** The denied check, for `QUOTA_EXCEEDED`. */
  readonly result: RateLimitResult | undefined

  constructor(code: RateLimitErrorCode, detail: string, options: RateLimitErrorOptions = {}) {
    const { result, cause } = options
    const problem =
      code === 'QUOTA_EXCEEDED'
        ? problems.quotaExceeded.create({ detail, 'violated-policies': violatedPolicies(result) })
        : problems.serviceUnavailable.create({ detail })
    super(problem, { code, cause })
    this.result = result
  }

  /**
   * The 429 error of a denied check, naming its violated policies.
   *
   * @example
   * ```ts
   * if (!result.allowed) throw RateLimitError.quotaExceeded(result)
   * ```
   */
  static quotaExceeded(result: RateLimitResult): RateLimitError {
    return new RateLimitError('QUOTA_EXCEEDED', quotaExceededDetail(result), { result })
  }
}

/**
 * The names of the policies that refused a check, in configuration order.
 *
 * @example
 * ```ts
 * violatedPolicies(result) // ['burst']
 * ```
 */
export function violatedPolicies(result: RateLimitResult | undefined): string[] {
  return (result?.policies ?? []).filter((policy) => policy.violated).map((policy) => policy.name)
}

/**
 * A human `detail` for a denied check; names policies and numbers, never the client key.
 *
 * @example
 * ```ts
 * quotaExceededDetail(result) // 'Quota exceeded: "burst" (10 per 1 s). Retry in 1 s.'
 * ```
 */
export function quotaExceededDetail(result: RateLimitResult): string {
  const parts = result.policies
    .filter((policy) => policy.violated)
    .map((policy) => `"${policy.name}" (${policy.quota} per ${policy.windowSeconds} s)`)
  const wait = Number.isFinite(result.retryAfterSeconds)
    ? ` Retry in ${result.retryAfterSeconds} s.`
    : ' The request costs more than the quota allows; waiting will not help.'
  return `Quota exceeded: ${parts.join(', ')}.${wait}`
}
