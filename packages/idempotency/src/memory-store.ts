/**
 * The embedded, in-process store: one `Map`, bounded in records and bytes, with no timers.
 * The reference service runs on it when no `REDIS_URL` or `DATABASE_URL` is set; several
 * processes behind a load balancer need a shared store (Redis, PostgreSQL).
 *
 * @module
 */
import type { BodyHolder } from './internal/body-blocks.ts'
import { BodyBlocks } from './internal/body-blocks.ts'
import type { ScopedRecord } from './internal/scopes.ts'
import { Scope, ScopeHeap } from './internal/scopes.ts'
import type {
  IdempotencyCheckpoint,
  IdempotencyClaim,
  IdempotencyClaimResult,
  IdempotencyCompletion,
  IdempotencyStore,
  StoredResponse,
} from './store.ts'

/**
 * Why {@link MemoryIdempotencyStore} evicted a completed record before its retention ended, and
 * whose it was: what `onEvict` is told.
 *
 * @example
 * ```ts
 * const onEvict = (key: string, eviction: MemoryEviction) => {
 *   if (eviction.reason === 'scope') console.warn(`${eviction.scope} holds maxRecordsPerScope keys`)
 * }
 * ```
 */
export interface MemoryEviction {
  /** The scope of the claim that made the record (`IdempotencyClaim.scope`), if it named one. */
  readonly scope: string | undefined
  /**
   * `scope`: its own scope reached `maxRecordsPerScope`; `capacity`: the store reached
   * `maxRecords` or `maxBytes`, and the record's scope held the most records (or bytes).
   */
  readonly reason: 'scope' | 'capacity'
}

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
   * The most records one scope holds at once (default a tenth of `maxRecords`: 1,000), for
   * claims that name their scope (the middleware's always do: the principal, or `ip:<address>`).
   * A scope at its bound gives up its own oldest completed record for a new claim (reported to
   * `onEvict`); one whose records are all live claims is refused (`claim` answers `scope-full`: 429). So one
   * client's flood never evicts another's keys. A service whose `scope` option is one fixed
   * string puts every request in one scope: set this to `maxRecords` there.
   */
  maxRecordsPerScope?: number
  /**
   * The most bytes of stored responses held at once (default 64 MiB): the memory the bodies
   * hold (a shared block counts whole, see the class description) plus the header fields' text.
   * A true bound: a response that does not fit once completed records are evicted is refused.
   */
  maxBytes?: number
  /**
   * Called with the store key of a completed record evicted before its retention ended (a
   * retry of it would execute again), with whose it was and why. Frequent calls with reason
   * `capacity` mean the limits are too small; with reason `scope`, that one caller sends more
   * keys than `maxRecordsPerScope` within the retention. Errors thrown here are ignored.
   */
  onEvict?: (key: string, eviction: MemoryEviction) => void
}

// One flat object per record, the stored response's parts inline: a record lives through
// several young-generation collections before it is promoted, and every object in it is
// copied each time.
interface Entry extends BodyHolder, ScopedRecord {
  /** The store key, for an eviction that finds the record through its scope. */
  readonly key: string
  state: 'claimed' | 'completed'
  fingerprint: string
  owner: string
  leaseExpiresAt: number
  /** End of retention: set by checkpoint and complete. */
  expiresAt: number
  recoveryPoint: string | undefined
  status: number
  /** The stored header fields, flat: name, value, name, value … */
  headers: readonly string[]
  /** The header fields' text, in characters: what they count for in `maxBytes`. */
  headerBytes: number
}

const SWEEP_STEPS = 2
const NO_HEADERS: readonly string[] = []

/** When an entry becomes logically absent (see the contract of `IdempotencyStore`). */
function endOf(entry: Entry): number {
  if (entry.state === 'completed') return entry.expiresAt
  return entry.recoveryPoint === undefined ? entry.leaseExpiresAt : entry.expiresAt
}

// The stored response as the caller gets it: its own arrays, a body in a fresh buffer.
function responseOf(entry: Entry): StoredResponse {
  const flat = entry.headers
  const headers: (readonly [string, string])[] = []
  for (let index = 0; index < flat.length; index += 2) {
    headers.push([flat[index] as string, flat[index + 1] as string])
  }
  return { status: entry.status, headers, body: new Uint8Array(entry.body as Uint8Array) }
}

/**
 * An in-memory {@link IdempotencyStore}. Atomic because each operation runs synchronously to
 * completion on the one JavaScript thread; every operation answers a promise, as the contract
 * asks (already settled: a failure is a rejected promise, never a throw).
 *
 * Memory stays bounded:
 * - **Expiry**: a record past its logical end (a claim whose lease ended, a completed record
 *   past retention) is dropped on access and by an incremental sweep that visits two records
 *   per operation, so every record is looked at within one pass over the map, without timers.
 * - **Per scope**: a claim names its scope (the caller: `IdempotencyClaim.scope`). A scope at
 *   `maxRecordsPerScope` drops its own expired records, then evicts its own completed ones,
 *   oldest first (in the order they completed), until a sixteenth of its bound is free; if only
 *   live claims and resumable records of its own are left, its claim rejects. Another scope's
 *   records are never touched for it.
 * - **Capacity**: at `maxRecords` or `maxBytes`, expired records are dropped, then completed
 *   ones evicted from the scope that holds the most records (or bytes, for `maxBytes`), its
 *   oldest first, then again from whichever holds the most, until a sixteenth of the capacity
 *   is free, so the pass is paid once per many inserts. A caller with few keys keeps them while
 *   any other holds more. Every eviction is reported to `onEvict` (its retry would execute
 *   again). Live claims and resumable records are never evicted; when only they remain,
 *   `claim` rejects, which the middleware answers with 503 (fail closed).
 * - **Bodies**: with `maxBytes` of 512 KiB or more, a stored body of up to 2 KiB is copied into
 *   a shared 8 KiB block (as Node's Buffer pool does), freed with the last record in it; larger
 *   bodies, and every body under a smaller `maxBytes`, get a buffer of their own. `maxBytes`
 *   counts a block whole for as long as any record holds a slice of it, so it bounds the memory
 *   really held (one long-lived record among short-lived ones keeps, and is counted for, its
 *   whole block). Replays always get a buffer of their own.
 *
 * @example
 * ```ts
 * const store = new MemoryIdempotencyStore({ maxRecords: 50_000 })
 * const middleware = idempotency({ store, scope: 'tenant-1' })
 * ```
 */
export class MemoryIdempotencyStore implements IdempotencyStore {
  readonly #entries = new Map<string, Entry>()
  /** Scopes with at least one record; claims that name no scope share #unscoped. */
  readonly #scopes = new Map<string, Scope>()
  readonly #unscoped = new Scope(undefined)
  readonly #maxRecords: number
  readonly #maxBytes: number
  readonly #maxPerScope: number
  readonly #onEvict: ((key: string, eviction: MemoryEviction) => void) | undefined
  readonly #bodies: BodyBlocks
  /** The header fields' text held, in characters (the bodies count in #bodies). */
  #headerBytes = 0
  #cursor: MapIterator<[string, Entry]> | undefined
  // No record ends before #nextEnd (a lower bound, kept by #noteEnd on every write): until
  // then nothing can have expired, and the sweep and the scan for expired records are skipped.
  // A full pass over the records raises it to the earliest end it saw.
  #nextEnd = Number.POSITIVE_INFINITY
  // The earliest end seen by the sweep's current pass, and noted since it began.
  #passMin = Number.POSITIVE_INFINITY
  #passNoted = Number.POSITIVE_INFINITY

  constructor(options: MemoryIdempotencyStoreOptions = {}) {
    const { maxRecords = 10_000, maxBytes = 64 * 1024 * 1024 } = options
    if (!Number.isInteger(maxRecords) || maxRecords < 1) {
      throw new RangeError('maxRecords must be a positive integer')
    }
    if (!Number.isInteger(maxBytes) || maxBytes < 1) {
      throw new RangeError('maxBytes must be a positive integer')
    }
    const { maxRecordsPerScope = Math.max(1, Math.floor(maxRecords / 10)) } = options
    if (!Number.isInteger(maxRecordsPerScope) || maxRecordsPerScope < 1) {
      throw new RangeError('maxRecordsPerScope must be a positive integer')
    }
    this.#maxRecords = maxRecords
    this.#maxBytes = maxBytes
    this.#maxPerScope = maxRecordsPerScope
    this.#bodies = new BodyBlocks(maxBytes)
    this.#onEvict = options.onEvict
  }

  /** How many records are held, expired ones not yet swept included. */
  get size(): number {
    return this.#entries.size
  }

  /**
   * How many bytes the stored responses hold, as `maxBytes` counts them: the bodies' memory
   * (shared blocks whole) and the header fields' text.
   */
  get bytes(): number {
    return this.#headerBytes + this.#bodies.bytes
  }

  /** A full store (only live claims left) answers a rejected promise. */
  claim(key: string, claim: IdempotencyClaim): Promise<IdempotencyClaimResult> {
    try {
      return Promise.resolve(this.#claim(key, claim))
    } catch (error) {
      return Promise.reject(error)
    }
  }

  #claim(key: string, claim: IdempotencyClaim): IdempotencyClaimResult {
    const { fingerprint, owner, leaseMs, now } = claim
    this.#sweep(now, SWEEP_STEPS)
    const entry = this.#live(key, now)
    if (entry === undefined) {
      const name = claim.scope
      if (name !== undefined && !this.#makeScopeRoom(name, now)) return { state: 'scope-full' }
      if (!this.#makeRoom(now)) return { state: 'store-full' }
      this.#noteEnd(now + leaseMs)
      let scope = name === undefined ? this.#unscoped : this.#scopes.get(name)
      if (scope === undefined) {
        scope = new Scope(name)
        this.#scopes.set(name as string, scope)
      }
      const created: Entry = {
        key,
        scope,
        older: undefined,
        newer: undefined,
        state: 'claimed',
        fingerprint,
        owner,
        leaseExpiresAt: now + leaseMs,
        expiresAt: now + leaseMs,
        recoveryPoint: undefined,
        status: 0,
        headers: NO_HEADERS,
        headerBytes: 0,
        body: undefined,
        block: undefined,
      }
      this.#entries.set(key, created)
      scope.records++
      scope.claims.append(created)
      return { state: 'claimed' }
    }
    if (entry.fingerprint !== fingerprint) return { state: 'mismatch' }
    if (entry.state === 'completed') {
      return { state: 'completed', response: responseOf(entry) }
    }
    if (entry.leaseExpiresAt > now) {
      return { state: 'in-flight', leaseExpiresAt: entry.leaseExpiresAt }
    }
    // Resumable: a new owner takes over and learns how far the last one got.
    entry.owner = owner
    entry.leaseExpiresAt = now + leaseMs
    this.#noteEnd(endOf(entry))
    return { state: 'claimed', recoveryPoint: entry.recoveryPoint }
  }

  /** A response over `maxBytes`, or no room for it, answers a rejected promise. */
  complete(key: string, owner: string, completion: IdempotencyCompletion): Promise<boolean> {
    try {
      return Promise.resolve(this.#complete(key, owner, completion))
    } catch (error) {
      return Promise.reject(error)
    }
  }

  #complete(key: string, owner: string, completion: IdempotencyCompletion): boolean {
    const { response, retentionMs, now } = completion
    const entry = this.#live(key, now)
    if (!this.#ownsLiveLease(entry, owner, now)) return false
    // The header fields, flat, and the size they count for, in one pass.
    const fields = response.headers
    const headers: string[] = new Array(fields.length * 2)
    let headerBytes = 0
    for (let index = 0; index < fields.length; index++) {
      const field = fields[index] as readonly [string, string]
      const name = field[0]
      const value = field[1]
      headers[index * 2] = name
      headers[index * 2 + 1] = value
      headerBytes += name.length + value.length
    }
    const length = response.body.byteLength
    const max = this.#maxBytes
    if (headerBytes + length > max) {
      throw new RangeError(`A response of ${headerBytes + length} bytes is over maxBytes (${max})`)
    }
    // What storing it adds, at most: the header text, and the body's bytes or a new block
    // (which eviction may change: a block emptied by it gives its place to the next).
    const bodies = this.#bodies
    if (this.bytes + headerBytes + bodies.growth(length) > max) {
      // Room first, so that a failure leaves the record as it was; a sixteenth of the
      // capacity at once, as #makeRoom does.
      const target = max - Math.floor(max / 16)
      this.#evictWhile(
        now,
        () => this.bytes + headerBytes + bodies.growth(length) > target,
        byBytes,
      )
      if (this.bytes + headerBytes + bodies.growth(length) > max) {
        throw new RangeError(
          `MemoryIdempotencyStore is full: no room for ${headerBytes + length} bytes (maxBytes)`,
        )
      }
    }
    const completed = entry as Entry
    completed.state = 'completed'
    completed.expiresAt = now + retentionMs
    completed.recoveryPoint = undefined
    completed.status = response.status
    completed.headers = headers
    completed.headerBytes = headerBytes
    this.#headerBytes += headerBytes
    bodies.hold(completed, response.body)
    const scope = completed.scope
    scope.claims.remove(completed)
    scope.completed.append(completed)
    scope.bytes += headerBytes + length
    this.#noteEnd(completed.expiresAt)
    return true
  }

  release(key: string, owner: string): Promise<boolean> {
    const entry = this.#entries.get(key)
    if (entry === undefined || entry.state !== 'claimed' || entry.owner !== owner) {
      return Promise.resolve(false)
    }
    if (entry.recoveryPoint === undefined) this.#delete(key, entry)
    else {
      entry.leaseExpiresAt = 0
      this.#noteEnd(endOf(entry))
    }
    return Promise.resolve(true)
  }

  checkpoint(key: string, owner: string, checkpoint: IdempotencyCheckpoint): Promise<boolean> {
    const { recoveryPoint, retentionMs, now } = checkpoint
    const entry = this.#live(key, now)
    if (!this.#ownsLiveLease(entry, owner, now)) return Promise.resolve(false)
    const claimed = entry as Entry
    claimed.recoveryPoint = recoveryPoint
    claimed.expiresAt = now + retentionMs
    this.#noteEnd(endOf(claimed))
    return Promise.resolve(true)
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
    this.#headerBytes -= entry.headerBytes
    const scope = entry.scope
    if (entry.state === 'completed') {
      scope.completed.remove(entry)
      scope.bytes -= entry.headerBytes + (entry.body as Uint8Array).byteLength
    } else scope.claims.remove(entry)
    if (--scope.records === 0 && scope.name !== undefined) this.#scopes.delete(scope.name)
    this.#bodies.drop(entry)
  }

  /** Evicts a completed record still within its retention, and reports it. */
  #evict(entry: Entry, reason: MemoryEviction['reason']): void {
    this.#delete(entry.key, entry)
    try {
      this.#onEvict?.(entry.key, { scope: entry.scope.name, reason })
    } catch {
      // An observer must not change the answer.
    }
  }

  #noteEnd(end: number): void {
    if (end < this.#nextEnd) this.#nextEnd = end
    if (end < this.#passNoted) this.#passNoted = end
  }

  /**
   * Visits up to `steps` entries from where the last sweep stopped, dropping expired ones;
   * nothing while no record can have expired. A pass that reaches the end raises the bound:
   * every record left was either seen in the pass or written since it began.
   */
  #sweep(now: number, steps: number): void {
    if (now < this.#nextEnd) return
    for (let step = 0; step < steps && this.#entries.size > 0; step++) {
      if (this.#cursor === undefined) {
        this.#cursor = this.#entries.entries()
        this.#passMin = Number.POSITIVE_INFINITY
        this.#passNoted = Number.POSITIVE_INFINITY
      }
      const next = this.#cursor.next()
      if (next.done) {
        this.#cursor = undefined
        this.#nextEnd = Math.min(this.#passMin, this.#passNoted)
        continue
      }
      const [key, entry] = next.value
      const end = endOf(entry)
      if (end <= now) this.#delete(key, entry)
      else if (end < this.#passMin) this.#passMin = end
    }
  }

  /**
   * Before a new record of scope `name`: room for one more within its own bound, taken from its
   * own records only (a sixteenth of the bound at once): its expired records, then its oldest
   * completed ones. Never another scope's.
   */
  #makeScopeRoom(name: string, now: number): boolean {
    const scope = this.#scopes.get(name)
    const max = this.#maxPerScope
    if (scope === undefined || scope.records < max) return true
    if (now >= this.#nextEnd) {
      for (const list of [scope.claims, scope.completed]) {
        let record = list.oldest as Entry | undefined
        while (record !== undefined) {
          const next = record.newer as Entry | undefined
          if (endOf(record) <= now) this.#delete(record.key, record)
          record = next
        }
      }
    }
    const target = max - Math.max(1, Math.floor(max / 16))
    while (scope.records > target && scope.completed.oldest !== undefined) {
      this.#evict(scope.completed.oldest as Entry, 'scope')
    }
    // Only live claims and resumable records are left: this scope is refused, no one else.
    return scope.records < max
  }

  /**
   * Before a new record: room for one more. A full store frees a sixteenth of its capacity at
   * once, so the scan for expired records is paid once per many inserts, not on each.
   */
  #makeRoom(now: number): boolean {
    if (this.#entries.size < this.#maxRecords) return true
    const target = this.#maxRecords - Math.max(1, Math.floor(this.#maxRecords / 16))
    this.#evictWhile(now, () => this.#entries.size > target, byRecords)
    // Only live claims and resumable records are left: full.
    return this.#entries.size < this.#maxRecords
  }

  /**
   * While `over()`: drops every expired record (when one can have expired), then evicts
   * completed ones from the scope of greatest `weight`, oldest first, again and again, until
   * there is room. A completed record still within its retention is evicted only when no
   * expired record is left. Live claims and resumable records are never evicted.
   */
  #evictWhile(now: number, over: () => boolean, weight: (scope: Scope) => number): void {
    if (!over()) return
    if (now >= this.#nextEnd) {
      // Every record is looked at, so the bound becomes exact again.
      let earliest = Number.POSITIVE_INFINITY
      for (const [key, entry] of this.#entries) {
        const end = endOf(entry)
        if (end <= now) this.#delete(key, entry)
        else if (end < earliest) earliest = end
      }
      this.#nextEnd = earliest
    }
    if (!over()) return
    const heap = new ScopeHeap([this.#unscoped, ...this.#scopes.values()], weight)
    for (let scope = heap.top(); scope !== undefined && over(); scope = heap.top()) {
      this.#evict(scope.completed.oldest as Entry, 'capacity')
      heap.settle()
    }
  }
}

const byRecords = (scope: Scope): number => scope.records
const byBytes = (scope: Scope): number => scope.bytes
