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
 * Why an operation failed. Stable: switch on it in logs and metrics.
 *
 * @example
 * ```ts
 * const reason: PostgresStoreErrorReason = 'not_migrated'
 * if (reason === 'not_migrated') console.error('run migrate(db) at startup')
 * ```
 */
export type PostgresStoreErrorReason =
  /** The statement failed: connection lost, timeout, a constraint, a server error. See `cause`. */
  | 'query_failed'
  /** The schema or table does not exist (SQLSTATE 3F000 or 42P01): run `migrate(db)` first. */
  | 'not_migrated'
  /** A row came back that no version of this package writes (a table edited by hand). */
  | 'unexpected_row'

const BRAND: unique symbol = Symbol.for('api-blocks.postgres-store-error') as never

/**
 * A failed PostgreSQL store operation. It is a {@link ProblemError} (503
 * `service-unavailable`), so `errorToProblemResponse` and the adapters answer it as such. The
 * problem's `detail` names the operation only; the driver's error, which may quote row values,
 * stays in `cause` for your logs.
 *
 * `instanceof` works across duplicate installs of this package: the check is a `Symbol.for`
 * brand, as undici does.
 *
 * @example
 * ```ts
 * try {
 *   await store.claim(key, claim)
 * } catch (error) {
 *   if (error instanceof PostgresStoreError && error.reason === 'not_migrated') await migrate(db)
 *   throw error
 * }
 * ```
 */
export class PostgresStoreError extends ProblemError {
  /** Why the operation failed. */
  readonly reason: PostgresStoreErrorReason
  /** The operation that failed, e.g. `idempotency.claim` or `migrate`. */
  readonly operation: string

  constructor(
    reason: PostgresStoreErrorReason,
    operation: string,
    detail: string,
    options?: ErrorOptions,
  ) {
    super(problems.serviceUnavailable.create({ detail }), options)
    this.name = 'PostgresStoreError'
    this.reason = reason
    this.operation = operation
    Object.defineProperty(this, BRAND, { value: true })
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && BRAND in value
  }
}

/**
 * Wraps a driver error: `not_migrated` for a missing schema or table (SQLSTATE 3F000, 42P01),
 * else `query_failed`. Internal: the stores call it.
 */
export function driverError(operation: string, cause: unknown): PostgresStoreError {
  const code = (cause as { code?: unknown } | null)?.code
  if (code === '42P01' || code === '3F000') {
    return new PostgresStoreError(
      'not_migrated',
      operation,
      `The PostgreSQL tables of ${operation} do not exist: run migrate() first.`,
      { cause },
    )
  }
  return new PostgresStoreError(
    'query_failed',
    operation,
    `The PostgreSQL store failed (${operation}).`,
    {
      cause,
    },
  )
}
