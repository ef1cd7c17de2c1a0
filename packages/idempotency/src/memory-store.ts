/**
 * The embedded, in-process store: one `Map`, bounded in records and bytes, with no timers.
 * The reference service runs on it when no `REDIS_URL` or `DATABASE_URL` is set; several
 * processes behind a load balancer need a shared store (Redis, PostgreSQL).
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
} from './store.ts'

/**
 * Options of {@link MemoryIdempotencyStore}.
 *
 * @example
 * ```ts
 * const options: MemoryIdempotencyStoreOptions = { maxRecords: 50_000, maxBytes: 256 * 1024 * 1024, onEvict: () => evictions++ }
 * const store = new MemoryIdempotencyStore(options)
 * ```
 */
export interface MemoryIdempotencyStoreOptions {
  /** The most records held at once (default 10,000). */
  maxRecords?: number
  /**
   * The most bytes of stored responses held at once, bodies and header fields counted
   * (default 64 MiB).
   */
  maxBytes?: number
  /**
   * Called with the store key of a completed record evicted before its retention ended
   * (a retry of it would execute again). Frequent calls mean the limits are too small.
   * Errors thrown here are ignored.
   */
  onEvict?: (key: string) => void
}

interface Entry {
  state: 'claimed' | 'completed'
  fingerprint: string
  owner: string
  leaseExpiresAt: number
  /** End of retention: set by checkpoint and complete. */
  expiresAt: number
  recoveryPoint: string | undefined
  response: StoredResponse | undefined
  bytes: number
}

const SWEEP_STEPS = 2

/** When an entry becomes logically absent (see the contract of `IdempotencyStore`). */
function endOf(entry: Entry): number {
  if (entry.state === 'completed') return entry.expiresAt
  return entry.recoveryPoint === undefined ? entry.leaseExpiresAt : entry.expiresAt
}

function copyResponse(response: StoredResponse): StoredResponse {
  return {
    status: response.status,
    headers: response.headers.map(([name, value]) => [name, value] as const),
    // A copy in a fresh buffer: `slice()` on a Node Buffer would be a view of its pool.
    body: new Uint8Array(response.body),
  }
}

function sizeOf(response: StoredResponse): number {
  let bytes = response.body.byteLength
  for (const [name, value] of response.headers) bytes += name.length + value.length
  return bytes
}

/**
 * An in-memory {@link IdempotencyStore}. Atomic because each operation runs synchronously to
 * completion on the one JavaScript thread.
 *
 * Memory stays bounded:
 * - **Expiry**: a record past its logical end (a claim whose lease ended, a completed record
 *   past retention) is dropped on access and by an incremental sweep that visits two records
 *   per operation, so every record is looked at within one pass over the map, without timers.
 * - **Capacity**: at `maxRecords` or `maxBytes`, expired records are swept, then the oldest
 *   completed records are evicted (reported to `onEvict`) until a sixteenth of the capacity is
 *   free, so the sweep is paid once per many inserts: evicted records' retries would execute
 *   again.
 *   Live claims and resumable records are never evicted; when only they remain, `claim`
 *   rejects, which the middleware answers with 503 (fail closed).
 *
 * @example
 * ```ts
 * const store = new MemoryIdempotencyStore({ maxRecords: 50_000 })
 * const middleware = idempotency({ store, scope: 'tenant-1' })
 * ```
 */
export class MemoryIdempotencyStore implements IdempotencyStore {
  readonly #entries = new Map<string, Entry>()
  readonly #maxRecords: number
  readonly #maxBytes: number
  readonly #onEvict: ((key: string) => void) | undefined
  #bytes = 0
  #cursor: MapIterator<[string, Entry]> | undefined

  constructor(options: MemoryIdempotencyStoreOptions = {}) {
    const { maxRecords = 10_000, maxBytes = 64 * 1024 * 1024 } = options
    if (!Number.isInteger(maxRecords) || maxRecords < 1) {
      throw new RangeError('maxRecords must be a positive integer')
    }
    if (!Number.isInteger(maxBytes) || maxBytes < 1) {
      throw new RangeError('maxBytes must be a positive integer')
    }
    this.#maxRecords = maxRecords
    this.#maxBytes = maxBytes
    this.#onEvict = options.onEvict
  }

  /** How many records are held, expired ones not yet swept included. */
  get size(): number {
    return this.#entries.size
  }

  /** How many bytes of stored responses are held. */
  get bytes(): number {
    return this.#bytes
  }

  async claim(key: string, claim: IdempotencyClaim): Promise<IdempotencyClaimResult> {
    const { fingerprint, owner, leaseMs, now } = claim
    this.#sweep(now, SWEEP_STEPS)
    const entry = this.#live(key, now)
    if (entry === undefined) {
      this.#makeRoom(now)
      this.#entries.set(key, {
        state: 'claimed',
        fingerprint,
        owner,
        leaseExpiresAt: now + leaseMs,
        expiresAt: now + leaseMs,
        recoveryPoint: undefined,
        response: undefined,
        bytes: 0,
      })
      return { state: 'claimed' }
    }
    if (entry.fingerprint !== fingerprint) return { state: 'mismatch' }
    if (entry.state === 'completed') {
      return { state: 'completed', response: copyResponse(entry.response as StoredResponse) }
    }
    if (entry.leaseExpiresAt > now) {
      return { state: 'in-flight', leaseExpiresAt: entry.leaseExpiresAt }
    }
    // Resumable: a new owner takes over and learns how far the last one got.
    entry.owner = owner
    entry.leaseExpiresAt = now + leaseMs
    return { state: 'claimed', recoveryPoint: entry.recoveryPoint }
  }

  async complete(key: string, owner: string, completion: IdempotencyCompletion): Promise<boolean> {
    const { response, retentionMs, now } = completion
    const entry = this.#live(key, now)
    if (!this.#ownsLiveLease(entry, owner, now)) return false
    const bytes = sizeOf(response)
    if (bytes > this.#maxBytes) {
      throw new RangeError(`A response of ${bytes} bytes is over maxBytes (${this.#maxBytes})`)
    }
    // Room first, so that a failure leaves the record as it was; a sixteenth of the capacity
    // at once, as #makeRoom does.
    if (this.#bytes + bytes > this.#maxBytes) {
      const target = this.#maxBytes - Math.floor(this.#maxBytes / 16)
      this.#evictWhile(now, () => this.#bytes + bytes > target)
    }
    if (this.#bytes + bytes > this.#maxBytes) {
      throw new RangeError(`MemoryIdempotencyStore is full: no room for ${bytes} bytes (maxBytes)`)
    }
    const completed = entry as Entry
    completed.state = 'completed'
    completed.expiresAt = now + retentionMs
    completed.recoveryPoint = undefined
    completed.response = copyResponse(response)
    completed.bytes = bytes
    this.#bytes += bytes
    // Re-inserted, so the map's order is completion order: eviction takes the oldest first.
    this.#entries.delete(key)
    this.#entries.set(key, completed)
    return true
  }

  async release(key: string, owner: string): Promise<boolean> {
    const entry = this.#entries.get(key)
    if (entry === undefined || entry.state !== 'claimed' || entry.owner !== owner) return false
    if (entry.recoveryPoint === undefined) this.#delete(key, entry)
    else entry.leaseExpiresAt = 0
    return true
  }

  async checkpoint(
    key: string,
    owner: string,
    checkpoint: IdempotencyCheckpoint,
  ): Promise<boolean> {
    const { recoveryPoint, retentionMs, now } = checkpoint
    const entry = this.#live(key, now)
    if (!this.#ownsLiveLease(entry, owner, now)) return false
    const claimed = entry as Entry
    claimed.recoveryPoint = recoveryPoint
    claimed.expiresAt = now + retentionMs
    return true
  }

  #ownsLiveLease(entry: Entry | undefined, owner: string, now: number): boolean {
    return (
      entry !== undefined &&
      entry.state === 'claimed' &&
      entry.owner === owner &&
      entry.leaseExpiresAt > now
    )
  }

  /** The entry of `key` if it is not logically absent; an expired one is dropped. */
  #live(key: string, now: number): Entry | undefined {
    const entry = this.#entries.get(key)
    if (entry === undefined) return undefined
    if (endOf(entry) <= now) {
      this.#delete(key, entry)
      return undefined
    }
    return entry
  }

  #delete(key: string, entry: Entry): void {
    this.#entries.delete(key)
    this.#bytes -= entry.bytes
  }

  /** Visits up to `steps` entries from where the last sweep stopped, dropping expired ones. */
  #sweep(now: number, steps: number): void {
    for (let step = 0; step < steps && this.#entries.size > 0; step++) {
      this.#cursor ??= this.#entries.entries()
      const next = this.#cursor.next()
      if (next.done) {
        this.#cursor = undefined
        continue
      }
      const [key, entry] = next.value
      if (endOf(entry) <= now) this.#delete(key, entry)
    }
  }

  /**
   * Before a new record: room for one more. A full store frees a sixteenth of its capacity at
   * once, so the scan for expired records is paid once per many inserts, not on each.
   */
  #makeRoom(now: number): void {
    if (this.#entries.size < this.#maxRecords) return
    const target = this.#maxRecords - Math.max(1, Math.floor(this.#maxRecords / 16))
    this.#evictWhile(now, () => this.#entries.size > target)
    if (this.#entries.size >= this.#maxRecords) {
      throw new RangeError(
        `MemoryIdempotencyStore is full: ${this.#entries.size} live claims (maxRecords)`,
      )
    }
  }

  /**
   * While `over()`: drops every expired record, then evicts completed records, oldest first.
   * Live claims and resumable records are never evicted.
   */
  #evictWhile(now: number, over: () => boolean): void {
    if (!over()) return
    for (const [key, entry] of this.#entries) {
      if (endOf(entry) <= now) this.#delete(key, entry)
    }
    for (const [key, entry] of this.#entries) {
      if (!over()) return
      if (entry.state !== 'completed') continue
      this.#delete(key, entry)
      try {
        this.#onEvict?.(key)
      } catch {
        // An observer must not change the answer.
      }
    }
  }
}
