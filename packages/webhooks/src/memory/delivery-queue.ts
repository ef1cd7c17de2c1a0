/**
 * The embedded, in-process {@link DeliveryQueue}: a `Map` of deliveries with an index per
 * endpoint, bounded, with no timers. Enough for one process; several workers in several
 * processes need a shared queue (`PostgresDeliveryQueue` of `@api-blocks/postgres`, which can
 * also enqueue inside the caller's transaction).
 *
 * @module
 */
import { encodeBase64url } from '@api-blocks/core'
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
} from '../delivery-queue.ts'
import type { Slot } from './due-index.ts'
import { DueIndex } from './due-index.ts'

/**
 * Options of {@link MemoryDeliveryQueue}.
 *
 * @example
 * ```ts
 * const options: MemoryDeliveryQueueOptions = { maxDeliveries: 10_000, retentionMs: 86_400_000 }
 * const queue = new MemoryDeliveryQueue(options)
 * ```
 */
export interface MemoryDeliveryQueueOptions {
  /**
   * The most deliveries held at once, final ones included (default 100,000). When an enqueue
   * would pass it, final deliveries past `retentionMs` are pruned; if that frees too little,
   * the enqueue rejects with a `RangeError` and adds nothing (deliveries are never dropped).
   */
  readonly maxDeliveries?: number
  /** How long a final (`succeeded`, `failed`, `dead`) delivery is kept at least, from its last change, in ms (default 7 days). */
  readonly retentionMs?: number
  /** Milliseconds since the epoch (default `Date.now`); only pruning reads it, every other time is the `now` an operation is given. */
  readonly clock?: () => number
  /** Fills the array with random bytes (default `crypto.getRandomValues`); makes the leases. */
  readonly random?: (bytes: Uint8Array<ArrayBuffer>) => Uint8Array
}

/** The attempt log keeps this many lines (the contract's bound). */
const LOG_LINES = 50
const DEFAULT_MAX_DELIVERIES = 100_000
const DEFAULT_RETENTION_MS = 7 * 24 * 60 * 60 * 1000

interface Entry extends Slot {
  delivery: Delivery
  /** The lease token while claimed, `undefined` otherwise. */
  lease: string | undefined
  leaseExpiresAt: number
}

/** The map key of a pair: the ids joined by a character neither may hold un-escaped. */
function keyOf(eventId: string, endpointId: string): string {
  return `${eventId.length}:${eventId}${endpointId}`
}

/** A copy the caller may change without touching the stored record. */
function copy(delivery: Delivery): Delivery {
  return {
    eventId: delivery.eventId,
    eventType: delivery.eventType,
    endpointId: delivery.endpointId,
    payload: delivery.payload,
    createdAt: delivery.createdAt,
    nextAttemptAt: delivery.nextAttemptAt,
    status: delivery.status,
    attempts: delivery.attempts,
    log: delivery.log.map((line) => ({ ...line })),
    updatedAt: delivery.updatedAt,
  }
}

/** Where a delivery sorts in a list. */
type Position = Pick<Delivery, 'createdAt' | 'eventId'>

/** Newest event first: `createdAt` descending, then `eventId` descending (code units). */
function newestFirst(a: Position, b: Position): number {
  if (a.createdAt !== b.createdAt) return b.createdAt - a.createdAt
  return a.eventId < b.eventId ? 1 : a.eventId > b.eventId ? -1 : 0
}

function isFinal(delivery: Delivery): boolean {
  return delivery.status !== 'pending'
}

/**
 * An in-memory {@link DeliveryQueue}. Atomic because each operation runs synchronously to its
 * end on the one JavaScript thread, so two claims never lease one delivery and a settle either
 * holds the lease and writes, or writes nothing; every operation answers a promise (a failure
 * is a rejected promise, never a throw). Deliveries go in and come out as copies.
 *
 * Costs: `claim` is O((limit + endpoints at their `perEndpoint` cap + leases expired since the
 * last claim) × log n) through a due-order index (./due-index.ts); settle, release and a
 * replay of one delivery O(log n); `list` and an endpoint's replay visit that endpoint's
 * deliveries, a range replay visits every delivery. Claims assume `now` moves forward: one with
 * an earlier `now` than a claim before it still never takes a delivery under a lease unexpired
 * at its `now`, but its `perEndpoint` count misses the leases that later claim saw expired.
 *
 * Bounds: at most `maxDeliveries` records. An enqueue that would pass it first prunes the
 * final deliveries whose last change is `retentionMs` or more ago (by the injected clock);
 * if still too few fit, it rejects with a `RangeError` and adds none of the batch. A lease
 * ends by `settle`, `release`, `replay`, or by expiring (`leaseExpiresAt <= now`, when the next
 * claim may take the delivery); `release` has no `now`, so it holds while the record still
 * carries that lease, expired or not.
 *
 * @example
 * ```ts
 * const queue = new MemoryDeliveryQueue()
 * await queue.enqueue([{
 *   eventId: 'evt_1', eventType: 'order.created', endpointId: 'we_1',
 *   payload: '{"id":"evt_1"}', createdAt: 0, nextAttemptAt: 0,
 * }])
 * const [leased] = await queue.claim({ now: 0, limit: 1, leaseMs: 30_000 })
 * ```
 */
export class MemoryDeliveryQueue implements DeliveryQueue {
  /** The most deliveries held at once. */
  readonly maxDeliveries: number
  /** How long a final delivery is kept at least, in ms. */
  readonly retentionMs: number
  readonly #clock: () => number
  readonly #random: (bytes: Uint8Array<ArrayBuffer>) => Uint8Array
  readonly #entries = new Map<string, Entry>()
  /** The keys of the `pending` deliveries. */
  readonly #pending = new Set<string>()
  /** Due order of the unleased pending deliveries, and the leases held per endpoint. */
  readonly #index = new DueIndex<Entry>()
  /** The keys of each endpoint's deliveries. */
  readonly #byEndpoint = new Map<string, Set<string>>()
  #seq = 0

  constructor(options: MemoryDeliveryQueueOptions = {}) {
    const max = options.maxDeliveries ?? DEFAULT_MAX_DELIVERIES
    if (!Number.isSafeInteger(max) || max < 1) {
      throw new RangeError('MemoryDeliveryQueue: maxDeliveries must be a positive integer')
    }
    const retention = options.retentionMs ?? DEFAULT_RETENTION_MS
    if (!Number.isFinite(retention) || retention < 0) {
      throw new RangeError('MemoryDeliveryQueue: retentionMs must be a finite number >= 0')
    }
    this.maxDeliveries = max
    this.retentionMs = retention
    this.#clock = options.clock ?? Date.now
    this.#random = options.random ?? ((bytes) => crypto.getRandomValues(bytes))
  }

  /** How many deliveries are held, final ones included. */
  get size(): number {
    return this.#entries.size
  }

  enqueue(deliveries: readonly NewDelivery[]): Promise<number> {
    const fresh = new Map<string, NewDelivery>()
    for (const delivery of deliveries) {
      const key = keyOf(delivery.eventId, delivery.endpointId)
      if (!this.#entries.has(key) && !fresh.has(key)) fresh.set(key, delivery)
    }
    if (this.#entries.size + fresh.size > this.maxDeliveries) this.#prune()
    if (this.#entries.size + fresh.size > this.maxDeliveries) {
      return Promise.reject(
        new RangeError(
          `MemoryDeliveryQueue is full (maxDeliveries ${this.maxDeliveries}, ${this.#pending.size} pending): ` +
            `${fresh.size} deliveries were not enqueued`,
        ),
      )
    }
    for (const [key, delivery] of fresh) {
      const entry: Entry = {
        endpointId: delivery.endpointId,
        seq: this.#seq++,
        state: 'out',
        due: delivery.nextAttemptAt,
        stamp: 0,
        delivery: {
          eventId: delivery.eventId,
          eventType: delivery.eventType,
          endpointId: delivery.endpointId,
          payload: delivery.payload,
          createdAt: delivery.createdAt,
          nextAttemptAt: delivery.nextAttemptAt,
          status: 'pending',
          attempts: 0,
          log: [],
          updatedAt: delivery.createdAt,
        },
        lease: undefined,
        leaseExpiresAt: 0,
      }
      this.#entries.set(key, entry)
      this.#index.ready(entry, delivery.nextAttemptAt)
      this.#pending.add(key)
      const keys = this.#byEndpoint.get(delivery.endpointId)
      if (keys === undefined) this.#byEndpoint.set(delivery.endpointId, new Set([key]))
      else keys.add(key)
    }
    return Promise.resolve(fresh.size)
  }

  claim(options: ClaimOptions): Promise<LeasedDelivery[]> {
    const { now, limit, leaseMs, perEndpoint } = options
    const taken = this.#index.take(
      now,
      limit,
      perEndpoint,
      now + leaseMs,
      // Only with a `now` earlier than a claim before it: a lease unexpired at this `now` holds.
      (entry) => entry.lease === undefined || !(now < entry.leaseExpiresAt),
    )
    const leased: LeasedDelivery[] = []
    for (const entry of taken) {
      entry.lease = encodeBase64url(this.#random(new Uint8Array(16)))
      entry.leaseExpiresAt = now + leaseMs
      leased.push({
        ...copy(entry.delivery),
        lease: entry.lease,
        leaseExpiresAt: entry.leaseExpiresAt,
      })
    }
    return Promise.resolve(leased)
  }

  settle(
    delivery: LeasedDelivery,
    attempt: AttemptRecord,
    resolution: DeliveryResolution,
    now: number,
  ): Promise<boolean> {
    const key = keyOf(delivery.eventId, delivery.endpointId)
    const entry = this.#entries.get(key)
    if (entry === undefined || entry.lease !== delivery.lease || !(now < entry.leaseExpiresAt)) {
      return Promise.resolve(false)
    }
    const log = [...entry.delivery.log, { ...attempt }]
    entry.delivery = {
      ...entry.delivery,
      status: resolution.status,
      nextAttemptAt:
        resolution.status === 'pending' ? resolution.nextAttemptAt : entry.delivery.nextAttemptAt,
      attempts: entry.delivery.attempts + 1,
      log: log.length > LOG_LINES ? log.slice(log.length - LOG_LINES) : log,
      updatedAt: now,
    }
    entry.lease = undefined
    if (resolution.status === 'pending') this.#index.ready(entry, resolution.nextAttemptAt)
    else {
      this.#index.drop(entry)
      this.#pending.delete(key)
    }
    return Promise.resolve(true)
  }

  release(delivery: LeasedDelivery, nextAttemptAt?: number): Promise<boolean> {
    const entry = this.#entries.get(keyOf(delivery.eventId, delivery.endpointId))
    if (entry === undefined || entry.lease === undefined || entry.lease !== delivery.lease) {
      return Promise.resolve(false)
    }
    entry.lease = undefined
    if (nextAttemptAt !== undefined) entry.delivery = { ...entry.delivery, nextAttemptAt }
    this.#index.ready(entry, entry.delivery.nextAttemptAt)
    return Promise.resolve(true)
  }

  get(eventId: string, endpointId: string): Promise<Delivery | undefined> {
    const entry = this.#entries.get(keyOf(eventId, endpointId))
    return Promise.resolve(entry === undefined ? undefined : copy(entry.delivery))
  }

  list(query: DeliveryListQuery): Promise<Delivery[]> {
    const { after, status, limit } = query
    const found: Delivery[] = []
    for (const key of this.#byEndpoint.get(query.endpointId) ?? []) {
      const delivery = this.#entries.get(key)!.delivery
      if (status !== undefined && delivery.status !== status) continue
      if (after !== undefined && newestFirst(delivery, after) <= 0) continue
      found.push(delivery)
    }
    found.sort(newestFirst)
    return Promise.resolve(found.slice(0, Math.max(0, limit)).map(copy))
  }

  replay(filter: ReplayFilter, now: number): Promise<number> {
    const chosen: string[] = []
    if ('eventId' in filter) {
      const key = keyOf(filter.eventId, filter.endpointId)
      if (this.#entries.has(key)) chosen.push(key)
    } else {
      const { endpointId, from, to } = filter
      const keys =
        endpointId === undefined ? this.#entries.keys() : (this.#byEndpoint.get(endpointId) ?? [])
      for (const key of keys) {
        const delivery = this.#entries.get(key)!.delivery
        if (delivery.status !== 'failed' && delivery.status !== 'dead') continue
        if (from !== undefined && delivery.createdAt < from) continue
        if (to !== undefined && delivery.createdAt >= to) continue
        chosen.push(key)
      }
    }
    for (const key of chosen) {
      const entry = this.#entries.get(key)!
      const inFlight =
        entry.delivery.status === 'pending' &&
        entry.lease !== undefined &&
        now < entry.leaseExpiresAt
      entry.delivery = {
        ...entry.delivery,
        status: 'pending',
        attempts: 0,
        nextAttemptAt: now,
        updatedAt: now,
      }
      this.#pending.add(key)
      if (inFlight && entry.state === 'held') {
        // An attempt in flight keeps its lease: its settle lands on the reset delivery (and
        // should its worker die, the delivery is due at `now` once the lease expires).
        entry.due = now
        continue
      }
      if (!inFlight) entry.lease = undefined
      this.#index.ready(entry, now)
    }
    return Promise.resolve(chosen.length)
  }

  /** Drops the final deliveries whose last change is at least `retentionMs` old. */
  #prune(): void {
    const cutoff = this.#clock() - this.retentionMs
    for (const [key, entry] of this.#entries) {
      if (!isFinal(entry.delivery) || entry.delivery.updatedAt > cutoff) continue
      this.#entries.delete(key)
      const keys = this.#byEndpoint.get(entry.delivery.endpointId)!
      keys.delete(key)
      if (keys.size === 0) this.#byEndpoint.delete(entry.delivery.endpointId)
    }
  }
}
