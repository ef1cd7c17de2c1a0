/**
 * `IdempotencyStore` on PostgreSQL: one row per record, one statement per operation (so one
 * round trip, atomic per key without a transaction), expiry decided by the `now` passed in,
 * and `sweepExpired` to delete what is past retention.
 *
 * @module
 */
import type {
  IdempotencyCheckpoint,
  IdempotencyClaim,
  IdempotencyClaimResult,
  IdempotencyCompletion,
  IdempotencyStore,
  StoredResponse,
} from '@api-blocks/idempotency'
import { driverError, PostgresStoreError } from './error.ts'
import { qualified, tableNames } from './internal/names.ts'
import type { PostgresTableOptions } from './migrations.ts'
import type { Queryable } from './queryable.ts'

/**
 * Options of {@link PostgresIdempotencyStore}: the connection and where `migrate` put the
 * tables.
 *
 * @example
 * ```ts
 * const options: PostgresIdempotencyStoreOptions = { db: pool, schema: 'api' }
 * const store = new PostgresIdempotencyStore(options)
 * ```
 */
export interface PostgresIdempotencyStoreOptions extends PostgresTableOptions {
  /** A `pg.Pool`, a `pg.Client`, a PGlite, or anything with `query(text, params)`. */
  db: Queryable
}

/**
 * Options of {@link PostgresIdempotencyStore.sweepExpired}.
 *
 * @example
 * ```ts
 * const options: SweepOptions = { batchSize: 500, maxBatches: 20 }
 * await store.sweepExpired(Date.now() - 60_000, options)
 * ```
 */
export interface SweepOptions {
  /** Rows deleted per statement (default 1,000): each batch is one short transaction. */
  batchSize?: number
  /** Statements per call at most (default 100); the next call carries on. */
  maxBatches?: number
}

/** A row as the claim statement returns it (types as `pg` and PGlite parse them). */
interface ClaimRow {
  mine: boolean
  same: boolean
  state: string
  lease_expires_at: number | string
  recovery_point: string | null
  status: number | null
  headers: unknown
  body: Uint8Array | null
}

/** The statements, built once per store with the table's name. */
function statements(table: string) {
  // An absent record at $4: `ends_at <= now` (ends_at is the logical end; see migrations.ts).
  const absent = 'r.ends_at <= $4'
  // …or one that this claim takes over: resumable (lease over, not absent) with the same
  // fingerprint. Either way the claim writes its owner and lease.
  const taken = `(${absent} OR (r.state = 'claimed' AND r.lease_expires_at <= $4 AND r.fingerprint = EXCLUDED.fingerprint))`
  const unlessAbsent = (column: string, fresh: string) =>
    `${column} = CASE WHEN ${absent} THEN ${fresh} ELSE r.${column} END`
  return {
    /**
     * $1 key, $2 fingerprint, $3 owner, $4 now, $5 leaseExpiresAt. One INSERT … ON CONFLICT
     * … DO UPDATE: the conflicting row is locked, so concurrent claims of one key run one
     * after another. The update always happens (unchanged values when the key is held) so
     * that RETURNING gives the row as it now is, latest committed version included, and one
     * statement answers every case; a held key costs a rewrite of its row (usually a HOT
     * update) instead of a second round trip. Owner tokens are unique per execution (the
     * contract), so `owner = $3` afterwards means this call holds the claim.
     */
    claim: `INSERT INTO ${table} AS r (key, state, fingerprint, owner, lease_expires_at)
VALUES ($1, 'claimed', $2, $3, $5)
ON CONFLICT (key) DO UPDATE SET
  ${unlessAbsent('state', `'claimed'`)},
  ${unlessAbsent('fingerprint', 'EXCLUDED.fingerprint')},
  owner = CASE WHEN ${taken} THEN EXCLUDED.owner ELSE r.owner END,
  lease_expires_at = CASE WHEN ${taken} THEN EXCLUDED.lease_expires_at ELSE r.lease_expires_at END,
  ${unlessAbsent('expires_at', 'NULL')},
  ${unlessAbsent('recovery_point', 'NULL')},
  ${unlessAbsent('status', 'NULL')},
  ${unlessAbsent('headers', 'NULL')},
  ${unlessAbsent('body', 'NULL')}
RETURNING state = 'claimed' AND owner = $3 AND lease_expires_at = $5 AS mine,
  fingerprint = $2 AS same, state, lease_expires_at, recovery_point, status, headers,
  CASE WHEN state = 'completed' AND fingerprint = $2 THEN body END AS body`,
    /** $1 key, $2 owner, $3 now, $4 expiresAt, $5 status, $6 headers (JSON), $7 body. */
    complete: `UPDATE ${table} SET state = 'completed', expires_at = $4, recovery_point = NULL,
  status = $5, headers = $6::jsonb, body = $7
WHERE key = $1 AND state = 'claimed' AND owner = $2 AND lease_expires_at > $3
RETURNING 1 AS done`,
    /**
     * $1 key, $2 owner. Deletes the claim, or ends its lease when it has a recovery point;
     * the two conditions exclude each other, so at most one of the two applies.
     */
    release: `WITH deleted AS (
  DELETE FROM ${table}
  WHERE key = $1 AND state = 'claimed' AND owner = $2 AND recovery_point IS NULL
  RETURNING 1
), ended AS (
  UPDATE ${table} SET lease_expires_at = 0
  WHERE key = $1 AND state = 'claimed' AND owner = $2 AND recovery_point IS NOT NULL
  RETURNING 1
)
SELECT (SELECT count(*) FROM deleted) + (SELECT count(*) FROM ended) > 0 AS done`,
    /** $1 key, $2 owner, $3 now, $4 recovery point, $5 expiresAt. */
    checkpoint: `UPDATE ${table} SET recovery_point = $4, expires_at = $5
WHERE key = $1 AND state = 'claimed' AND owner = $2 AND lease_expires_at > $3
RETURNING 1 AS done`,
    /**
     * $1 now, $2 batch size. Rows being claimed right now are skipped (SKIP LOCKED), and the
     * outer condition is checked again on the row as it is when deleted, so a record a
     * concurrent claim just made live again is never deleted.
     */
    sweep: `WITH swept AS (
  DELETE FROM ${table}
  WHERE key IN (
    SELECT key FROM ${table} WHERE ends_at <= $1 ORDER BY ends_at LIMIT $2 FOR UPDATE SKIP LOCKED
  ) AND ends_at <= $1
  RETURNING 1
)
SELECT count(*)::integer AS swept FROM swept`,
  }
}

function finite(value: number, name: string): number {
  if (!Number.isFinite(value)) throw new TypeError(`${name} must be a finite number, got ${value}`)
  return value
}

function headersOf(value: unknown): StoredResponse['headers'] | undefined {
  // jsonb arrives parsed (pg and PGlite), or as text when a caller changed the type parser.
  let parsed: unknown = value
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value)
    } catch {
      return undefined
    }
  }
  if (
    !Array.isArray(parsed) ||
    !parsed.every(
      (pair): pair is [string, string] =>
        Array.isArray(pair) &&
        pair.length === 2 &&
        typeof pair[0] === 'string' &&
        typeof pair[1] === 'string',
    )
  ) {
    return undefined
  }
  return parsed.map(([name, value]) => [name, value] as const)
}

/**
 * An {@link IdempotencyStore} on PostgreSQL, on `pg` or PGlite alike. Passes
 * `runIdempotencyStoreConformance` on a real server and on PGlite. Run {@link migrate} first,
 * with the same `schema` and `tablePrefix`.
 *
 * - **One statement per operation**, so one round trip and no transaction: `claim` is one
 *   `INSERT … ON CONFLICT … DO UPDATE`, whose row lock orders concurrent claims of a key;
 *   `complete` and `checkpoint` are one `UPDATE … WHERE owner = $2 AND lease_expires_at >
 *   now`; `release` one statement of a `DELETE` and an `UPDATE` that exclude each other.
 * - **Time** is the `now` of each call, compared with `double precision` milliseconds.
 * - **Bodies** are `bytea`, header fields `jsonb`: stored and replayed byte for byte.
 * - **Expiry by a sweep**: a record past its end is ignored by every operation at once, and
 *   deleted by {@link PostgresIdempotencyStore.sweepExpired}: run it periodically.
 * - **Failures** reject with a {@link PostgresStoreError} (`NOT_MIGRATED` when the table is
 *   missing); the middleware answers 503 and runs nothing.
 *
 * @example
 * ```ts
 * import pg from 'pg'
 * import { idempotency } from '@api-blocks/idempotency'
 * import { migrate, PostgresIdempotencyStore } from '@api-blocks/postgres'
 *
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL })
 * await migrate(pool)
 * const store = new PostgresIdempotencyStore({ db: pool })
 * setInterval(() => store.sweepExpired(Date.now() - 60_000).catch(console.error), 60_000).unref()
 * const withIdempotency = idempotency({ store, scope: 'tenant-1' })
 * ```
 */
export class PostgresIdempotencyStore implements IdempotencyStore {
  /** The connection the store runs its statements on. */
  readonly db: Queryable
  /** The qualified, quoted name of the records table, e.g. `"public"."api_blocks_idempotency_records"`. */
  readonly table: string
  readonly #sql: ReturnType<typeof statements>
  readonly #tables: PostgresTableOptions

  constructor(options: PostgresIdempotencyStoreOptions) {
    const { db } = options
    if (typeof db?.query !== 'function') {
      throw new TypeError('PostgresIdempotencyStore: db must have query(text, params) (pg, PGlite)')
    }
    this.db = db
    this.table = qualified(tableNames(options), 'idempotency_records')
    this.#sql = statements(this.table)
    const { schema, tablePrefix } = options
    this.#tables = {
      ...(schema === undefined ? {} : { schema }),
      ...(tablePrefix === undefined ? {} : { tablePrefix }),
    }
  }

  /**
   * The same store (same table, same statements) running on `db`: typically the client of an
   * open transaction, so that an operation commits or rolls back with the caller's own
   * writes. Its use is `completeWith` of the idempotency context: the handler's insert and the
   * completed record in one transaction, so that a crash between the two cannot make a retry
   * execute again (docs/idempotency.md, "Completing in your transaction").
   *
   * @example
   * ```ts
   * const client = await pool.connect()
   * await client.query('BEGIN')
   * await client.query('INSERT INTO orders (id) VALUES ($1)', [id])
   * const response = await idempotencyContext(request)?.completeWith(answer, store.withDb(client))
   * await client.query('COMMIT')
   * client.release()
   * ```
   */
  withDb(db: Queryable): PostgresIdempotencyStore {
    if (typeof db?.query !== 'function') {
      throw new TypeError('PostgresIdempotencyStore.withDb: db must have query(text, params)')
    }
    return new PostgresIdempotencyStore({ ...this.#tables, db })
  }

  async claim(key: string, claim: IdempotencyClaim): Promise<IdempotencyClaimResult> {
    const { fingerprint, owner, leaseMs, now } = claim
    const rows = await this.#query('claim', this.#sql.claim, [
      key,
      fingerprint,
      owner,
      finite(now, 'now'),
      finite(now + leaseMs, 'now + leaseMs'),
    ])
    const row = rows[0] as ClaimRow | undefined
    if (row === undefined) throw this.#unexpected('claim', 'no row')
    if (row.mine) {
      return row.recovery_point === null
        ? { state: 'claimed' }
        : { state: 'claimed', recoveryPoint: row.recovery_point }
    }
    if (!row.same) return { state: 'mismatch' }
    if (row.state === 'claimed') {
      return { state: 'in-flight', leaseExpiresAt: Number(row.lease_expires_at) }
    }
    const headers = headersOf(row.headers)
    if (
      row.state !== 'completed' ||
      row.status === null ||
      headers === undefined ||
      !(row.body instanceof Uint8Array)
    ) {
      throw this.#unexpected('claim', 'a completed record without a response')
    }
    // A copy: the driver may hand out a view of a shared buffer (Node's Buffer pool).
    return {
      state: 'completed',
      response: { status: row.status, headers, body: new Uint8Array(row.body) },
    }
  }

  async complete(key: string, owner: string, completion: IdempotencyCompletion): Promise<boolean> {
    const { response, retentionMs, now } = completion
    const rows = await this.#query('complete', this.#sql.complete, [
      key,
      owner,
      finite(now, 'now'),
      finite(now + retentionMs, 'now + retentionMs'),
      response.status,
      JSON.stringify(response.headers),
      response.body,
    ])
    return rows.length === 1
  }

  async release(key: string, owner: string): Promise<boolean> {
    const rows = await this.#query('release', this.#sql.release, [key, owner])
    return (rows[0] as { done?: unknown } | undefined)?.done === true
  }

  async checkpoint(
    key: string,
    owner: string,
    checkpoint: IdempotencyCheckpoint,
  ): Promise<boolean> {
    const { recoveryPoint, retentionMs, now } = checkpoint
    const rows = await this.#query('checkpoint', this.#sql.checkpoint, [
      key,
      owner,
      finite(now, 'now'),
      recoveryPoint,
      finite(now + retentionMs, 'now + retentionMs'),
    ])
    return rows.length === 1
  }

  /**
   * Deletes the records that are logically absent at `now` (completed past retention, claims
   * whose lease ended without a checkpoint, resumable records past retention), in batches of
   * `batchSize` rows, each one short statement. Returns how many it deleted. Operations never
   * need it (they ignore an expired record); it keeps the table small. Run it periodically,
   * e.g. every minute from each instance (concurrent sweeps skip each other's rows), and pass
   * a `now` a little behind your clock (`Date.now() - 60_000`) so that an instance whose clock
   * runs behind never sees a record vanish before it expires on its own clock.
   *
   * @example
   * ```ts
   * const timer = setInterval(() => {
   *   store.sweepExpired(Date.now() - 60_000).catch((error) => console.error('sweep failed', error))
   * }, 60_000)
   * timer.unref()
   * ```
   */
  async sweepExpired(now: number, options: SweepOptions = {}): Promise<number> {
    const { batchSize = 1000, maxBatches = 100 } = options
    if (!Number.isSafeInteger(batchSize) || batchSize < 1) {
      throw new RangeError('sweepExpired: batchSize must be a whole number >= 1')
    }
    if (!Number.isSafeInteger(maxBatches) || maxBatches < 1) {
      throw new RangeError('sweepExpired: maxBatches must be a whole number >= 1')
    }
    finite(now, 'now')
    let total = 0
    for (let batch = 0; batch < maxBatches; batch++) {
      const rows = await this.#query('sweepExpired', this.#sql.sweep, [now, batchSize])
      const swept = Number((rows[0] as { swept?: unknown } | undefined)?.swept ?? 0)
      total += swept
      if (swept < batchSize) break
    }
    return total
  }

  async #query(operation: string, text: string, params: unknown[]): Promise<unknown[]> {
    try {
      return (await this.db.query(text, params)).rows
    } catch (cause) {
      throw driverError(`idempotency.${operation}`, cause)
    }
  }

  #unexpected(operation: string, what: string): PostgresStoreError {
    return new PostgresStoreError(
      'UNEXPECTED_ROW',
      `idempotency.${operation}`,
      `The PostgreSQL idempotency store read ${what} (${operation}).`,
    )
  }
}
