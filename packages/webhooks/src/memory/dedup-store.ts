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
/** A remembered id. */
interface Entry {
  readonly expiresAt: number
  readonly seq: number
}

/** The contract's longest id. */
const MAX_ID_LENGTH = 256

/**
 * An in-memory {@link DedupStore}. Atomic because `claim` runs synchronously to its end on the
 * one JavaScript thread: of concurrent claims of one id exactly one answers `true`. Every
 * operation answers a promise (an id outside 1 to 256 characters, or a TTL that is not a
 * positive finite number, is a rejected promise with a `RangeError`).
 *
 * A record is expired at its end (`expiresAt <= clock()`) and is then replaced by the next
 * claim; a released record is kept as an expired one. Records are kept in the order they
 * were made (a claim that replaces a record moves it to the end); when a claim of a new id
 * would pass `maxRecords`, expired records at the front are dropped, then the oldest live
 * one. Each operation costs O(1) amortised.
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
  /** Id → its record: when it expires (ms since the epoch) and when it was made. */
  readonly #records = new Map<string, Entry>()
  /**
   * The records in the order they were made, from `#head`; an item whose record was released
   * or replaced since is skipped (its `seq` no longer matches). Compacted as it grows.
   */
  #order: { readonly id: string; readonly seq: number }[] = []
  #head = 0
  #seq = 0

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
    const current = this.#records.get(id)
    if (current !== undefined && now < current.expiresAt) return Promise.resolve(false)
    // An expired or released record is replaced in place: V8's Map keeps a deleted key's
    // entry in its bucket until the next rehash, so deleting and adding one id again and
    // again would make each lookup of it slower and slower.
    if (current === undefined && this.#records.size >= this.maxRecords) this.#evict(now)
    const seq = this.#seq++
    this.#records.set(id, { expiresAt: now + ttlMs, seq })
    this.#order.push({ id, seq })
    if (this.#order.length - this.#head > 2 * Math.max(this.#records.size, 1024)) this.#compact()
    return Promise.resolve(true)
  }

  release(id: string): Promise<void> {
    const current = this.#records.get(id)
    // Marked expired rather than deleted (see `claim`): it still counts towards the bound
    // until eviction reaches it or a claim of the id replaces it.
    if (current !== undefined)
      this.#records.set(id, { expiresAt: Number.NEGATIVE_INFINITY, seq: current.seq })
    return Promise.resolve()
  }

  /** Drops the expired records at the front of the order, or else the oldest record. */
  #evict(now: number): void {
    let dropped = false
    while (this.#head < this.#order.length) {
      const { id, seq } = this.#order[this.#head]!
      const record = this.#records.get(id)
      if (record === undefined || record.seq !== seq) {
        this.#head++
        continue
      }
      const live = now < record.expiresAt
      if (live && dropped) break
      this.#records.delete(id)
      this.#head++
      dropped = true
      if (live) break
    }
    if (this.#head > 1024 && this.#head * 2 > this.#order.length) this.#compact()
  }

  /** Forgets the order items of released, replaced and dropped records. */
  #compact(): void {
    this.#order = this.#order
      .slice(this.#head)
      .filter(({ id, seq }) => this.#records.get(id)?.seq === seq)
    this.#head = 0
  }
}
