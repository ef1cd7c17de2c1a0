/**
 * What the stores and `migrate` need from a PostgreSQL connection, as a structural interface:
 * run one parameterised statement and get its rows. `pg.Pool`, `pg.Client` and PGlite satisfy
 * it unchanged, so the same code runs on a server and in-process.
 *
 * @module
 */

/**
 * Runs one SQL statement with `$1`, `$2`, … parameters and resolves with its rows.
 * `pg.Pool`, `pg.Client` and `PGlite` all satisfy it.
 *
 * Every store operation is one call, one statement, so a pool may run each on any of its
 * connections: nothing relies on a session (no `BEGIN … COMMIT` across calls, no session
 * lock).
 *
 * @example
 * ```ts
 * import pg from 'pg'
 * import { PGlite } from '@electric-sql/pglite'
 *
 * const onServer: Queryable = new pg.Pool({ connectionString: process.env.DATABASE_URL })
 * const inProcess: Queryable = new PGlite()
 * ```
 */
export interface Queryable {
  query(text: string, params?: unknown[]): Promise<{ rows: unknown[] }>
}
