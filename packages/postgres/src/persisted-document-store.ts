/**
 * `PersistedDocumentStore` of `@api-blocks/graphql` on PostgreSQL: one row per document, read
 * with a touch of its last use (at most once a minute), written with a prune that keeps the
 * table under a row cap, least recently used first. Each operation is one statement.
 *
 * @module
 */
import type { PersistedDocumentStore } from '@api-blocks/graphql'
import { driverError, PostgresStoreError } from './error.ts'
import { qualified, tableNames } from './internal/names.ts'
import { finite } from './internal/oauth-rows.ts'
import { whole } from './internal/webhook-rows.ts'
import type { PostgresTableOptions } from './migrations.ts'
import type { Queryable } from './queryable.ts'

/**
 * Options of {@link PostgresPersistedDocumentStore}: the connection, where `migrate` put the
 * table, its bounds and the clock of its last-use times.
 *
 * @example
 * ```ts
 * const options: PostgresPersistedDocumentStoreOptions = { db: pool, maxDocuments: 50_000 }
 * const store = new PostgresPersistedDocumentStore(options)
 * ```
 */
export interface PostgresPersistedDocumentStoreOptions extends PostgresTableOptions {
  /** A `pg.Pool`, a `pg.Client`, a PGlite, or anything with `query(text, params)`. */
  db: Queryable
  /** The most documents kept (default 10,000); past it the least recently used are deleted. */
  maxDocuments?: number
  /** The largest document stored, in UTF-8 bytes (default 100 KiB); `set` refuses a larger one. */
  maxDocumentBytes?: number
  /** Milliseconds since the epoch (default `Date.now`): when documents are stored and used. */
  clock?: () => number
}

const DEFAULT_MAX_DOCUMENTS = 10_000
const DEFAULT_MAX_DOCUMENT_BYTES = 100 * 1024
/** A read writes its last use only when the one recorded is older than this: reads stay reads. */
const TOUCH_AFTER_MS = 60_000
/** Ids are 1 to 256 characters (a `sha256:` id is 71). */
const MAX_ID = 256

const encoder = new TextEncoder()
const decoder = new TextDecoder()

function storableId(id: unknown): id is string {
  return typeof id === 'string' && id.length > 0 && id.length <= MAX_ID
}

/**
 * A {@link PersistedDocumentStore} on PostgreSQL, on `pg` or PGlite alike: the documents
 * registered by APQ, or loaded from a manifest, shared by every instance and kept across
 * restarts. Passes `runPersistedDocumentStoreConformance`. Run {@link migrate} first (migration
 * `0006_graphql_persisted_documents`), with the same `schema` and `tablePrefix`.
 *
 * - **`get`** is one statement: the document, and (in a data-modifying `WITH`) its last use set
 *   to now when the one recorded is more than a minute old, so a hot document costs a write a
 *   minute, not one per request. An id outside 1 to 256 characters answers `undefined` without
 *   a statement (ids come from the network).
 * - **`set`** is one statement: `INSERT … ON CONFLICT (id) DO UPDATE` (a new document under a
 *   known id replaces it) and, in the same statement, the deletion of the least recently used
 *   rows past `maxDocuments` (`FOR UPDATE SKIP LOCKED`: concurrent sets never wait on each other
 *   and never deadlock; the cap may be passed by the number of concurrent sets until the next
 *   one). A document over `maxDocumentBytes` (UTF-8), or an id outside 1 to 256 characters, is
 *   refused with a `RangeError` before anything is sent.
 * - **Documents** are stored as UTF-8 `bytea`, so every string comes back exactly, U+0000 too.
 * - **Failures** reject with a {@link PostgresStoreError} (`NOT_MIGRATED` before `migrate`,
 *   else `QUERY_FAILED`, the driver's error as `cause`).
 *
 * @example
 * ```ts
 * import pg from 'pg'
 * import { migrate, PostgresPersistedDocumentStore } from '@api-blocks/postgres'
 *
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL })
 * await migrate(pool)
 * const store = new PostgresPersistedDocumentStore({ db: pool, maxDocuments: 50_000 })
 * await store.set('sha256:ecf4edb46db40b5132295c0291d62fb65d6759a9eedfa4d5d612dd5ec54a6b38', '{ __typename }')
 * ```
 */
export class PostgresPersistedDocumentStore implements PersistedDocumentStore {
  /** The connection the store runs its statements on. */
  readonly db: Queryable
  /** The most documents kept. */
  readonly maxDocuments: number
  /** The largest document stored, in UTF-8 bytes. */
  readonly maxDocumentBytes: number
  readonly #clock: () => number
  readonly #get: string
  readonly #set: string

  constructor(options: PostgresPersistedDocumentStoreOptions) {
    const {
      db,
      clock = Date.now,
      maxDocuments = DEFAULT_MAX_DOCUMENTS,
      maxDocumentBytes = DEFAULT_MAX_DOCUMENT_BYTES,
    } = options
    if (typeof db?.query !== 'function') {
      throw new TypeError(
        'PostgresPersistedDocumentStore: db must have query(text, params) (pg, PGlite)',
      )
    }
    if (typeof clock !== 'function') {
      throw new TypeError('PostgresPersistedDocumentStore: clock must be a function')
    }
    this.maxDocuments = whole(maxDocuments, 'maxDocuments', 1)
    this.maxDocumentBytes = whole(maxDocumentBytes, 'maxDocumentBytes', 1)
    this.db = db
    this.#clock = clock
    const table = qualified(tableNames(options), 'graphql_documents')
    // $1 id, $2 now, $3 touch the last use when it is older than this. A data-modifying WITH
    // runs whether or not the query reads it; `hit` reads the snapshot before the touch.
    this.#get = `WITH hit AS (SELECT document FROM ${table} WHERE id = $1),
touched AS (
  UPDATE ${table} SET last_used_at = $2::double precision
  WHERE id = $1 AND last_used_at < $3::double precision
)
SELECT document FROM hit`
    // $1 id, $2 document, $3 now, $4 how many other rows to keep (maxDocuments - 1). The
    // statement's snapshot does not see the row it inserts: the others are counted apart.
    this.#set = `WITH upserted AS (
  INSERT INTO ${table} AS d (id, document, created_at, last_used_at)
  VALUES ($1, $2, $3::double precision, $3::double precision)
  ON CONFLICT (id) DO UPDATE SET document = EXCLUDED.document, last_used_at = EXCLUDED.last_used_at
  RETURNING 1
), pruned AS (
  DELETE FROM ${table}
  WHERE id IN (
    SELECT id FROM ${table} WHERE id <> $1
    ORDER BY last_used_at DESC, id DESC OFFSET $4
    FOR UPDATE SKIP LOCKED
  )
  RETURNING 1
)
SELECT (SELECT count(*) FROM pruned)::integer AS pruned`
  }

  async get(id: string): Promise<string | undefined> {
    if (!storableId(id)) return undefined
    const now = finite(this.#clock(), 'clock()')
    const rows = await this.#query('get', this.#get, [id, now, now - TOUCH_AFTER_MS])
    const row = rows[0] as { document?: unknown } | undefined
    if (row === undefined) return undefined
    if (!(row.document instanceof Uint8Array)) {
      throw new PostgresStoreError(
        'UNEXPECTED_ROW',
        'graphql-documents.get',
        'The PostgreSQL persisted document store read a row of an unknown shape.',
      )
    }
    return decoder.decode(row.document)
  }

  async set(id: string, document: string): Promise<void> {
    if (!storableId(id)) {
      throw new RangeError(`a persisted document id must be 1 to ${MAX_ID} characters`)
    }
    if (typeof document !== 'string') throw new TypeError('a persisted document is a string')
    // Every UTF-16 code unit is at least one UTF-8 byte: a long text is refused unencoded.
    const bytes = document.length > this.maxDocumentBytes ? undefined : encoder.encode(document)
    if (bytes === undefined || bytes.length > this.maxDocumentBytes) {
      throw new RangeError(`a persisted document is at most ${this.maxDocumentBytes} bytes`)
    }
    const now = finite(this.#clock(), 'clock()')
    await this.#query('set', this.#set, [id, bytes, now, this.maxDocuments - 1])
  }

  async #query(operation: string, text: string, params: unknown[]): Promise<unknown[]> {
    try {
      return (await this.db.query(text, params)).rows
    } catch (cause) {
      throw driverError(`graphql-documents.${operation}`, cause)
    }
  }
}
