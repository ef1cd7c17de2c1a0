/**
 * The embedded, in-process {@link DedupStore}: one `Map` of expiry times in insertion order,
 * bounded, with no timers. It is the receiver's default; several receiving processes need a
 * shared store (`RedisDedupStore` of `@api-blocks/redis`, `PostgresDedupStore` of
 * `@api-blocks/postgres`), or a repeat that lands on another process runs its handler again.
 *
 * @module
 */
import type { DedupStore } from '../dedup-store.ts'

/**
 * Options of {@link MemoryDedupStore}.
 *
 * @example
 * ```ts
 * const options: MemoryDedupStoreOptions = { maxRecords: 10_000 }
 * const store = new MemoryDedupStore(options)
 * ```
 */
export interface MemoryDedupStoreOptions {
  /**
   * The most ids remembered at once (default 100,000). Past it the oldest record is forgotten
   * (a repeat of that id would then run its handler again): size it above the deliveries
   * received in one TTL.
   */
  readonly maxRecords?: number
  /** Milliseconds since the epoch (default `Date.now`): when records expire. */
  readonly clock?: () => number
}

const DEFAULT_MAX_RECORDS = 100_000
/** The contract's longest id. */
const MAX_ID_LENGTH = 256

/**
 * An in-memory {@link DedupStore}. Atomic because `claim` runs synchronously to its end on the
 * one JavaScript thread: of concurrent claims of one id exactly one answers `true`. Every
 * operation answers a promise (an id outside 1 to 256 characters, or a TTL that is not a
 * positive finite number, is a rejected promise with a `RangeError`).
 *
 * A record is expired at its end (`expiresAt <= clock()`) and is then replaced by the next
 * claim. Records are kept in the order they were made (a claim that replaces an expired
 * record moves it to the end); when a claim would pass `maxRecords`, expired records at the
 * front are dropped, then the oldest live one.
 *
 * @example
 * ```ts
 * const store = new MemoryDedupStore()
 * await store.claim('msg_2KWPBgLlAfxdpx2AI54pPJ85f4W', 86_400_000) // true: the first delivery
 * await store.claim('msg_2KWPBgLlAfxdpx2AI54pPJ85f4W', 86_400_000) // false: a repeat
 * ```
 */
export class MemoryDedupStore implements DedupStore {
  /** The most ids remembered at once. */
  readonly maxRecords: number
  readonly #clock: () => number
  /** Id → when its record expires, ms since the epoch; oldest first. */
  readonly #records = new Map<string, number>()

  constructor(options: MemoryDedupStoreOptions = {}) {
    const max = options.maxRecords ?? DEFAULT_MAX_RECORDS
    if (!Number.isSafeInteger(max) || max < 1) {
      throw new RangeError('MemoryDedupStore: maxRecords must be a positive integer')
    }
    this.maxRecords = max
    this.#clock = options.clock ?? Date.now
  }

  /** How many records are held (expired ones not yet dropped included). */
  get size(): number {
    return this.#records.size
  }

  claim(id: string, ttlMs: number): Promise<boolean> {
    if (id.length < 1 || id.length > MAX_ID_LENGTH) {
      return Promise.reject(new RangeError('MemoryDedupStore: an id is 1 to 256 characters'))
    }
    if (!Number.isFinite(ttlMs) || ttlMs <= 0) {
      return Promise.reject(new RangeError('MemoryDedupStore: ttlMs must be a positive number'))
    }
    const now = this.#clock()
    const expiresAt = this.#records.get(id)
    if (expiresAt !== undefined) {
      if (now < expiresAt) return Promise.resolve(false)
      this.#records.delete(id)
    }
    while (this.#records.size >= this.maxRecords) this.#dropOldest(now)
    this.#records.set(id, now + ttlMs)
    return Promise.resolve(true)
  }

  release(id: string): Promise<void> {
    this.#records.delete(id)
    return Promise.resolve()
  }

  /** Drops the expired records at the front, or else the oldest record. */
  #dropOldest(now: number): void {
    let dropped = false
    for (const [id, expiresAt] of this.#records) {
      if (expiresAt > now && dropped) break
      this.#records.delete(id)
      dropped = true
      if (expiresAt > now) break
    }
  }
}
