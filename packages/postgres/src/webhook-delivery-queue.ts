/**
 * `DeliveryQueue` of `@api-blocks/webhooks` on PostgreSQL: one row per (event, endpoint),
 * claimed with `FOR UPDATE SKIP LOCKED` under a lease, settled only by the lease holder, and
 * `enqueue` able to run on the caller's transaction (the transactional outbox).
 *
 * @module
 */
import type {
  AttemptRecord,
  ClaimOptions,
  Delivery,
  DeliveryListQuery,
  DeliveryQueue,
  DeliveryResolution,
  LeasedDelivery,
  NewDelivery,
  ReplayFilter,
} from '@api-blocks/webhooks'
import { driverError, PostgresStoreError } from './error.ts'
import type { SweepOptions } from './idempotency-store.ts'
import { Coalescer } from './internal/coalesce.ts'
import { qualified, tableNames } from './internal/names.ts'
import { finite, RowError } from './internal/oauth-rows.ts'
import {
  attemptParam,
  DELIVERY_COLUMNS,
  deliveryOf,
  leasedOf,
  whole,
} from './internal/webhook-rows.ts'
import type { PostgresTableOptions } from './migrations.ts'
import type { Queryable } from './queryable.ts'

/**
 * Options of {@link PostgresDeliveryQueue}: the connection, where `migrate` put the tables,
 * and the sources of time and randomness (tests fix them).
 *
 * @example
 * ```ts
 * const options: PostgresDeliveryQueueOptions = { db: pool, schema: 'webhooks' }
 * const queue = new PostgresDeliveryQueue(options)
 * ```
 */
export interface PostgresDeliveryQueueOptions extends PostgresTableOptions {
  /**
   * A `pg.Pool`, a `pg.Client`, a PGlite, or anything with `query(text, params)`. Bound the
   * time a statement may take in its configuration (`statement_timeout`, `query_timeout`): the
   * queue adds no timeout of its own.
   */
  db: Queryable
  /** Milliseconds since the epoch (default `Date.now`): `updatedAt` of an enqueued delivery. */
  clock?: () => number
  /** Fills the array with random bytes (default `crypto.getRandomValues`): lease tokens. */
  random?: (bytes: Uint8Array<ArrayBuffer>) => Uint8Array
}

/** The most lines the attempt log keeps (the contract of `Delivery.log`). */
const LOG_LINES = 50

/**
 * The most settles (or releases) one statement carries; more waiting go in the next ones.
 * Bounds the statement's JSON parameter (an attempt line is at most about 1.2 KiB) and the
 * rows one transaction locks.
 */
const BATCH_LIMIT = 256

/** The delivery columns, qualified by `alias`. */
function columns(alias: string): string {
  return DELIVERY_COLUMNS.split(', ')
    .map((column) => `${alias}.${column}`)
    .join(', ')
}

/** The statements, built once per queue with the table's name. */
function statements(table: string, claimFunction: string) {
  const leased = `${columns('d')}, d.lease, d.lease_expires_at`
  // Due at $1 and not leased (or its lease is over): claimable.
  const claimable = (alias: string) =>
    `${alias}.status = 'pending' AND ${alias}.next_attempt_at <= $1::double precision
      AND (${alias}.lease_expires_at IS NULL OR ${alias}.lease_expires_at <= $1::double precision)`
  // Leases the rows of `picked`: the token $3 plus the row's number, so each delivery of a
  // batch has a lease of its own, new on every claim; expiry $4.
  const lease = `numbered AS (
  SELECT event_id, endpoint_id, row_number() OVER () AS n FROM picked
)
UPDATE ${table} AS d SET lease = $3::text || '.' || p.n, lease_expires_at = $4::double precision
FROM numbered p
WHERE d.event_id = p.event_id AND d.endpoint_id = p.endpoint_id
RETURNING ${leased}`
  return {
    /**
     * $1 the new deliveries as a JSON array, $2 updatedAt. Pairs already present (or twice in
     * the batch) are left as they are.
     */
    enqueue: `WITH added AS (
  INSERT INTO ${table} (${DELIVERY_COLUMNS})
  SELECT n.event_id, n.endpoint_id, n.event_type, n.payload, n.created_at, n.next_attempt_at,
    'pending', 0, '[]'::jsonb, $2::double precision
  FROM json_to_recordset($1::json) AS n(event_id text, endpoint_id text, event_type text,
    payload text, created_at double precision, next_attempt_at double precision)
  ON CONFLICT (event_id, endpoint_id) DO NOTHING
  RETURNING 1
)
SELECT count(*)::integer AS added FROM added`,
    /**
     * $1 now, $2 limit, $3 lease token, $4 lease expiry. The due deliveries, earliest first,
     * on the partial index of pending ones; rows another claim has locked are skipped, and a
     * row leased by a claim that committed meanwhile is checked again once locked (READ
     * COMMITTED re-reads it), found leased, and left out: no delivery is leased twice.
     */
    claim: `WITH picked AS (
  SELECT d.event_id, d.endpoint_id FROM ${table} d
  WHERE ${claimable('d')}
  ORDER BY d.next_attempt_at
  LIMIT $2
  FOR UPDATE SKIP LOCKED
), ${lease}`,
    /**
     * $1 now, $2 limit, $3 lease token, $4 lease expiry, $5 perEndpoint. The function of
     * migration `0005_webhook_claim_per_endpoint`: under a transaction-level advisory lock (one
     * per schema and prefix), so these claims run one after another and each counts the leases
     * of every one before it (its query takes its snapshot once the lock is held); then the
     * endpoints with pending deliveries (one index probe each, landing on the earliest: an
     * endpoint with nothing due stops there) and from each with a due one its earliest due ones
     * up to the room it has left, and the earliest of those up to the limit. One round trip.
     */
    claimPerEndpoint: `SELECT ${columns('d')}, d.lease, d.lease_expires_at
FROM ${claimFunction}($1::double precision, $2::integer, $3::text, $4::double precision, $5::integer) AS d`,
    /**
     * $1 the settles as a JSON array of (i, event, endpoint, lease, now, status, attempt: a
     * JSON array of one line, next attempt: NULL keeps it); the `i` of each row settled. Each
     * row only while its lease holds at its own `now`; the log keeps its last 50 lines. Two
     * settles of one lease in a batch match one row, which is updated once: one `i` comes back.
     */
    settle: `UPDATE ${table} AS d SET
  status = s.status, attempts = d.attempts + 1,
  log = CASE WHEN jsonb_array_length(d.log) < ${LOG_LINES} THEN d.log || s.attempt::jsonb
    ELSE coalesce((
      SELECT jsonb_agg(l.line ORDER BY l.i) FROM jsonb_array_elements(d.log) WITH ORDINALITY AS l(line, i)
      WHERE l.i > jsonb_array_length(d.log) - ${LOG_LINES - 1}
    ), '[]'::jsonb) || s.attempt::jsonb END,
  next_attempt_at = coalesce(s.next_attempt_at, d.next_attempt_at),
  updated_at = s.now, lease = NULL, lease_expires_at = NULL
FROM json_to_recordset($1::json) AS s(i integer, event_id text, endpoint_id text, lease text,
  now double precision, status text, attempt text, next_attempt_at double precision)
WHERE d.event_id = s.event_id AND d.endpoint_id = s.endpoint_id AND d.status = 'pending'
  AND d.lease = s.lease AND d.lease_expires_at > s.now
RETURNING s.i`,
    /**
     * $1 the releases as a JSON array of (i, event, endpoint, lease, next attempt: NULL keeps
     * it); the `i` of each row released. `release` has no `now`: the token decides. A lease
     * claimed again since has another token; one that expired unclaimed is given back as if it
     * had not (the delivery is pending either way).
     */
    release: `UPDATE ${table} AS d SET lease = NULL, lease_expires_at = NULL,
  next_attempt_at = coalesce(s.next_attempt_at, d.next_attempt_at)
FROM json_to_recordset($1::json) AS s(i integer, event_id text, endpoint_id text, lease text,
  next_attempt_at double precision)
WHERE d.event_id = s.event_id AND d.endpoint_id = s.endpoint_id AND d.status = 'pending'
  AND d.lease = s.lease
RETURNING s.i`,
    get: `SELECT ${DELIVERY_COLUMNS} FROM ${table} WHERE event_id = $1 AND endpoint_id = $2`,
    /** $1 endpoint, $2 status (NULL: any), $3 and $4 the (createdAt, eventId) after, $5 limit. */
    list: `SELECT ${DELIVERY_COLUMNS} FROM ${table}
WHERE endpoint_id = $1 AND ($2::text IS NULL OR status = $2::text)
  AND ($3::double precision IS NULL OR (created_at, event_id) < ($3::double precision, $4::text))
ORDER BY created_at DESC, event_id DESC
LIMIT $5`,
    /**
     * $1 event, $2 endpoint, $3 now: any status. A pending delivery under an unexpired lease
     * (an attempt in flight) keeps its lease, so the holder's settle still lands on the reset
     * delivery and no second worker sends it meanwhile; any other lease ends. (SET reads the
     * row as it was before this UPDATE.)
     */
    replayOne: `UPDATE ${table} SET status = 'pending', attempts = 0, next_attempt_at = $3::double precision,
  updated_at = $3::double precision,
  lease = CASE WHEN status = 'pending' AND lease_expires_at > $3::double precision THEN lease END,
  lease_expires_at = CASE WHEN status = 'pending' AND lease_expires_at > $3::double precision
    THEN lease_expires_at END
WHERE event_id = $1 AND endpoint_id = $2
RETURNING 1 AS replayed`,
    /** $1 endpoint (NULL: any), $2 from, $3 to (NULL: open), $4 now: failed and dead ones. */
    replayMany: `WITH replayed AS (
  UPDATE ${table} SET status = 'pending', attempts = 0, next_attempt_at = $4::double precision,
    updated_at = $4::double precision, lease = NULL, lease_expires_at = NULL
  WHERE status IN ('failed', 'dead')
    AND ($1::text IS NULL OR endpoint_id = $1::text)
    AND ($2::double precision IS NULL OR created_at >= $2::double precision)
    AND ($3::double precision IS NULL OR created_at < $3::double precision)
  RETURNING 1
)
SELECT count(*)::integer AS replayed FROM replayed`,
    /** $1 before, $2 batch size: final deliveries last changed before $1. */
    purge: `WITH purged AS (
  DELETE FROM ${table}
  WHERE (event_id, endpoint_id) IN (
    SELECT event_id, endpoint_id FROM ${table}
    WHERE status <> 'pending' AND updated_at < $1::double precision
    ORDER BY updated_at LIMIT $2 FOR UPDATE SKIP LOCKED
  ) AND status <> 'pending' AND updated_at < $1::double precision
  RETURNING 1
)
SELECT count(*)::integer AS purged FROM purged`,
  }
}

type Statements = ReturnType<typeof statements>

/** The enqueue of a queue, on one connection (see {@link PostgresDeliveryQueue.inTransaction}). */
async function enqueueOn(
  db: Queryable,
  sql: Statements,
  clock: () => number,
  deliveries: readonly NewDelivery[],
): Promise<number> {
  if (deliveries.length === 0) return 0
  const rows = deliveries.map((delivery) => ({
    event_id: delivery.eventId,
    endpoint_id: delivery.endpointId,
    event_type: delivery.eventType,
    payload: delivery.payload,
    created_at: finite(delivery.createdAt, 'createdAt'),
    next_attempt_at: finite(delivery.nextAttemptAt, 'nextAttemptAt'),
  }))
  const now = finite(clock(), 'clock()')
  let result: { rows: unknown[] }
  try {
    result = await db.query(sql.enqueue, [JSON.stringify(rows), now])
  } catch (cause) {
    throw driverError('webhook-deliveries.enqueue', cause)
  }
  return Number((result.rows[0] as { added?: unknown } | undefined)?.added ?? 0)
}

/**
 * A {@link DeliveryQueue} on PostgreSQL, on `pg` or PGlite alike: any number of workers, in
 * any number of processes, deliver from one table. Passes `runDeliveryQueueConformance`. Run
 * {@link migrate} first, with the same `schema` and `tablePrefix`.
 *
 * - **`claim` is one statement, one round trip per batch**: the due pending deliveries,
 *   earliest first, locked with `FOR UPDATE SKIP LOCKED` (concurrent claims take different
 *   rows and never wait for each other) and leased in the same `UPDATE`. A lease is a random
 *   token and an expiry; a worker that dies leaves its leases to expire, and the deliveries
 *   are claimed again: at-least-once.
 * - **`perEndpoint`** counts the unexpired leases each endpoint holds and takes from each
 *   endpoint at most the room it has left, earliest first, so one endpoint's backlog cannot
 *   hold back the others. Exact under concurrency: the claim is a PL/pgSQL function (migration
 *   `0005_webhook_claim_per_endpoint`) that first takes a transaction-level advisory lock, one
 *   per schema and prefix, so these claims run one after another, each counting the leases of
 *   those before it (a `VOLATILE` function's query takes its snapshot once the lock is held).
 *   Still one round trip. Claims without `perEndpoint` take no lock and are not counted while
 *   in flight: use one kind per table.
 * - **`settle`** is an `UPDATE … WHERE lease = $token AND lease_expires_at > now`: a worker
 *   whose lease expired (and was perhaps claimed again) writes nothing and gets `false`;
 *   `release` (which has no `now`) is an `UPDATE … WHERE lease = $token`. The attempt log is a
 *   `jsonb` array trimmed to its last 50 lines in the same statement.
 * - **Settles are coalesced**: the first goes at once; those issued while it is in flight go
 *   together in the next statement (at most 256 in one), each row with its own lease and
 *   expiry check and each call with its own result, so a busy worker pays one commit for many
 *   deliveries. A failing statement rejects every call it carried. The same for `release`.
 * - **The transactional outbox**: {@link PostgresDeliveryQueue.inTransaction} runs `enqueue`
 *   on the client of your open transaction, so the deliveries commit or roll back with your
 *   own writes: no event for a write that rolled back, no lost event for one that committed.
 * - **Retention**: final deliveries stay for inspection and replay until
 *   {@link PostgresDeliveryQueue.purge} deletes them: run it periodically.
 * - **Failures** reject with a {@link PostgresStoreError}.
 *
 * @example
 * ```ts
 * import pg from 'pg'
 * import { createDeliveryWorker, createWebhookPublisher } from '@api-blocks/webhooks'
 * import { migrate, PostgresDeliveryQueue } from '@api-blocks/postgres'
 *
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, statement_timeout: 5_000 })
 * await migrate(pool)
 * const queue = new PostgresDeliveryQueue({ db: pool })
 * const publisher = createWebhookPublisher({ registry, queue })
 * createDeliveryWorker({ queue, registry, sender }).start()
 * ```
 */
export class PostgresDeliveryQueue implements DeliveryQueue {
  /** The connection the queue runs its statements on. */
  readonly db: Queryable
  /** The qualified, quoted name of the deliveries table. */
  readonly table: string
  readonly #sql: Statements
  readonly #clock: () => number
  readonly #random: (bytes: Uint8Array<ArrayBuffer>) => Uint8Array
  // Settles and releases issued while one of theirs is in flight go together in the next
  // statement: one commit for many deliveries instead of one each. Measured end to end (a
  // worker with concurrency 64 posting through the signing sender to a loopback node:http
  // receiver, 5,000 deliveries on a fresh schema, a disk where a commit takes about 5.4 ms):
  // 378 deliveries/s with a statement per settle (1.03 statements per delivery), 1,370-2,200/s
  // coalesced (0.05); with the 2-CPU machine at load 8-9 (CPU-bound then: about 0.35 ms of
  // Node CPU per delivery, receiver included), 430-535/s against 590-1,330/s. With the
  // worker's default concurrency (16), 0.19 statements per delivery. The i15-pgperf branch's
  // report has the script and the runs.
  readonly #settles = new Coalescer<Record<string, unknown>>(BATCH_LIMIT, (rows) =>
    this.#batch('settle', this.#sql.settle, rows),
  )
  readonly #releases = new Coalescer<Record<string, unknown>>(BATCH_LIMIT, (rows) =>
    this.#batch('release', this.#sql.release, rows),
  )

  constructor(options: PostgresDeliveryQueueOptions) {
    const { db, clock = Date.now } = options
    const random = options.random ?? ((bytes) => crypto.getRandomValues(bytes))
    if (typeof db?.query !== 'function') {
      throw new TypeError('PostgresDeliveryQueue: db must have query(text, params) (pg, PGlite)')
    }
    if (typeof clock !== 'function' || typeof random !== 'function') {
      throw new TypeError('PostgresDeliveryQueue: clock and random must be functions')
    }
    this.db = db
    const names = tableNames(options)
    this.table = qualified(names, 'webhook_deliveries')
    this.#sql = statements(this.table, qualified(names, 'webhook_claim_per_endpoint'))
    this.#clock = clock
    this.#random = random
  }

  async enqueue(deliveries: readonly NewDelivery[]): Promise<number> {
    return enqueueOn(this.db, this.#sql, this.#clock, deliveries)
  }

  /**
   * `enqueue` on `db`, typically the client of your open transaction: the transactional
   * outbox. The deliveries are inserted by your transaction, so they exist exactly when your
   * own writes commit; a worker can claim them from then on. One statement, like every
   * operation here. Pass it as the `queue` option of the publisher's `publish`.
   *
   * @example
   * ```ts
   * const client = await pool.connect()
   * try {
   *   await client.query('BEGIN')
   *   await client.query('INSERT INTO orders (id, status) VALUES ($1, $2)', [order.id, 'open'])
   *   await publisher.publish(event, { queue: queue.inTransaction(client) })
   *   await client.query('COMMIT')
   * } catch (error) {
   *   await client.query('ROLLBACK')
   *   throw error
   * } finally {
   *   client.release()
   * }
   * ```
   */
  inTransaction(db: Queryable): Pick<DeliveryQueue, 'enqueue'> {
    if (typeof db?.query !== 'function') {
      throw new TypeError('PostgresDeliveryQueue.inTransaction: db must have query(text, params)')
    }
    const sql = this.#sql
    const clock = this.#clock
    return { enqueue: (deliveries) => enqueueOn(db, sql, clock, deliveries) }
  }

  async claim(options: ClaimOptions): Promise<LeasedDelivery[]> {
    const { now, limit, leaseMs, perEndpoint } = options
    finite(now, 'now')
    whole(limit, 'limit', 0)
    if (!(leaseMs > 0) || !Number.isFinite(leaseMs)) {
      throw new RangeError(`leaseMs must be a finite number > 0, got ${String(leaseMs)}`)
    }
    if (perEndpoint !== undefined) whole(perEndpoint, 'perEndpoint', 0)
    if (limit === 0 || perEndpoint === 0) return []
    const token = Buffer.from(this.#random(new Uint8Array(16))).toString('hex')
    const params: unknown[] = [now, limit, token, now + leaseMs]
    const text = perEndpoint === undefined ? this.#sql.claim : this.#sql.claimPerEndpoint
    if (perEndpoint !== undefined) params.push(perEndpoint)
    const rows = await this.#query('claim', text, params)
    const claimed = rows.map((row) => this.#row('claim', row, leasedOf))
    // RETURNING gives rows in no set order.
    return claimed.sort(
      (a, b) =>
        a.nextAttemptAt - b.nextAttemptAt ||
        (a.endpointId < b.endpointId ? -1 : a.endpointId > b.endpointId ? 1 : 0) ||
        (a.eventId < b.eventId ? -1 : a.eventId > b.eventId ? 1 : 0),
    )
  }

  async settle(
    delivery: LeasedDelivery,
    attempt: AttemptRecord,
    resolution: DeliveryResolution,
    now: number,
  ): Promise<boolean> {
    const next =
      resolution.status === 'pending' ? finite(resolution.nextAttemptAt, 'nextAttemptAt') : null
    return this.#settles.add({
      event_id: delivery.eventId,
      endpoint_id: delivery.endpointId,
      lease: delivery.lease,
      now: finite(now, 'now'),
      status: resolution.status,
      attempt: attemptParam(attempt),
      next_attempt_at: next,
    })
  }

  async release(delivery: LeasedDelivery, nextAttemptAt?: number): Promise<boolean> {
    return this.#releases.add({
      event_id: delivery.eventId,
      endpoint_id: delivery.endpointId,
      lease: delivery.lease,
      next_attempt_at: nextAttemptAt === undefined ? null : finite(nextAttemptAt, 'nextAttemptAt'),
    })
  }

  async get(eventId: string, endpointId: string): Promise<Delivery | undefined> {
    const rows = await this.#query('get', this.#sql.get, [eventId, endpointId])
    return rows.length === 0 ? undefined : this.#row('get', rows[0], deliveryOf)
  }

  async list(query: DeliveryListQuery): Promise<Delivery[]> {
    const { endpointId, status, after, limit } = query
    whole(limit, 'limit', 0)
    const rows = await this.#query('list', this.#sql.list, [
      endpointId,
      status ?? null,
      after === undefined ? null : finite(after.createdAt, 'after.createdAt'),
      after?.eventId ?? null,
      limit,
    ])
    return rows.map((row) => this.#row('list', row, deliveryOf))
  }

  async replay(filter: ReplayFilter, now: number): Promise<number> {
    finite(now, 'now')
    if ('eventId' in filter) {
      const rows = await this.#query('replay', this.#sql.replayOne, [
        filter.eventId,
        filter.endpointId,
        now,
      ])
      return rows.length
    }
    const { endpointId, from, to } = filter
    if (endpointId === undefined && (from === undefined || to === undefined)) {
      throw new TypeError('replay: a filter needs an endpointId, or both from and to')
    }
    const rows = await this.#query('replay', this.#sql.replayMany, [
      endpointId ?? null,
      from === undefined ? null : finite(from, 'from'),
      to === undefined ? null : finite(to, 'to'),
      now,
    ])
    return Number((rows[0] as { replayed?: unknown } | undefined)?.replayed ?? 0)
  }

  /**
   * Deletes final deliveries (`succeeded`, `failed`, `dead`) last changed before `before`, in
   * batches of `batchSize` rows, each one short statement; how many. Pending deliveries are
   * never deleted. Run it periodically with your retention, e.g. seven days.
   *
   * @example
   * ```ts
   * const WEEK = 7 * 24 * 60 * 60 * 1000
   * setInterval(() => queue.purge(Date.now() - WEEK).catch(console.error), 60 * 60 * 1000).unref()
   * ```
   */
  async purge(before: number, options: SweepOptions = {}): Promise<number> {
    const { batchSize = 1000, maxBatches = 100 } = options
    whole(batchSize, 'batchSize', 1)
    whole(maxBatches, 'maxBatches', 1)
    finite(before, 'before')
    let total = 0
    for (let batch = 0; batch < maxBatches; batch++) {
      const rows = await this.#query('purge', this.#sql.purge, [before, batchSize])
      const purged = Number((rows[0] as { purged?: unknown } | undefined)?.purged ?? 0)
      total += purged
      if (purged < batchSize) break
    }
    return total
  }

  /** Runs a batched statement on `rows`; for each row, whether it came back. */
  async #batch(
    operation: string,
    text: string,
    rows: Record<string, unknown>[],
  ): Promise<boolean[]> {
    const numbered = rows.map((row, i) => ({ i, ...row }))
    const returned = await this.#query(operation, text, [JSON.stringify(numbered)])
    const results = rows.map(() => false)
    for (const row of returned) {
      const i = Number((row as { i?: unknown }).i)
      if (Number.isInteger(i) && i >= 0 && i < results.length) results[i] = true
    }
    return results
  }

  async #query(operation: string, text: string, params: unknown[]): Promise<unknown[]> {
    try {
      return (await this.db.query(text, params)).rows
    } catch (cause) {
      throw driverError(`webhook-deliveries.${operation}`, cause)
    }
  }

  #row<T>(operation: string, row: unknown, read: (row: Record<string, unknown>) => T): T {
    try {
      return read(row as Record<string, unknown>)
    } catch (error) {
      if (!(error instanceof RowError)) throw error
      throw new PostgresStoreError(
        'UNEXPECTED_ROW',
        `webhook-deliveries.${operation}`,
        `The PostgreSQL delivery queue read a row it does not write (${operation}).`,
        { cause: error },
      )
    }
  }
}
