// Orders and operations in PostgreSQL, shared by every instance of the service. A list page is
// one index range scan (keyset pagination on (created_at, id), never OFFSET), a write to an
// order is conditional on the version it was read at, and a create or a cancel commits in one
// transaction with the completed Idempotency-Key record (completeWith), so a crash between
// the two cannot make a retry run again.
import type { IdempotencyStore } from '@api-blocks/idempotency'
import { keysetSql, quoteIdentifier } from '@api-blocks/pagination'
import type { Queryable } from '@api-blocks/postgres'
import { PostgresStoreError } from '@api-blocks/postgres'
import { createIdGenerator } from './id.ts'
import type { CreateOrder, Operation, Order } from './schema.ts'
import type { OrderChanges, OrderEvents, OrderListQuery, OrderStore, Respond } from './store.ts'

/** A connection of a pool, for a transaction (`pg.PoolClient`). */
interface PooledConnection extends Queryable {
  release(error?: Error | boolean): void
  on(event: 'error', listener: (error: Error) => void): unknown
  off(event: 'error', listener: (error: Error) => void): unknown
}

/** A pool that lends connections (`pg.Pool`): transactions need one connection throughout. */
export interface ConnectionPool extends Queryable {
  connect(): Promise<PooledConnection>
}

/** Options of {@link PostgresOrderStore}. */
export interface PostgresOrderStoreOptions {
  pool: ConnectionPool
  /** The schema {@link migrateOrders} created the tables in (default `public`). */
  schema?: string
  /**
   * The idempotency store of the same database (`PostgresIdempotencyStore`): creates and
   * cancels complete its records in their own transaction, through `withDb`.
   */
  idempotencyStore?: { withDb(db: Queryable): IdempotencyStore }
  /**
   * Milliseconds since the epoch, for the ids (default `Date.now`). The times (`created_at`,
   * `updated_at`, `completed_at`) come from the database's clock, the one clock every instance
   * shares.
   */
  clock?: () => number
  /** Makes ids (default: time-ordered random ids of orders/id.ts, on `clock`). */
  nextId?: (prefix: string) => string
  /**
   * Receives every change inside the write's transaction, with its connection (default: none):
   * the webhook events are enqueued in the same commit as the write (the transactional
   * outbox), and what it throws rolls the write back. With it, updates and deletes run in a
   * transaction too (without it, one statement each).
   */
  events?: OrderEvents
  /**
   * Called with a write's connection once its transaction committed (never inside it, never
   * after a rollback): what {@link events} enqueued on that connection is now visible to
   * every worker, so this instance's may be woken (src/stores.ts). What it throws is ignored:
   * the write has committed.
   */
  committed?: (db: Queryable) => void
}

// Times are timestamptz from the database's clock, not each instance's: instances whose clocks
// differ would otherwise date an order created later before one created earlier by minutes.
// A create that commits late can still land behind a cursor by the length of its transaction
// (a list is a snapshot, not a change feed: docs/service.md). They are the transaction's start
// (now()) cut to the millisecond, all that the ISO text they are read back in (UTC) holds, so a
// cursor's created_at compares exactly.
const NOW = "date_trunc('milliseconds', now())"
const iso = (column: string) =>
  `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
const ORDER_COLUMNS = `o.id, o.status, o.customer, o.items, o.note, o.version, ${iso('o.created_at')} AS created_at, ${iso('o.updated_at')} AS updated_at`
const OPERATION_COLUMNS = `p.id, p.kind, p.status, p.target, ${iso('p.created_at')} AS created_at, ${iso('p.completed_at')} AS completed_at`

/**
 * Creates the tables and indexes of {@link PostgresOrderStore} if they are missing: one
 * statement, under a transaction-level advisory lock, so several instances may start at once.
 * Ids are `COLLATE "C"` so that PostgreSQL orders them byte by byte, as the cursors (and the
 * memory store) compare them.
 */
export async function migrateOrders(
  db: Queryable,
  options: { schema?: string } = {},
): Promise<void> {
  const schema = quoteIdentifier(options.schema ?? 'public')
  await db.query(`DO $orders$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('api-blocks.example-service.orders', 0));
  CREATE SCHEMA IF NOT EXISTS ${schema};
  CREATE TABLE IF NOT EXISTS ${schema}.orders (
    id         text COLLATE "C" PRIMARY KEY,
    status     text NOT NULL CHECK (status IN ('open', 'cancelling', 'cancelled')),
    customer   text NOT NULL,
    items      jsonb NOT NULL,
    note       text,
    version    integer NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  );
  -- The list: WHERE (created_at, id) > ($1, $2) ORDER BY created_at, id LIMIT n, one range scan;
  -- with the status filter, the second index.
  CREATE INDEX IF NOT EXISTS orders_created_at_id ON ${schema}.orders (created_at, id);
  CREATE INDEX IF NOT EXISTS orders_status_created_at_id ON ${schema}.orders (status, created_at, id);
  CREATE TABLE IF NOT EXISTS ${schema}.order_operations (
    id           text COLLATE "C" PRIMARY KEY,
    kind         text NOT NULL,
    status       text NOT NULL CHECK (status IN ('running', 'succeeded', 'failed')),
    target       text NOT NULL,
    order_id     text COLLATE "C" NOT NULL,
    created_at   timestamptz NOT NULL,
    completed_at timestamptz
  );
END
$orders$`)
}

interface OrderRow {
  id: string
  status: Order['status']
  customer: string
  items: { sku: string; quantity: number }[]
  note: string | null
  version: number
  created_at: string
  updated_at: string
}

function orderOf(row: OrderRow): Order {
  return {
    id: row.id,
    status: row.status,
    customer: row.customer,
    // jsonb orders object members its own way: the members are put back in schema order.
    items: row.items.map(({ sku, quantity }) => ({ sku, quantity })),
    note: row.note,
    version: row.version,
    created_at: row.created_at,
    updated_at: row.updated_at,
  }
}

function operationOf(row: Operation): Operation {
  return {
    id: row.id,
    kind: row.kind,
    status: row.status,
    target: row.target,
    created_at: row.created_at,
    completed_at: row.completed_at,
  }
}

/**
 * {@link OrderStore} on PostgreSQL (`pg.Pool`). Run {@link migrateOrders} first. A database
 * failure rejects with `PostgresStoreError` (`QUERY_FAILED`, answered 503); what `respond`
 * throws (a lost idempotency lease) rolls the write back and propagates as it is.
 */
export class PostgresOrderStore implements OrderStore {
  readonly #pool: ConnectionPool
  readonly #orders: string
  readonly #operations: string
  readonly #idempotency: PostgresOrderStoreOptions['idempotencyStore']
  readonly #nextId: (prefix: string) => string
  readonly #events: OrderEvents | undefined
  readonly #committed: ((db: Queryable) => void) | undefined

  constructor(options: PostgresOrderStoreOptions) {
    const schema = quoteIdentifier(options.schema ?? 'public')
    this.#pool = options.pool
    this.#orders = `${schema}.orders`
    this.#operations = `${schema}.order_operations`
    this.#idempotency = options.idempotencyStore
    this.#events = options.events
    this.#committed = options.committed
    this.#nextId =
      options.nextId ?? createIdGenerator(options.clock ? { clock: options.clock } : {})
  }

  async list({ status, page }: OrderListQuery): Promise<Order[]> {
    // Table-qualified columns: ORDER BY "created_at" alone would name the ISO text the SELECT
    // list makes of it, not the indexed column.
    const seek = keysetSql(page, {
      firstParam: status === null ? 1 : 2,
      columns: { created_at: 'o.created_at', id: 'o.id' },
    })
    const filter = status === null ? '' : 'o.status = $1 AND '
    const rows = await this.#query(
      'orders.list',
      this.#pool,
      `SELECT ${ORDER_COLUMNS} FROM ${this.#orders} o WHERE ${filter}${seek.where}
ORDER BY ${seek.orderBy} LIMIT ${seek.limit}`,
      status === null ? seek.params : [status, ...seek.params],
    )
    return (rows as OrderRow[]).map(orderOf)
  }

  async get(id: string): Promise<Order | undefined> {
    const rows = await this.#query(
      'orders.get',
      this.#pool,
      `SELECT ${ORDER_COLUMNS} FROM ${this.#orders} o WHERE o.id = $1`,
      [id],
    )
    const row = rows[0] as OrderRow | undefined
    return row === undefined ? undefined : orderOf(row)
  }

  async create<R>(input: CreateOrder, respond: Respond<Order, R>): Promise<R> {
    return this.#transaction('orders.create', async (db) => {
      const rows = await this.#query(
        'orders.create',
        db,
        `INSERT INTO ${this.#orders} AS o (id, status, customer, items, note, version, created_at, updated_at)
VALUES ($1, 'open', $2, $3::jsonb, $4, 1, ${NOW}, ${NOW})
RETURNING ${ORDER_COLUMNS}`,
        [this.#nextId('ord'), input.customer, JSON.stringify(input.items), input.note ?? null],
      )
      const order = orderOf(rows[0] as OrderRow)
      const answer = await respond(order, this.#idempotency?.withDb(db))
      await this.#events?.('order.created', order, db)
      return answer
    })
  }

  async update(current: Order, changes: OrderChanges): Promise<Order | undefined> {
    const next = { ...current, ...changes }
    return this.#write('orders.update', async (db) => {
      const rows = await this.#query(
        'orders.update',
        db,
        `UPDATE ${this.#orders} AS o SET customer = $3, items = $4::jsonb, note = $5, status = $6,
  version = o.version + 1, updated_at = ${NOW}
WHERE o.id = $1 AND o.version = $2
RETURNING ${ORDER_COLUMNS}`,
        [
          current.id,
          current.version,
          next.customer,
          JSON.stringify(next.items),
          next.note,
          next.status,
        ],
      )
      const row = rows[0] as OrderRow | undefined
      if (row === undefined) return undefined
      const order = orderOf(row)
      await this.#events?.('order.updated', order, db)
      return order
    })
  }

  async delete(current: Order): Promise<boolean> {
    return this.#write('orders.delete', async (db) => {
      const rows = await this.#query(
        'orders.delete',
        db,
        `DELETE FROM ${this.#orders} AS o WHERE o.id = $1 AND o.version = $2 RETURNING ${ORDER_COLUMNS}`,
        [current.id, current.version],
      )
      const row = rows[0] as OrderRow | undefined
      if (row === undefined) return false
      await this.#events?.('order.deleted', orderOf(row), db)
      return true
    })
  }

  async cancel<R>(
    id: string,
    target: string,
    respond: Respond<Operation, R>,
  ): Promise<R | undefined> {
    return this.#transaction('orders.cancel', async (db) => {
      const cancelling = await this.#query(
        'orders.cancel',
        db,
        `UPDATE ${this.#orders} SET status = 'cancelling', version = version + 1, updated_at = ${NOW}
WHERE id = $1 AND status = 'open' RETURNING 1 AS done`,
        [id],
      )
      if (cancelling.length === 0) return undefined
      const rows = await this.#query(
        'orders.cancel',
        db,
        `INSERT INTO ${this.#operations} AS p (id, kind, status, target, order_id, created_at)
VALUES ($1, 'order.cancel', 'running', $2, $3, ${NOW})
RETURNING ${OPERATION_COLUMNS}`,
        [this.#nextId('op'), target, id],
      )
      return respond(operationOf(rows[0] as Operation), this.#idempotency?.withDb(db))
    })
  }

  async finishCancel(orderId: string, operationId: string): Promise<void> {
    await this.#transaction('orders.finishCancel', async (db) => {
      const cancelled = await this.#query(
        'orders.finishCancel',
        db,
        `UPDATE ${this.#orders} AS o SET status = 'cancelled', version = o.version + 1, updated_at = ${NOW}
WHERE o.id = $1 AND o.status = 'cancelling' RETURNING ${ORDER_COLUMNS}`,
        [orderId],
      )
      await this.#query(
        'orders.finishCancel',
        db,
        `UPDATE ${this.#operations} SET status = 'succeeded', completed_at = ${NOW} WHERE id = $1`,
        [operationId],
      )
      const row = cancelled[0] as OrderRow | undefined
      if (row !== undefined) await this.#events?.('order.cancelled', orderOf(row), db)
    })
  }

  async getOperation(id: string): Promise<Operation | undefined> {
    const rows = await this.#query(
      'orders.getOperation',
      this.#pool,
      `SELECT ${OPERATION_COLUMNS} FROM ${this.#operations} p WHERE p.id = $1`,
      [id],
    )
    const row = rows[0] as Operation | undefined
    return row === undefined ? undefined : operationOf(row)
  }

  /**
   * Runs a write with its event: in a transaction when there are events to enqueue with it,
   * else on the pool (one statement, no BEGIN and COMMIT round trips).
   */
  #write<R>(operation: string, work: (db: Queryable) => Promise<R>): Promise<R> {
    return this.#events === undefined ? work(this.#pool) : this.#transaction(operation, work)
  }

  /**
   * Runs `work` in one transaction on one connection: COMMIT when it resolves, ROLLBACK when
   * it throws (its error propagates unchanged). A connection whose query got no answer from
   * the server (pg's `query_timeout` on a hung server, a connection lost) is destroyed at once
   * without a ROLLBACK: pg leaves a checked-out connection open after a `query_timeout`, so a
   * ROLLBACK would queue behind the hung query and hold the connection for a second timeout;
   * the server aborts the transaction of a connection that goes away. A connection that fails
   * to roll back is discarded too, never handed to the next request in an unknown state.
   */
  async #transaction<R>(operation: string, work: (db: Queryable) => Promise<R>): Promise<R> {
    let connection: PooledConnection
    try {
      connection = await this.#pool.connect()
    } catch (cause) {
      throw this.#failure(operation, cause)
    }
    let broken: unknown
    // While it is ours, pg-pool does not listen for the connection's errors: one that breaks
    // between two queries (the server killed) would be an uncaught exception, the process's end.
    const lost = (error: Error): void => {
      broken ??= error
    }
    connection.on('error', lost)
    // Every query of the transaction, the idempotency record's included, goes through this.
    const db: Queryable = {
      query: async (text, params) => {
        try {
          return await connection.query(text, params)
        } catch (error) {
          if (!answeredByServer(error)) broken ??= error
          throw error
        }
      },
    }
    try {
      await this.#query(operation, db, 'BEGIN', [])
      const result = await work(db)
      await this.#query(operation, db, 'COMMIT', [])
      try {
        this.#committed?.(db)
      } catch {
        // The write has committed: a failed notification is not its failure.
      }
      return result
    } catch (error) {
      if (broken === undefined) {
        await connection.query('ROLLBACK').catch((cause: unknown) => {
          broken = cause
        })
      }
      throw error
    } finally {
      connection.off('error', lost)
      // true: pg-pool closes the connection and frees its slot rather than keeping it.
      connection.release(broken !== undefined)
    }
  }

  async #query(
    operation: string,
    db: Queryable,
    text: string,
    params: unknown[],
  ): Promise<unknown[]> {
    try {
      return (await db.query(text, params)).rows
    } catch (cause) {
      throw this.#failure(operation, cause)
    }
  }

  #failure(operation: string, cause: unknown): PostgresStoreError {
    return new PostgresStoreError(
      'QUERY_FAILED',
      operation,
      `The order store failed (${operation}).`,
      { cause },
    )
  }
}

/**
 * Whether a query's error is the server's answer on a connection that stays usable: an error
 * with a SQLSTATE and a severity (pg's `DatabaseError`), other than a connection exception
 * (class 08) or a shutdown (57P01-57P03), after which the server closes the connection. A
 * timeout (pg's `query_timeout`: "Query read timeout") or a lost socket is not.
 */
function answeredByServer(error: unknown): boolean {
  const { code, severity } = (error ?? {}) as { code?: unknown; severity?: unknown }
  if (typeof code !== 'string' || typeof severity !== 'string') return false
  return !code.startsWith('08') && !/^57P0[1-3]$/.test(code)
}
