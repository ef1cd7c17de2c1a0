/**
 * The one error class of @api-blocks/redis. Every failure of a store operation rejects with a
 * {@link RedisStoreError}: the client's own error (a closed connection, a timeout, a server
 * error) is its `cause`. The idempotency middleware answers any store failure with 503 and runs
 * nothing; the rate limiter fails open or closed as configured.
 *
 * @module
 */
import { ProblemError, problems } from '@api-blocks/problem-details'

/**
 * Why a store operation failed. Stable: switch on it in logs and metrics.
 *
 * @example
 * ```ts
 * const reason: RedisStoreErrorReason = 'command_failed'
 * metrics.increment(`redis.store.${reason}`)
 * ```
 */
export type RedisStoreErrorReason =
  /** The client rejected the script call: not connected, a timeout, a server error. See `cause`. */
  | 'command_failed'
  /** The script answered something no version of it answers: a key written by someone else. */
  | 'unexpected_reply'

const BRAND: unique symbol = Symbol.for('api-blocks.redis-store-error') as never

/**
 * A failed Redis store operation. It is a {@link ProblemError} (503 `service-unavailable`), so
 * `errorToProblemResponse` and the adapters answer it as such. The problem's `detail` names the
 * store and the operation only; the client's error, which may carry server text, stays in
 * `cause` for your logs.
 *
 * `instanceof` works across duplicate installs of this package: the check is a `Symbol.for`
 * brand, as undici does.
 *
 * @example
 * ```ts
 * try {
 *   await store.claim(key, claim)
 * } catch (error) {
 *   if (error instanceof RedisStoreError) console.error(error.reason, error.operation, error.cause)
 *   throw error
 * }
 * ```
 */
export class RedisStoreError extends ProblemError {
  /** Why the operation failed. */
  readonly reason: RedisStoreErrorReason
  /** The store operation that failed, e.g. `idempotency.claim` or `rate-limit.consume`. */
  readonly operation: string

  constructor(
    reason: RedisStoreErrorReason,
    operation: string,
    detail: string,
    options?: ErrorOptions,
  ) {
    super(problems.serviceUnavailable.create({ detail }), options)
    this.name = 'RedisStoreError'
    this.reason = reason
    this.operation = operation
    Object.defineProperty(this, BRAND, { value: true })
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && BRAND in value
  }
}
