/**
 * The embedded, in-process {@link PersistedDocumentStore}: one `Map` in least-recently-used
 * order, bounded by a document count, a per-document size and a total byte budget.
 *
 * @module
 */
import type { PersistedDocumentStore } from './store.ts'
import { MAX_DOCUMENT_ID_LENGTH } from './store.ts'

/**
 * Options of {@link MemoryPersistedDocumentStore}.
 *
 * @example
 * ```ts
 * const options: MemoryPersistedDocumentStoreOptions = { maxDocuments: 5_000, maxDocumentBytes: 64 * 1024 }
 * const store = new MemoryPersistedDocumentStore(options)
 * ```
 */
export interface MemoryPersistedDocumentStoreOptions {
  /** The most documents held at once (default 1,000); past it the least recently used goes. */
  readonly maxDocuments?: number
  /** The largest document stored, in UTF-8 bytes (default 100 KiB); `set` refuses a larger one. */
  readonly maxDocumentBytes?: number
  /**
   * The most UTF-8 bytes of documents held at once (default 16 MiB); past it the least recently
   * used documents go. With the count alone, 1,000 documents of 100 KiB would hold 100 MB.
   */
  readonly maxTotalBytes?: number
}

/** A stored document. */
interface Entry {
  readonly document: string
  readonly bytes: number
  /** The value of the store's move counter when the entry was last put at the end. */
  placed: number
}

const DEFAULT_MAX_DOCUMENTS = 1000
const DEFAULT_MAX_DOCUMENT_BYTES = 100 * 1024
const DEFAULT_MAX_TOTAL_BYTES = 16 * 1024 * 1024

/** Whether `id` is one a store can hold: a string of 1 to 256 characters. */
function isStorableId(id: unknown): id is string {
  return typeof id === 'string' && id.length > 0 && id.length <= MAX_DOCUMENT_ID_LENGTH
}

/**
 * The UTF-8 byte length of `text` (a lone surrogate counts 3, as `TextEncoder` writes U+FFFD),
 * or `limit + 1` as soon as it is known to be over `limit`: nothing is allocated.
 */
function utf8Length(text: string, limit: number): number {
  // Every UTF-16 code unit is at least one UTF-8 byte.
  if (text.length > limit) return limit + 1
  let bytes = 0
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i)
    if (unit < 0x80) bytes += 1
    else if (unit < 0x800) bytes += 2
    else if (unit >= 0xd800 && unit <= 0xdbff && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4
      i++
    } else bytes += 3
  }
  return bytes
}

function positive(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new RangeError(`MemoryPersistedDocumentStore: ${name} must be a positive integer`)
  }
  return value
}

/**
 * An in-memory {@link PersistedDocumentStore}, the default of the GraphQL endpoint: APQ
 * registrations and a loaded manifest live in the process (each instance of a service holds its
 * own; use the Redis or PostgreSQL store of `@api-blocks/redis` or `@api-blocks/postgres` to
 * share them). Every operation is O(1) and answers a promise already settled.
 *
 * - **Least recently used goes first**: every `set`, and a `get` that finds a document in the
 *   older half of the order, make it the most recently used (a document read again while still
 *   in the newer half stays where it is: a read costs no reordering, and the document is at
 *   least `maxDocuments / 2` stores away from eviction); when a `set` would pass `maxDocuments` or
 *   `maxTotalBytes`, the least recently used documents are dropped.
 * - **`set`** stores `document` under `id` (a new document under a known id replaces it). An id
 *   outside 1 to 256 characters, or a document over `maxDocumentBytes` (UTF-8), is a rejected
 *   promise with a `RangeError`, and nothing is stored.
 * - **`get`** of an id the store cannot hold (not a string of 1 to 256 characters) answers
 *   `undefined`: ids come from the network.
 *
 * @example
 * ```ts
 * const store = new MemoryPersistedDocumentStore({ maxDocuments: 5_000 })
 * await store.set('sha256:8d5e1d6b…', '{ __typename }')
 * await store.get('sha256:8d5e1d6b…') // '{ __typename }'
 * ```
 */
export class MemoryPersistedDocumentStore implements PersistedDocumentStore {
  /** The most documents held at once. */
  readonly maxDocuments: number
  /** The largest document stored, in UTF-8 bytes. */
  readonly maxDocumentBytes: number
  /** The most UTF-8 bytes of documents held at once. */
  readonly maxTotalBytes: number
  /** Id → document, its size and when it was last put at the end of the order. */
  readonly #documents = new Map<string, Entry>()
  #bytes = 0
  /** Counts the moves to the end of the order (a `set`, or a `get` that moves its entry). */
  #tick = 0

  constructor(options: MemoryPersistedDocumentStoreOptions = {}) {
    this.maxDocuments = positive(options.maxDocuments ?? DEFAULT_MAX_DOCUMENTS, 'maxDocuments')
    this.maxDocumentBytes = positive(
      options.maxDocumentBytes ?? DEFAULT_MAX_DOCUMENT_BYTES,
      'maxDocumentBytes',
    )
    this.maxTotalBytes = positive(options.maxTotalBytes ?? DEFAULT_MAX_TOTAL_BYTES, 'maxTotalBytes')
    if (this.maxTotalBytes < this.maxDocumentBytes) {
      throw new RangeError(
        'MemoryPersistedDocumentStore: maxTotalBytes must be at least maxDocumentBytes',
      )
    }
  }

  /** How many documents are held. */
  get size(): number {
    return this.#documents.size
  }

  /** The UTF-8 bytes of the documents held. */
  get bytes(): number {
    return this.#bytes
  }

  get(id: string): Promise<string | undefined> {
    if (!isStorableId(id)) return Promise.resolve(undefined)
    const entry = this.#documents.get(id)
    if (entry === undefined) return Promise.resolve(undefined)
    // Most recently used: to the end of the Map's insertion order, but only from the older half
    // (placed more than size / 2 moves ago). Deleting and adding a key on every read costs V8's
    // Map about 2 µs (its deleted slots fill the table), 300 times a plain lookup; a document in
    // the newer half is at least size / 2 moves away from eviction anyway.
    if (this.#tick - entry.placed > this.#documents.size / 2) {
      this.#documents.delete(id)
      entry.placed = ++this.#tick
      this.#documents.set(id, entry)
    }
    return Promise.resolve(entry.document)
  }

  set(id: string, document: string): Promise<void> {
    if (!isStorableId(id)) {
      return Promise.reject(
        new RangeError(
          `MemoryPersistedDocumentStore: an id is 1 to ${MAX_DOCUMENT_ID_LENGTH} characters`,
        ),
      )
    }
    if (typeof document !== 'string') {
      return Promise.reject(new TypeError('MemoryPersistedDocumentStore: a document is a string'))
    }
    const bytes = utf8Length(document, this.maxDocumentBytes)
    if (bytes > this.maxDocumentBytes) {
      return Promise.reject(
        new RangeError(
          `MemoryPersistedDocumentStore: a document is at most ${this.maxDocumentBytes} bytes`,
        ),
      )
    }
    const current = this.#documents.get(id)
    if (current !== undefined) {
      this.#documents.delete(id)
      this.#bytes -= current.bytes
    }
    this.#documents.set(id, { document, bytes, placed: ++this.#tick })
    this.#bytes += bytes
    // Evict from the least recently used end; never the document just stored (it fits alone).
    for (const [oldest, entry] of this.#documents) {
      if (this.#documents.size <= this.maxDocuments && this.#bytes <= this.maxTotalBytes) break
      this.#documents.delete(oldest)
      this.#bytes -= entry.bytes
    }
    return Promise.resolve()
  }
}
