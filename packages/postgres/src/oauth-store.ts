/**
 * `OAuthStore` of `@api-blocks/oauth` on PostgreSQL: one statement per operation (one round
 * trip, atomic without a transaction), races decided under row locks, expiry decided by the
 * `now` passed in, and `purgeExpired` to delete what is past retention.
 *
 * @module
 */
import type {
  ActiveToken,
  CodeRecord,
  ConsumeCodeResult,
  FamilyRecord,
  InteractionRecord,
  OAuthStore,
  RotateRefreshOptions,
  RotateRefreshResult,
  TokenRecord,
} from '@api-blocks/oauth'
import { driverError, PostgresStoreError } from './error.ts'
import type { SweepOptions } from './idempotency-store.ts'
import { tableNames } from './internal/names.ts'
import {
  codeOf,
  codeParams,
  familyOf,
  familyParams,
  finite,
  interactionOf,
  interactionParams,
  RowError,
  tokenOf,
  tokensParam,
} from './internal/oauth-rows.ts'
import type { OAuthStatementName } from './internal/oauth-sql.ts'
import { oauthStatements } from './internal/oauth-sql.ts'
import type { PostgresTableOptions } from './migrations.ts'
import type { Queryable } from './queryable.ts'

/**
 * Options of {@link PostgresOAuthStore}: the connection and where `migrate` put the tables.
 *
 * @example
 * ```ts
 * const options: PostgresOAuthStoreOptions = { db: pool, schema: 'auth' }
 * const store = new PostgresOAuthStore(options)
 * ```
 */
export interface PostgresOAuthStoreOptions extends PostgresTableOptions {
  /**
   * A `pg.Pool`, a `pg.Client`, a PGlite, or anything with `query(text, params)`. Bound the
   * time a statement may take in its configuration (`statement_timeout`, `query_timeout`,
   * `connectionTimeoutMillis` of a `pg.Pool`): the store adds no timeout of its own, and a row
   * lock held by a stuck statement would otherwise hold up the calls that race for it.
   */
  db: Queryable
}

type Row = Record<string, unknown>

/** How many times a statement runs at most when it fails as a serialization failure or deadlock. */
const ATTEMPTS = 5
/**
 * SQLSTATEs after which a statement run on its own (its own implicit transaction) was rolled
 * back whole and may simply run again: `40001` serialization_failure (REPEATABLE READ or
 * SERIALIZABLE as the server's or role's default), `40P01` deadlock_detected.
 */
const RETRYABLE = new Set(['40001', '40P01'])

/**
 * An {@link OAuthStore} on PostgreSQL, on `pg` or PGlite alike. Passes
 * `runOAuthStoreConformance` on a real server (with a pool of several connections) and on
 * PGlite. Run {@link migrate} first, with the same `schema` and `tablePrefix`.
 *
 * - **One statement per operation**, so one round trip and no transaction to manage: a pool may
 *   run each call on any connection.
 * - **Races** are decided under the lock of the row they are about, under READ COMMITTED (the
 *   default of PostgreSQL; with REPEATABLE READ or SERIALIZABLE as the default, the losers of a
 *   race fail with a serialization failure, and the store runs their statement again, up to 5
 *   times, so they answer as under READ COMMITTED):
 *   `consumeCode` and `rotateRefresh` lock the code or the token (and its family) with
 *   `SELECT … FOR UPDATE` in a CTE and decide from the row as it is once locked, then write
 *   in the same statement (a reused refresh token revokes its family there);
 *   `takeInteraction` is a `DELETE … RETURNING`; `issue`, `revokeFamily` and `remember` are
 *   `INSERT … ON CONFLICT … DO UPDATE` on one row per family or key, so `issue` answers
 *   `revoked` for a family revoked before it existed and a concurrent `revokeFamily` cannot
 *   slip between its check and its write.
 * - **Nothing secret is stored**: codes and tokens are keyed by the hashes the server passes.
 * - **Expiry by a purge**: past its time a record is ignored by every operation at once, and
 *   deleted by {@link PostgresOAuthStore.purgeExpired}: run it periodically.
 * - **Failures** reject with a {@link PostgresStoreError} (`NOT_MIGRATED` when the tables are
 *   missing); the authorisation server answers them as a server error and issues nothing.
 *
 * @example
 * ```ts
 * import pg from 'pg'
 * import { createAuthorizationServer } from '@api-blocks/oauth'
 * import { migrate, PostgresOAuthStore } from '@api-blocks/postgres'
 *
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, statement_timeout: 1_000 })
 * await migrate(pool)
 * const store = new PostgresOAuthStore({ db: pool })
 * setInterval(() => store.purgeExpired(Date.now() - 60_000).catch(console.error), 60_000).unref()
 * const server = createAuthorizationServer({ issuer, clients, interactionUrl, store })
 * ```
 */
export class PostgresOAuthStore implements OAuthStore {
  /** The connection the store runs its statements on. */
  readonly db: Queryable
  readonly #sql: Readonly<Record<OAuthStatementName, string>>
  readonly #tables: PostgresTableOptions
  /** Set by {@link PostgresOAuthStore.withDb}: a statement failing there is never run again. */
  #inTransaction = false

  constructor(options: PostgresOAuthStoreOptions) {
    const { db } = options
    if (typeof db?.query !== 'function') {
      throw new TypeError('PostgresOAuthStore: db must have query(text, params) (pg, PGlite)')
    }
    this.db = db
    this.#sql = oauthStatements(tableNames(options))
    const { schema, tablePrefix } = options
    this.#tables = {
      ...(schema === undefined ? {} : { schema }),
      ...(tablePrefix === undefined ? {} : { tablePrefix }),
    }
  }

  /**
   * The same store (same tables, same statements) running on `db`: typically the client of an
   * open transaction, so that, say, a grant is revoked together with the caller's own writes
   * (deleting a user and revoking their families). Every call on it is still one statement.
   * The transaction must be READ COMMITTED (PostgreSQL's default): under REPEATABLE READ or
   * SERIALIZABLE a call that loses a race fails with a serialization failure (SQLSTATE 40001,
   * rejected as `QUERY_FAILED`), and, since the transaction is then aborted, this store never
   * runs it again: only the caller can retry the transaction.
   *
   * @example
   * ```ts
   * const client = await pool.connect()
   * await client.query('BEGIN')
   * await client.query('DELETE FROM users WHERE id = $1', [userId])
   * for (const familyId of familyIds) await store.withDb(client).revokeFamily(familyId, now, now + DAY)
   * await client.query('COMMIT')
   * client.release()
   * ```
   */
  withDb(db: Queryable): PostgresOAuthStore {
    if (typeof db?.query !== 'function') {
      throw new TypeError('PostgresOAuthStore.withDb: db must have query(text, params)')
    }
    const store = new PostgresOAuthStore({ ...this.#tables, db })
    store.#inTransaction = true
    return store
  }

  async saveInteraction(interaction: InteractionRecord): Promise<void> {
    await this.#query('saveInteraction', interactionParams(interaction))
  }

  async findInteraction(id: string, now: number): Promise<InteractionRecord | undefined> {
    const rows = await this.#query('findInteraction', [id, finite(now, 'now')])
    return this.#map('findInteraction', rows[0], interactionOf)
  }

  async takeInteraction(id: string, now: number): Promise<InteractionRecord | undefined> {
    const rows = await this.#query('takeInteraction', [id, finite(now, 'now')])
    return this.#map('takeInteraction', rows[0], interactionOf)
  }

  async saveCode(code: CodeRecord): Promise<void> {
    await this.#query('saveCode', codeParams(code))
  }

  async consumeCode(codeHash: string, now: number): Promise<ConsumeCodeResult> {
    const rows = await this.#query('consumeCode', [codeHash, finite(now, 'now')])
    const row = rows[0]
    if (row === undefined) return { state: 'absent' }
    const code = this.#map('consumeCode', row, codeOf) as CodeRecord
    return { state: row['fresh'] === true ? 'consumed' : 'replayed', code }
  }

  async issue(
    family: FamilyRecord,
    tokens: readonly TokenRecord[],
    now: number,
  ): Promise<'issued' | 'revoked'> {
    const params = [...familyParams(family), tokensParam(tokens), finite(now, 'now')]
    const rows = await this.#query('issue', params)
    const issued = rows[0]?.['issued']
    if (typeof issued !== 'boolean') throw this.#unexpected('issue', 'issued')
    return issued ? 'issued' : 'revoked'
  }

  async findToken(
    familyId: string,
    tokenHash: string,
    now: number,
  ): Promise<ActiveToken | undefined> {
    const rows = await this.#query('findToken', [familyId, tokenHash, finite(now, 'now')])
    return this.#map('findToken', rows[0], (row) => ({
      token: tokenOf(row),
      family: familyOf(row),
    }))
  }

  async rotateRefresh(
    familyId: string,
    tokenHash: string,
    next: readonly TokenRecord[],
    now: number,
    options: RotateRefreshOptions,
  ): Promise<RotateRefreshResult> {
    const params = [
      familyId,
      tokenHash,
      tokensParam(next),
      finite(now, 'now'),
      finite(options.graceMs, 'graceMs'),
    ]
    const row = (await this.#query('rotateRefresh', params))[0]
    if (row === undefined) return { state: 'absent' }
    const state = row['state']
    switch (state) {
      case 'absent':
        return { state }
      case 'rotated':
      case 'reused':
        return { state, family: this.#map('rotateRefresh', row, familyOf) as FamilyRecord }
      case 'reused-in-grace':
      case 'revoked':
      case 'expired':
        return { state }
      default:
        throw this.#unexpected('rotateRefresh', 'state')
    }
  }

  async revokeToken(familyId: string, tokenHash: string, now: number): Promise<void> {
    await this.#query('revokeToken', [familyId, tokenHash, finite(now, 'now')])
  }

  async revokeFamily(familyId: string, now: number, retainUntil: number): Promise<void> {
    await this.#query('revokeFamily', [
      familyId,
      finite(now, 'now'),
      finite(retainUntil, 'retainUntil'),
    ])
  }

  async remember(key: string, expiresAt: number, now: number): Promise<boolean> {
    const rows = await this.#query('remember', [
      key,
      finite(expiresAt, 'expiresAt'),
      finite(now, 'now'),
    ])
    return rows.length === 1
  }

  /**
   * Deletes what no operation will read again at `now`: interactions and codes (consumed or
   * not) past their `expiresAt`, tokens past theirs (rotated refresh tokens are kept until
   * then, for reuse detection), families past their end and revocation marks past their
   * `retainUntil`, replay-cache keys past theirs. Each batch is one statement deleting up to
   * `batchSize` rows of each table; it stops when a batch deletes less than that, or after
   * `maxBatches`, and returns how many rows it deleted. Operations never need it (they ignore
   * what is expired); it keeps the tables small. Run it periodically, e.g. every minute from
   * each instance (concurrent purges skip each other's rows), with a `now` a little behind your
   * clock (`Date.now() - 60_000`) so that an instance whose clock runs behind never sees a
   * record vanish before it expires on its own clock.
   *
   * @example
   * ```ts
   * const timer = setInterval(() => {
   *   store.purgeExpired(Date.now() - 60_000).catch((error) => console.error('purge failed', error))
   * }, 60_000)
   * timer.unref()
   * ```
   */
  async purgeExpired(now: number, options: SweepOptions = {}): Promise<number> {
    const { batchSize = 1000, maxBatches = 100 } = options
    if (!Number.isSafeInteger(batchSize) || batchSize < 1) {
      throw new RangeError('purgeExpired: batchSize must be a whole number >= 1')
    }
    if (!Number.isSafeInteger(maxBatches) || maxBatches < 1) {
      throw new RangeError('purgeExpired: maxBatches must be a whole number >= 1')
    }
    finite(now, 'now')
    let total = 0
    for (let batch = 0; batch < maxBatches; batch++) {
      const row = (await this.#query('purge', [now, batchSize]))[0] ?? {}
      const counts = Object.values(row).map(Number)
      total += counts.reduce((sum, count) => sum + count, 0)
      if (counts.every((count) => count < batchSize)) break
    }
    return total
  }

  /**
   * Runs the operation's statement. Outside a caller's transaction a statement that failed as a
   * serialization failure or a deadlock rolled back whole, so it runs again (up to
   * {@link ATTEMPTS} times in all): on a server whose default isolation is REPEATABLE READ or
   * SERIALIZABLE, the losers of a race then see the winner's write and answer `replayed` or
   * `reused` (revoking the family) instead of failing. Inside a caller's transaction
   * (`withDb`) the transaction is aborted and only its owner can run it again.
   */
  async #query(operation: OAuthStatementName, params: unknown[]): Promise<Row[]> {
    for (let attempt = 1; ; attempt++) {
      try {
        return (await this.db.query(this.#sql[operation], params)).rows as Row[]
      } catch (cause) {
        const code = (cause as { code?: unknown } | null)?.code
        const retry = !this.#inTransaction && attempt < ATTEMPTS && RETRYABLE.has(String(code))
        if (!retry) {
          throw driverError(`oauth.${operation === 'purge' ? 'purgeExpired' : operation}`, cause)
        }
      }
    }
  }

  #map<T>(operation: string, row: Row | undefined, map: (row: Row) => T): T | undefined {
    if (row === undefined) return undefined
    try {
      return map(row)
    } catch (error) {
      if (error instanceof RowError) throw this.#unexpected(operation, error.message)
      throw error
    }
  }

  #unexpected(operation: string, what: string): PostgresStoreError {
    return new PostgresStoreError(
      'UNEXPECTED_ROW',
      `oauth.${operation}`,
      `The PostgreSQL OAuth store read an unexpected row (${operation}: ${what}).`,
    )
  }
}
