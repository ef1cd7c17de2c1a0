/**
 * The retry policy of docs/spec.md §3.1: what follows one delivery attempt. 2xx succeeds; a 4xx
 * other than 429 fails for good (410 Gone also disables the endpoint); 429, 5xx, a timeout or a
 * connection error is retried after `min(base × 2^attempt, max) × U(0.5, 1.5)` (or a fixed
 * schedule's step times the same factor), a `Retry-After` on a 429 honoured within a cap; at the
 * maximum attempt the delivery is dead-lettered. Time and randomness are injected, so a test
 * asserts the exact delays.
 *
 * @module
 */
import type { AttemptResult } from './attempt.ts'

/**
 * What follows an attempt: the delivery `succeeded`, `failed` for good (`disableEndpoint` after
 * a 410 Gone), is `dead` (retries exhausted), or is `pending` again, due in `delayMs`.
 *
 * @example
 * ```ts
 * const decision: RetryDecision = { status: 'pending', delayMs: 60_000 }
 * ```
 */
export type RetryDecision =
  | { status: 'succeeded' }
  | { status: 'failed'; disableEndpoint: boolean }
  | { status: 'dead' }
  | { status: 'pending'; delayMs: number }

/**
 * Decides what follows a delivery attempt. Pure: no I/O, no clock.
 *
 * @example
 * ```ts
 * const policy: RetryPolicy = createRetryPolicy()
 * const next = policy.decide({ kind: 'failure', failure: 'timeout', message: 'deadline', latencyMs: 10_000 }, 0)
 * ```
 */
export interface RetryPolicy {
  /**
   * What follows `result`, the outcome of attempt number `attempt` (0 for the first).
   * {@link RetryDecision}'s `delayMs` counts from the end of that attempt.
   */
  decide(result: AttemptResult, attempt: number): RetryDecision
  /** How many attempts a delivery gets before it is dead-lettered. */
  readonly maxAttempts: number
}

/**
 * Options of {@link createRetryPolicy}. With neither `baseMs` nor `maxMs`, the delays are the
 * `schedule` (default {@link retrySchedules}`.typical`); with either, they grow exponentially.
 *
 * @example
 * ```ts
 * const fast: RetryPolicyOptions = { baseMs: 100, maxMs: 2_000, maxAttempts: 5 }
 * ```
 */
export interface RetryPolicyOptions {
  /** The first retry's delay before jitter, in milliseconds; each retry doubles it (default 60,000 when `maxMs` is given). */
  baseMs?: number
  /** The longest delay before jitter, in milliseconds (default 86,400,000 when `baseMs` is given). */
  maxMs?: number
  /**
   * Attempts before the delivery is dead-lettered, the first included. Default: one more than
   * the schedule's length (7 for the typical schedule), or 7 with `baseMs`/`maxMs`.
   */
  maxAttempts?: number
  /**
   * The delay before each retry, in milliseconds: `schedule[0]` after the first attempt fails,
   * `schedule[1]` after the second, and so on; its last step repeats if `maxAttempts` asks for
   * more. Ignored when `baseMs` or `maxMs` is given.
   */
  schedule?: readonly number[]
  /**
   * The longest `Retry-After` of a 429 honoured, in milliseconds (default 3,600,000, one hour):
   * a longer one waits this long, so a receiver cannot park a delivery for days in one answer.
   */
  retryAfterMaxMs?: number
  /** A number in [0, 1) (default `Math.random`): the jitter factor is `0.5 + random()`. */
  random?: () => number
}

const MINUTE = 60_000
const HOUR = 60 * MINUTE

/**
 * Preset schedules for {@link RetryPolicyOptions.schedule}: the delay before each retry.
 * `typical` is the schedule docs/spec.md §3.1 names: at once, then after 1 minute, 10
 * minutes, 1 hour, 6 hours, 12 hours and 24 hours (7 attempts over about two days, before
 * jitter), then dead letter. It is the default.
 *
 * @example
 * ```ts
 * const policy = createRetryPolicy({ schedule: retrySchedules.typical })
 * console.log(policy.maxAttempts) // 7
 * ```
 */
export const retrySchedules: { readonly typical: readonly number[] } = Object.freeze({
  typical: Object.freeze([MINUTE, 10 * MINUTE, HOUR, 6 * HOUR, 12 * HOUR, 24 * HOUR]),
})

/** The largest delay accepted anywhere: 30 days (beyond it a number is a unit mistake). */
const MAX_DELAY_MS = 30 * 24 * HOUR

function checkDelay(name: string, value: number, allowZero: boolean): void {
  if (
    !Number.isSafeInteger(value) ||
    value > MAX_DELAY_MS ||
    (allowZero ? value < 0 : value <= 0)
  ) {
    throw new RangeError(
      `createRetryPolicy(): ${name} must be an integer number of milliseconds in ${allowZero ? '[0' : '(0'}, ${MAX_DELAY_MS}], got ${value}`,
    )
  }
}

/**
 * Makes the retry policy of docs/spec.md §3.1.
 *
 * | outcome of attempt `a` | decision |
 * |---|---|
 * | 200–299 | `succeeded` |
 * | 410 | `failed`, `disableEndpoint: true` |
 * | other 400–499 except 429 | `failed` |
 * | 300–399, 429, 500–599 (and any other status), `timeout`, `connection` | `pending` with the delay below; `dead` when `a + 1 >= maxAttempts` |
 * | `address-refused` | `failed`: the SSRF guard refused the address at connect time; retrying reaches the same address |
 * | `invalid-delivery` | `failed`: nothing was sent, the delivery cannot be signed (a bad `webhook-id` or secret); every retry would fail the same way |
 *
 * A 3xx is a failed attempt retried like a 5xx: redirects are never followed (a receiver could
 * point deliveries at another host), but the receiver may fix its URL, or its redirect may be
 * passing (a deploy, a maintenance page); Svix and Stripe retry them too.
 *
 * The delay after attempt `a` is `min(baseMs × 2^a, maxMs) × (0.5 + random())`, or with a
 * schedule `schedule[a] × (0.5 + random())`, rounded to a millisecond and kept within
 * `[0.5, 1.5]` times the step. A 429 with `Retry-After` (RFC 9110 §10.2.3) waits exactly that
 * long, at most `retryAfterMaxMs`, with no jitter: the receiver said when it can take more.
 *
 * @example
 * ```ts
 * import { createRetryPolicy } from '@api-blocks/webhooks'
 *
 * const policy = createRetryPolicy({ baseMs: 1_000, maxMs: 60_000, maxAttempts: 5, random: () => 0.5 })
 * const decision = policy.decide({ kind: 'response', status: 503, retryAfterMs: null, body: '', latencyMs: 5 }, 2)
 * console.log(decision) // { status: 'pending', delayMs: 4000 }
 * ```
 */
export function createRetryPolicy(options: RetryPolicyOptions = {}): RetryPolicy {
  const random = options.random ?? Math.random
  const exponential = options.baseMs !== undefined || options.maxMs !== undefined
  const baseMs = options.baseMs ?? MINUTE
  const maxMs = options.maxMs ?? 24 * HOUR
  const schedule = options.schedule ?? retrySchedules.typical
  const retryAfterMaxMs = options.retryAfterMaxMs ?? HOUR
  if (exponential) {
    checkDelay('baseMs', baseMs, false)
    checkDelay('maxMs', maxMs, false)
    if (maxMs < baseMs) {
      throw new RangeError(`createRetryPolicy(): maxMs (${maxMs}) is below baseMs (${baseMs})`)
    }
  } else {
    if (schedule.length === 0) throw new RangeError('createRetryPolicy(): schedule is empty')
    for (const step of schedule) checkDelay('every schedule step', step, true)
  }
  checkDelay('retryAfterMaxMs', retryAfterMaxMs, true)
  const maxAttempts = options.maxAttempts ?? (exponential ? 7 : schedule.length + 1)
  if (!Number.isSafeInteger(maxAttempts) || maxAttempts < 1) {
    throw new RangeError(
      `createRetryPolicy(): maxAttempts must be an integer >= 1, got ${maxAttempts}`,
    )
  }

  function step(attempt: number): number {
    if (!exponential) return schedule[Math.min(attempt, schedule.length - 1)]!
    // 2 ** attempt is Infinity past 1023; min() then keeps the cap, never NaN.
    return Math.min(baseMs * 2 ** attempt, maxMs)
  }

  function delay(attempt: number): number {
    const d = step(attempt)
    // random() is [0, 1); a factor outside [0.5, 1.5] (a bad random) is clamped, never NaN.
    const r = random()
    const factor = Number.isFinite(r) ? 0.5 + Math.min(Math.max(r, 0), 1) : 1
    return Math.min(Math.max(Math.round(d * factor), Math.ceil(d / 2)), Math.floor(d * 1.5))
  }

  function retry(attempt: number, fixedDelay: number | null): RetryDecision {
    if (attempt + 1 >= maxAttempts) return { status: 'dead' }
    return { status: 'pending', delayMs: fixedDelay ?? delay(attempt) }
  }

  return {
    maxAttempts,
    decide(result, attemptNumber) {
      // A negative, fractional or absurd attempt number is read as the nearest sensible one.
      const attempt = Number.isFinite(attemptNumber) ? Math.max(0, Math.floor(attemptNumber)) : 0
      if (result.kind === 'failure') {
        if (result.failure === 'address-refused' || result.failure === 'invalid-delivery')
          return { status: 'failed', disableEndpoint: false }
        return retry(attempt, null)
      }
      const { status } = result
      if (status >= 200 && status <= 299) return { status: 'succeeded' }
      if (status === 429) {
        const after = result.retryAfterMs
        const honoured =
          after !== null && Number.isFinite(after) && after >= 0
            ? Math.min(Math.ceil(after), retryAfterMaxMs)
            : null
        return retry(attempt, honoured)
      }
      if (status >= 400 && status <= 499) {
        return { status: 'failed', disableEndpoint: status === 410 }
      }
      return retry(attempt, null)
    },
  }
}
