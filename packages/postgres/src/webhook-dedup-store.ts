/**
 * `DedupStore` of `@api-blocks/webhooks` on PostgreSQL: one row per `webhook-id`, a claim in
 * one `INSERT … ON CONFLICT … DO UPDATE … WHERE expired … RETURNING`, and `purgeExpired` to
 * delete what is past its time.
 *
 * @module
 */
import type { DedupStore } from '@api-blocks/webhooks'
import { driverError } from './error.ts'
import type { SweepOptions } from './idempotency-store.ts'
import { qualified, tableNames } from './internal/names.ts'
import { finite } from './internal/oauth-rows.ts'
import { whole } from './internal/webhook-rows.ts'
import type { PostgresTableOptions } from './migrations.ts'
import type { Queryable } from './queryable.ts'

/**
 * Options of {@link PostgresDedupStore}: the connection, where `migrate` put the tables, and
 * the clock a record's expiry is measured on.
 *
 * @example
 * ```ts
 * const options: PostgresDedupStoreOptions = { db: pool, schema: 'receiver' }
 * const dedup = new PostgresDedupStore(options)
 * ```
 */
export interface PostgresDedupStoreOptions extends PostgresTableOptions {
  /** A `pg.Pool`, a `pg.Client`, a PGlite, or anything with `query(text, params)`. */
  db: Queryable
  /** Milliseconds since the epoch (default `Date.now`): when records are made and expire. */
  clock?: () => number
}

/** Ids are 1 to 256 characters (the contract of `DedupStore.claim`). */
const MAX_ID = 256

function checkId(id: string): string {
  if (typeof id !== 'string' || id.length === 0 || id.length > MAX_ID) {
    throw new RangeError(`a dedup id must be 1 to ${MAX_ID} characters`)
  }
  return id
}

/**
 * A {@link DedupStore} on PostgreSQL, on `pg` or PGlite alike: the receiver's memory of the
 * `webhook-id`s it handled, shared by every instance. Passes `runDedupStoreConformance`. Run
 * {@link migrate} first, with the same `schema` and `tablePrefix`.
 *
 * - **`claim` is one statement**: `INSERT … ON CONFLICT (id) DO UPDATE SET expires_at = … WHERE
 *   expires_at <= now RETURNING 1`. A new id inserts; an expired record is taken over; a live
 *   one is left alone and no row comes back. Concurrent claims of one id meet on the row's
 *   lock (or the unique index), so exactly one gets `true`.
 * - **`release`** deletes the record, so a redelivery runs the handler again.
 * - **Time** is the store's `clock`; expired records are ignored at once and deleted by
 *   {@link PostgresDedupStore.purgeExpired}: run it periodically.
 * - **Failures** reject with a {@link PostgresStoreError}; the receiver answers 503 without
 *   running the handler, and the sender retries.
 *
 * @example
 * ```ts
 * import pg from 'pg'
 * import { createWebhookReceiver } from '@api-blocks/webhooks'
 * import { migrate, PostgresDedupStore } from '@api-blocks/postgres'
 *
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL })
 * await migrate(pool)
 * const dedup = new PostgresDedupStore({ db: pool })
 * setInterval(() => dedup.purgeExpired(Date.now() - 60_000).catch(console.error), 60_000).unref()
 * const receiver = createWebhookReceiver({ secrets: [process.env.WEBHOOK_SECRET!], dedup, handler: async () => {} })
 * ```
 */
export class PostgresDedupStore implements DedupStore {
  /** The connection the store runs its statements on. */
  readonly db: Queryable
  readonly #clock: () => number
  readonly #claim: string
  readonly #release: string
  readonly #purge: string

  constructor(options: PostgresDedupStoreOptions) {
    const { db, clock = Date.now } = options
    if (typeof db?.query !== 'function') {
      throw new TypeError('PostgresDedupStore: db must have query(text, params) (pg, PGlite)')
    }
    if (typeof clock !== 'function')
      throw new TypeError('PostgresDedupStore: clock must be a function')
    this.db = db
    this.#clock = clock
    const table = qualified(tableNames(options), 'webhook_dedup')
    // $1 id, $2 now, $3 expiresAt.
    this.#claim = `INSERT INTO ${table} AS d (id, expires_at) VALUES ($1, $3)
ON CONFLICT (id) DO UPDATE SET expires_at = EXCLUDED.expires_at WHERE d.expires_at <= $2::double precision
RETURNING 1 AS claimed`
    this.#release = `DELETE FROM ${table} WHERE id = $1`
    // $1 now, $2 batch size; see the idempotency store's sweep.
    this.#purge = `WITH purged AS (
  DELETE FROM ${table}
  WHERE id IN (
    SELECT id FROM ${table} WHERE expires_at <= $1::double precision
    ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED
  ) AND expires_at <= $1::double precision
  RETURNING 1
)
SELECT count(*)::integer AS purged FROM purged`
  }

  async claim(id: string, ttlMs: number): Promise<boolean> {
    checkId(id)
    if (typeof ttlMs !== 'number' || !(ttlMs > 0) || !Number.isFinite(ttlMs)) {
      throw new RangeError(`ttlMs must be a finite number > 0, got ${String(ttlMs)}`)
    }
    const now = finite(this.#clock(), 'clock()')
    const rows = await this.#query('claim', this.#claim, [id, now, now + ttlMs])
    return rows.length === 1
  }

  async release(id: string): Promise<void> {
    checkId(id)
    await this.#query('release', this.#release, [id])
  }

  /**
   * Deletes the records expired at `now`, in batches of `batchSize` rows, each one short
   * statement; how many. `claim` never needs it (it takes over an expired record); it keeps
   * the table small. Run it periodically, with a `now` a little behind your clock.
   *
   * @example
   * ```ts
   * setInterval(() => dedup.purgeExpired(Date.now() - 60_000).catch(console.error), 60_000).unref()
   * ```
   */
  async purgeExpired(now: number, options: SweepOptions = {}): Promise<number> {
    const { batchSize = 1000, maxBatches = 100 } = options
    whole(batchSize, 'batchSize', 1)
    whole(maxBatches, 'maxBatches', 1)
    finite(now, 'now')
    let total = 0
    for (let batch = 0; batch < maxBatches; batch++) {
      const rows = await this.#query('purgeExpired', this.#purge, [now, batchSize])
      const purged = Number((rows[0] as { purged?: unknown } | undefined)?.purged ?? 0)
      total += purged
      if (purged < batchSize) break
    }
    return total
  }

  async #query(operation: string, text: string, params: unknown[]): Promise<unknown[]> {
    try {
      return (await this.db.query(text, params)).rows
    } catch (cause) {
      throw driverError(`webhook-dedup.${operation}`, cause)
    }
  }
}
