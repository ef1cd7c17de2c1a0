/**
 * `PersistedDocumentStore` of `@api-blocks/graphql` on Redis: one key per document id, its time
 * to live refreshed on every read, so documents in use stay and forgotten ones expire.
 *
 * @module
 */
import type { PersistedDocumentStore } from '@api-blocks/graphql'
import type { RedisScriptClient } from './client.ts'
import { RedisStoreError } from './error.ts'
import { GET, SET } from './internal/persisted-document-scripts.ts'
import { replyText, runScript } from './internal/script.ts'

/**
 * Options of {@link RedisPersistedDocumentStore}.
 *
 * @example
 * ```ts
 * const options: RedisPersistedDocumentStoreOptions = { client, prefix: 'orders-api:graphql:', ttlMs: 86_400_000 }
 * const store = new RedisPersistedDocumentStore(options)
 * ```
 */
export interface RedisPersistedDocumentStoreOptions {
  /**
   * A connected client: `await createClient({ url }).connect()` from node-redis (a cluster or a
   * sentinel works too), or anything that implements {@link RedisScriptClient}. The store
   * never connects, reconnects or closes it; give it its timeouts (`socket.socketTimeout`,
   * `commandOptions`) and an `'error'` listener.
   */
  client: RedisScriptClient
  /** Put before every id (default `api-blocks:graphql-documents:`). */
  prefix?: string
  /**
   * How long a document is kept after it was last stored or read, in milliseconds (default 7
   * days); `Infinity` keeps documents until deleted (an allow-list loaded from a manifest that
   * must never expire; bound the database with `maxmemory` and an `allkeys-lru` policy then).
   */
  ttlMs?: number
  /** The largest document stored, in UTF-8 bytes (default 100 KiB); `set` refuses a larger one. */
  maxDocumentBytes?: number
}

const DEFAULT_PREFIX = 'api-blocks:graphql-documents:'
const DEFAULT_TTL_MS = 7 * 86_400_000
const DEFAULT_MAX_DOCUMENT_BYTES = 100 * 1024
/** Ids are 1 to 256 characters (a `sha256:` id is 71). */
const MAX_ID = 256

function storableId(id: unknown): id is string {
  return typeof id === 'string' && id.length > 0 && id.length <= MAX_ID
}

/**
 * A {@link PersistedDocumentStore} on Redis: the documents registered by APQ, or loaded from a
 * manifest, shared by every instance of a service. Passes `runPersistedDocumentStoreConformance`
 * against a real server.
 *
 * - **`get`** is `GET` and, when found, `PEXPIRE` with `ttlMs` in one `EVALSHA` (one round trip):
 *   a document in use stays, one unused for `ttlMs` expires. An id outside 1 to 256 characters
 *   answers `undefined` without a round trip (ids come from the network).
 * - **`set`** is `SET … PX ttlMs` in one `EVALSHA`; a new document under a known id replaces it.
 *   A document over `maxDocumentBytes` (UTF-8), or an id outside 1 to 256 characters, is refused
 *   with a `RangeError` before anything is sent.
 * - **Bounded** by time (`ttlMs`): Redis keeps no count of its own. With `ttlMs: Infinity`, bound
 *   the database with `maxmemory` and an eviction policy.
 * - **Failures** reject with a {@link RedisStoreError} (`COMMAND_FAILED`, the client's error as
 *   `cause`; a reply of another type `UNEXPECTED_REPLY`).
 *
 * @example
 * ```ts
 * import { RedisPersistedDocumentStore } from '@api-blocks/redis'
 * import { createClient } from 'redis'
 *
 * const client = await createClient({ url: process.env.REDIS_URL }).on('error', console.error).connect()
 * const store = new RedisPersistedDocumentStore({ client, prefix: 'orders-api:graphql:' })
 * await store.set('sha256:ecf4edb46db40b5132295c0291d62fb65d6759a9eedfa4d5d612dd5ec54a6b38', '{ __typename }')
 * ```
 */
export class RedisPersistedDocumentStore implements PersistedDocumentStore {
  /** The client the store runs its scripts on. */
  readonly client: RedisScriptClient
  /** The prefix of every Redis key the store writes. */
  readonly prefix: string
  /** How long an unused document is kept, in milliseconds (`Infinity`: until deleted). */
  readonly ttlMs: number
  /** The largest document stored, in UTF-8 bytes. */
  readonly maxDocumentBytes: number
  readonly #ttl: string

  constructor(options: RedisPersistedDocumentStoreOptions) {
    const {
      client,
      prefix = DEFAULT_PREFIX,
      ttlMs = DEFAULT_TTL_MS,
      maxDocumentBytes = DEFAULT_MAX_DOCUMENT_BYTES,
    } = options
    if (typeof client?.evalSha !== 'function' || typeof client.eval !== 'function') {
      throw new TypeError(
        'RedisPersistedDocumentStore: client must have evalSha and eval (node-redis)',
      )
    }
    if (typeof prefix !== 'string') {
      throw new TypeError('RedisPersistedDocumentStore: prefix must be a string')
    }
    if (ttlMs !== Number.POSITIVE_INFINITY && !(Number.isSafeInteger(ttlMs) && ttlMs >= 1)) {
      throw new RangeError(
        'RedisPersistedDocumentStore: ttlMs must be a positive integer or Infinity',
      )
    }
    if (!Number.isSafeInteger(maxDocumentBytes) || maxDocumentBytes < 1) {
      throw new RangeError(
        'RedisPersistedDocumentStore: maxDocumentBytes must be a positive integer',
      )
    }
    this.client = client
    this.prefix = prefix
    this.ttlMs = ttlMs
    this.maxDocumentBytes = maxDocumentBytes
    this.#ttl = ttlMs === Number.POSITIVE_INFINITY ? '0' : String(ttlMs)
  }

  async get(id: string): Promise<string | undefined> {
    if (!storableId(id)) return undefined
    let reply: unknown
    try {
      reply = await runScript(this.client, GET, [this.prefix + id], [this.#ttl])
    } catch (cause) {
      throw failed('get', cause)
    }
    if (reply === null || reply === undefined) return undefined
    const document = replyText(reply)
    if (document === undefined) {
      throw new RedisStoreError(
        'UNEXPECTED_REPLY',
        'graphql-documents.get',
        'The Redis persisted document store read a reply of an unknown shape (get).',
      )
    }
    return document
  }

  async set(id: string, document: string): Promise<void> {
    if (!storableId(id))
      throw new RangeError(`a persisted document id must be 1 to ${MAX_ID} characters`)
    if (typeof document !== 'string') throw new TypeError('a persisted document is a string')
    // Every UTF-16 code unit is at least one UTF-8 byte: a long text is refused unencoded.
    if (
      document.length > this.maxDocumentBytes ||
      Buffer.byteLength(document, 'utf8') > this.maxDocumentBytes
    ) {
      throw new RangeError(`a persisted document is at most ${this.maxDocumentBytes} bytes`)
    }
    try {
      await runScript(this.client, SET, [this.prefix + id], [document, this.#ttl])
    } catch (cause) {
      throw failed('set', cause)
    }
  }
}

function failed(operation: string, cause: unknown): RedisStoreError {
  return new RedisStoreError(
    'COMMAND_FAILED',
    `graphql-documents.${operation}`,
    `The Redis persisted document store could not ${operation} a document.`,
    { cause },
  )
}
