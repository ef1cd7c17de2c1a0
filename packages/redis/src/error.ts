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
 * What went wrong, in the one spelling of every api-blocks code (UPPER_SNAKE_CASE). Stable:
 * switch on it in logs and metrics.
 *
 * @example
 * ```ts
 * const code: RedisStoreErrorCode = 'COMMAND_FAILED'
 * metrics.increment(`redis.store.${code}`)
 * ```
 */
export type RedisStoreErrorCode =
  /** The client rejected the script call: not connected, a timeout, a server error. See `cause`. */
  | 'COMMAND_FAILED'
  /** The script answered something no version of it answers: a key written by someone else. */
  | 'UNEXPECTED_REPLY'

/**
 * A failed Redis store operation. It is an `ApiBlocksError` (through `ProblemError`) answering
 * 503 `service-unavailable`, so `errorToProblemResponse` and the adapters answer it as such, and
 * `instanceof` holds across duplicate installs of this package. The problem's `detail` names
 * the store and the operation only; the client's error, which may carry server text, stays in
 * `cause` for your logs.
 *
 * @example
 * ```ts
 * try {
 *   await store.claim(key, claim)
 * } catch (error) {
 *   if (error instanceof RedisStoreError) console.error(error.code, error.operation, error.cause)
 *   throw error
 * }
 * ```
 */
export class RedisStoreError extends ProblemError {
  static override readonly kind: string = 'redis.RedisStoreError'
  /** What went wrong (see {@link RedisStoreErrorCode}). */
  declare readonly code: RedisStoreErrorCode
  /** The store operation that failed, e.g. `idempotency.claim` or `rate-limit.consume`. */
  readonly operation: string

  constructor(
    code: RedisStoreErrorCode,
    operation: string,
    detail: string,
    options?: ErrorOptions,
  ) {
    super(problems.serviceUnavailable.create({ detail }), { ...options, code })
    this.operation = operation
  }
}
