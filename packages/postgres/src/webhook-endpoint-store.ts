/**
 * `EndpointStore` of `@api-blocks/webhooks` on PostgreSQL: one row per endpoint, one statement
 * per operation, and the compare-and-set of `update` in its `WHERE` clause.
 *
 * @module
 */
import type {
  EndpointListQuery,
  EndpointStore,
  EndpointUpdate,
  WebhookEndpoint,
} from '@api-blocks/webhooks'
import { driverError, PostgresStoreError } from './error.ts'
import { qualified, tableNames } from './internal/names.ts'
import { finite, RowError } from './internal/oauth-rows.ts'
import {
  ENDPOINT_COLUMNS,
  endpointOf,
  endpointParams,
  secretsParam,
  whole,
} from './internal/webhook-rows.ts'
import type { PostgresTableOptions } from './migrations.ts'
import type { Queryable } from './queryable.ts'

/**
 * Options of {@link PostgresEndpointStore}: the connection and where `migrate` put the tables.
 *
 * @example
 * ```ts
 * const options: PostgresEndpointStoreOptions = { db: pool, schema: 'webhooks' }
 * const store = new PostgresEndpointStore(options)
 * ```
 */
export interface PostgresEndpointStoreOptions extends PostgresTableOptions {
  /** A `pg.Pool`, a `pg.Client`, a PGlite, or anything with `query(text, params)`. */
  db: Queryable
}

/**
 * An {@link EndpointStore} on PostgreSQL, on `pg` or PGlite alike. Passes
 * `runEndpointStoreConformance`. Run {@link migrate} first, with the same `schema` and
 * `tablePrefix`.
 *
 * - **One statement per operation**; `update` is one `UPDATE … SET version = version + 1 WHERE
 *   id = $1 AND version = $expected RETURNING …`, so of two concurrent updates at one version
 *   exactly one applies (the other waits for the row lock, finds the version changed and
 *   writes nothing).
 * - **Secrets** are stored as the registry passes them (sealed with its encryption key when it
 *   has one), in a `jsonb` array; the store never reads them.
 * - **Ids order by their bytes** (`COLLATE "C"`), whatever the database's collation, so pages
 *   follow the same order as in the memory store.
 * - **Failures** reject with a {@link PostgresStoreError}: `QUERY_FAILED` (an `insert` of a
 *   taken id included; its `cause` has SQLSTATE `23505`), `NOT_MIGRATED`, `UNEXPECTED_ROW`.
 *
 * @example
 * ```ts
 * import pg from 'pg'
 * import { createEndpointRegistry } from '@api-blocks/webhooks'
 * import { migrate, PostgresEndpointStore } from '@api-blocks/postgres'
 *
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL })
 * await migrate(pool)
 * const registry = createEndpointRegistry({ store: new PostgresEndpointStore({ db: pool }) })
 * ```
 */
export class PostgresEndpointStore implements EndpointStore {
  /** The connection the store runs its statements on. */
  readonly db: Queryable
  /** The qualified, quoted name of the endpoints table. */
  readonly table: string
  readonly #sql: ReturnType<typeof statements>

  constructor(options: PostgresEndpointStoreOptions) {
    const { db } = options
    if (typeof db?.query !== 'function') {
      throw new TypeError('PostgresEndpointStore: db must have query(text, params) (pg, PGlite)')
    }
    this.db = db
    this.table = qualified(tableNames(options), 'webhook_endpoints')
    this.#sql = statements(this.table)
  }

  async insert(endpoint: WebhookEndpoint): Promise<void> {
    await this.#query('insert', this.#sql.insert, endpointParams(endpoint))
  }

  async get(id: string): Promise<WebhookEndpoint | undefined> {
    const rows = await this.#query('get', this.#sql.get, [id])
    return rows.length === 0 ? undefined : this.#endpoint('get', rows[0])
  }

  async list(query: EndpointListQuery): Promise<WebhookEndpoint[]> {
    const { owner, after, limit } = query
    whole(limit, 'limit', 0)
    const rows = await this.#query('list', this.#sql.list, [
      owner !== undefined,
      owner ?? null,
      after ?? null,
      limit,
    ])
    return rows.map((row) => this.#endpoint('list', row))
  }

  async subscribed(eventType: string): Promise<WebhookEndpoint[]> {
    const rows = await this.#query('subscribed', this.#sql.subscribed, [eventType])
    return rows.map((row) => this.#endpoint('subscribed', row))
  }

  async update(
    id: string,
    update: EndpointUpdate,
    expectedVersion?: number,
  ): Promise<WebhookEndpoint | undefined> {
    // Only the members present are set: the statement's SET list follows them (column names
    // are this code's own, values are parameters).
    const params: unknown[] = [id, expectedVersion ?? null, finite(update.updatedAt, 'updatedAt')]
    const sets = ['updated_at = $3', 'version = version + 1']
    const set = (column: string, value: unknown, cast = '') => {
      params.push(value)
      sets.push(`${column} = $${params.length}${cast}`)
    }
    if (update.url !== undefined) set('url', update.url)
    if (update.events !== undefined) {
      set('events', update.events === null ? null : [...update.events], '::text[]')
    }
    if (update.status !== undefined) set('status', update.status)
    if (update.disabledReason !== undefined) set('disabled_reason', update.disabledReason)
    if (update.secrets !== undefined) set('secrets', secretsParam(update.secrets), '::jsonb')
    if (expectedVersion !== undefined) whole(expectedVersion, 'expectedVersion', 0)
    const text = `UPDATE ${this.table} SET ${sets.join(', ')}
WHERE id = $1 AND ($2::integer IS NULL OR version = $2::integer)
RETURNING ${ENDPOINT_COLUMNS}`
    const rows = await this.#query('update', text, params)
    return rows.length === 0 ? undefined : this.#endpoint('update', rows[0])
  }

  async delete(id: string): Promise<boolean> {
    const rows = await this.#query('delete', this.#sql.delete, [id])
    return rows.length === 1
  }

  async #query(operation: string, text: string, params: unknown[]): Promise<unknown[]> {
    try {
      return (await this.db.query(text, params)).rows
    } catch (cause) {
      throw driverError(`webhook-endpoints.${operation}`, cause)
    }
  }

  #endpoint(operation: string, row: unknown): WebhookEndpoint {
    try {
      return endpointOf(row as Record<string, unknown>)
    } catch (error) {
      if (!(error instanceof RowError)) throw error
      throw new PostgresStoreError(
        'UNEXPECTED_ROW',
        `webhook-endpoints.${operation}`,
        `The PostgreSQL endpoint store read a row it does not write (${operation}).`,
        { cause: error },
      )
    }
  }
}

/** The statements of a fixed shape, built once per store with the table's name. */
function statements(table: string) {
  return {
    /** $1..$10 in {@link ENDPOINT_COLUMNS} order. */
    insert: `INSERT INTO ${table} (${ENDPOINT_COLUMNS})
VALUES ($1, $2, $3::text[], $4, $5, $6::jsonb, $7, $8, $9, $10)`,
    get: `SELECT ${ENDPOINT_COLUMNS} FROM ${table} WHERE id = $1`,
    /** $1 whether to filter by owner, $2 the owner (NULL: unowned), $3 after, $4 limit. */
    list: `SELECT ${ENDPOINT_COLUMNS} FROM ${table}
WHERE (NOT $1::boolean OR owner IS NOT DISTINCT FROM $2::text) AND ($3::text IS NULL OR id > $3::text)
ORDER BY id LIMIT $4`,
    /** $1 the event type. */
    subscribed: `SELECT ${ENDPOINT_COLUMNS} FROM ${table}
WHERE status = 'enabled' AND (events IS NULL OR $1::text = ANY (events))
ORDER BY id`,
    delete: `DELETE FROM ${table} WHERE id = $1 RETURNING 1 AS deleted`,
  }
}
