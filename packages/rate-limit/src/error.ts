/**
 * The one error class of @api-blocks/rate-limit.
 *
 * @module
 */
import { ProblemError, problems } from '@api-blocks/problem-details'
import type { RateLimitResult } from './gcra.ts'

/**
 * Why a rate-limit error was raised. Stable: switch on it in logs and metrics.
 * - `store_unavailable`: the store rejected or threw (answered as 503 `service-unavailable`
 *   when failing closed; never as a 429).
 * - `quota_exceeded`: a check was denied and the caller chose to throw it (429
 *   `quota-exceeded` with `violated-policies`).
 *
 * @example
 * ```ts
 * if (error instanceof RateLimitError && error.reason === 'store_unavailable') metrics.storeDown++
 * ```
 */
export type RateLimitErrorReason = 'store_unavailable' | 'quota_exceeded'

const BRAND: unique symbol = Symbol.for('api-blocks.rate-limit-error') as never

/**
 * A rate-limit failure. It is a {@link ProblemError}, so adapters and `errorToProblemResponse`
 * answer it with its problem: 503 for `store_unavailable`, 429 for `quota_exceeded`.
 *
 * `instanceof` works across duplicate installs of this package: the check is a `Symbol.for`
 * brand, as undici does.
 *
 * @example
 * ```ts
 * const result = await limiter.check(key)
 * if (!result.allowed) throw RateLimitError.quotaExceeded(result)
 * ```
 */
export class RateLimitError extends ProblemError {
  /** Why the error was raised. */
  readonly reason: RateLimitErrorReason
  /** The denied check, for `quota_exceeded`. */
  readonly result: RateLimitResult | undefined

  constructor(
    reason: RateLimitErrorReason,
    detail: string,
    options?: ErrorOptions & { result?: RateLimitResult },
  ) {
    const problem =
      reason === 'quota_exceeded'
        ? problems.quotaExceeded.create({
            detail,
            'violated-policies': violatedPolicies(options?.result),
          })
        : problems.serviceUnavailable.create({ detail })
    super(problem, options)
    this.name = 'RateLimitError'
    this.reason = reason
    this.result = options?.result
    Object.defineProperty(this, BRAND, { value: true })
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
    return new RateLimitError('quota_exceeded', quotaExceededDetail(result), { result })
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && BRAND in value
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
