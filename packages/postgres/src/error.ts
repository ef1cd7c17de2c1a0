/**
 * The one error class of @api-blocks/postgres. Every failure of a store operation or of
 * `migrate` rejects with a {@link PostgresStoreError}; the driver's error (with its SQLSTATE
 * `code`) is its `cause`. The idempotency middleware answers any store failure with 503 and
 * runs nothing.
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
 * const code: PostgresStoreErrorCode = 'NOT_MIGRATED'
 * if (code === 'NOT_MIGRATED') console.error('run migrate(db) at startup')
 * ```
 */
export type PostgresStoreErrorCode =
  /** The statement failed: connection lost, timeout, a constraint, a server error. See `cause`. */
  | 'QUERY_FAILED'
  /** The schema or table does not exist (SQLSTATE 3F000 or 42P01): run `migrate(db)` first. */
  | 'NOT_MIGRATED'
  /** A row came back that no version of this package writes (a table edited by hand). */
  | 'UNEXPECTED_ROW'

/**
 * A failed PostgreSQL store operation. It is an `ApiBlocksError` (through `ProblemError`)
 * answering 503 `service-unavailable`, so `errorToProblemResponse` and the adapters answer it
 * as such, and `instanceof` holds across duplicate installs of this package. The problem's
 * `detail` names the operation only; the driver's error, which may quote row values, stays in
 * `cause` for your logs.
 *
 * @example
 * ```ts
 * try {
 *   await store.claim(key, claim)
 * } catch (error) {
 *   if (error instanceof PostgresStoreError && error.code === 'NOT_MIGRATED') await migrate(db)
 *   throw error
 * }
 * ```
 */
export class PostgresStoreError extends ProblemError {
  static override readonly kind: string = 'postgres.PostgresStoreError'
  /** What went wrong (see {@link PostgresStoreErrorCode}). */
  declare readonly code: PostgresStoreErrorCode
  /** The operation that failed, e.g. `idempotency.claim` or `migrate`. */
  readonly operation: string

  constructor(
    code: PostgresStoreErrorCode,
    operation: string,
    detail: string,
    options?: ErrorOptions,
  ) {
    super(problems.serviceUnavailable.create({ detail }), { ...options, code })
    this.operation = operation
  }
}

/**
 * Wraps a driver error: `NOT_MIGRATED` for a missing schema or table (SQLSTATE 3F000, 42P01),
 * else `QUERY_FAILED`. Internal: the stores call it.
 */
export function driverError(operation: string, cause: unknown): PostgresStoreError {
  const code = (cause as { code?: unknown } | null)?.code
  if (code === '42P01' || code === '3F000') {
    return new PostgresStoreError(
      'NOT_MIGRATED',
      operation,
      `The PostgreSQL tables of ${operation} do not exist: run migrate() first.`,
      { cause },
    )
  }
  return new PostgresStoreError(
    'QUERY_FAILED',
    operation,
    `The PostgreSQL store failed (${operation}).`,
    {
      cause,
    },
  )
}
