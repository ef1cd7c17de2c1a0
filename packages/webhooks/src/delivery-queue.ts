/**
 * The delivery queue's store contract: one record per (event, endpoint) pair, its state in the
 * delivery state machine (docs/webhooks.md), the attempt log, and leases that give a worker
 * the right to attempt it. At-least-once comes from here: a delivery leaves `pending` only
 * through {@link DeliveryQueue.settle} by the lease holder, and a lease that is not settled
 * (the worker crashed) expires and the delivery is claimed again.
 *
 * `MemoryDeliveryQueue` is the embedded default; `@api-blocks/postgres` has
 * `PostgresDeliveryQueue` (`FOR UPDATE SKIP LOCKED`, and `enqueue` inside the caller's
 * transaction: the transactional outbox). Both pass `runDeliveryQueueConformance` of `/testing`.
 *
 * @module
 */

/**
 * Where a delivery is in the state machine of docs/spec.md §3.1. `pending` covers "ready" and
 * "retry scheduled" (`nextAttemptAt` says when); "attempting" is a pending delivery under a
 * lease. `failed` is "permanently failed" (a 4xx other than 429, a refused address, a disabled
 * or deleted endpoint); `dead` is "dead-lettered" (retries exhausted). `failed` and `dead` are
 * kept for inspection and replay.
 *
 * @example
 * ```ts
 * const status: DeliveryStatus = 'dead'
 * ```
 */
export type DeliveryStatus = 'pending' | 'succeeded' | 'failed' | 'dead'

/**
 * One line of the attempt log.
 *
 * @example
 * ```ts
 * const line: AttemptRecord = { attempt: 0, at: 0, latencyMs: 12, status: 503, failure: null, body: 'busy' }
 * ```
 */
export interface AttemptRecord {
  /** The attempt number, from 0 (a replay starts again from 0). */
  attempt: number
  /** When it started, in milliseconds since the epoch. */
  at: number
  latencyMs: number
  /** The response's status code; `null` when no response came. */
  status: number | null
  /**
   * Why no response came (`'timeout'`, `'connection'`, `'address-refused'`) or why the delivery
   * was not attempted (`'endpoint-disabled'`, `'endpoint-deleted'`, `'no-signing-secret'`: no
   * live secret, `'signing-secret-unavailable'`: a sealed secret that does not open with the
   * registry's key); `null` when a response came.
   */
  failure: string | null
  /** The start of the response body (at most 1 KiB of text), or the failure's message; `null` when empty. */
  body: string | null
}

/**
 * A delivery to enqueue: one event to one endpoint.
 *
 * @example
 * ```ts
 * const delivery: NewDelivery = {
 *   eventId: 'evt_1', eventType: 'order.created', endpointId: 'we_1',
 *   payload: '{"id":"evt_1"}', createdAt: 0, nextAttemptAt: 0,
 * }
 * ```
 */
export interface NewDelivery {
  /** The event's id: the `webhook-id` of every attempt. */
  eventId: string
  eventType: string
  endpointId: string
  /** The exact body of every attempt (the serialised envelope), at most 256 KiB. */
  payload: string
  /** When the event was created, in milliseconds since the epoch (range replays select on it). */
  createdAt: number
  /** When the first attempt is due, in milliseconds since the epoch. */
  nextAttemptAt: number
}

/**
 * A stored delivery.
 *
 * @example
 * ```ts
 * function summary(delivery: Delivery) {
 *   return `${delivery.eventId} → ${delivery.endpointId}: ${delivery.status} after ${delivery.attempts} attempts`
 * }
 * ```
 */
export interface Delivery extends NewDelivery {
  status: DeliveryStatus
  /** Attempts since it was enqueued or last replayed: the `attempt` of the next one. */
  attempts: number
  /** The attempt log, oldest first, at most the last 50 lines (replays append). */
  log: readonly AttemptRecord[]
  /** Milliseconds since the epoch of the last change: the `now` of the last settle or replay (at enqueue, the store's choice). */
  updatedAt: number
}

/**
 * A delivery claimed by a worker: only the holder of `lease` may settle it, until
 * `leaseExpiresAt`.
 *
 * @example
 * ```ts
 * function stillMine(delivery: LeasedDelivery, now: number) {
 *   return now < delivery.leaseExpiresAt
 * }
 * ```
 */
export interface LeasedDelivery extends Delivery {
  /** Random, unguessable, new on every claim. */
  lease: string
  leaseExpiresAt: number
}

/**
 * What {@link DeliveryQueue.claim} takes.
 *
 * @example
 * ```ts
 * const options: ClaimOptions = { now: Date.now(), limit: 32, leaseMs: 60_000, perEndpoint: 4 }
 * ```
 */
export interface ClaimOptions {
  /** Milliseconds since the epoch: deliveries with `nextAttemptAt <= now` are due. */
  now: number
  /** At most this many deliveries. */
  limit: number
  /** The lease lasts this long from `now`; it must cover the sender's deadline with room to settle. */
  leaseMs: number
  /**
   * At most this many deliveries of one endpoint leased at once, counting the unexpired leases
   * already held (by any worker on this store). Absent: no per-endpoint limit.
   */
  perEndpoint?: number
}

/**
 * How an attempt leaves the delivery: final (`succeeded`, `failed`, `dead`), or `pending` again
 * with the next attempt's time.
 *
 * @example
 * ```ts
 * const retry: DeliveryResolution = { status: 'pending', nextAttemptAt: Date.now() + 60_000 }
 * ```
 */
export type DeliveryResolution =
  | { status: 'succeeded' | 'failed' | 'dead' }
  | { status: 'pending'; nextAttemptAt: number }

/**
 * Which deliveries a replay sends again. One delivery (any status, `succeeded` included: a
 * manual redelivery; `pending` too, which resets its attempts even during an attempt in
 * flight, see {@link DeliveryQueue.replay}); or, for `failed` and `dead` ones only, those of one endpoint (its
 * backlog), those whose event was created in `[from, to)`, or both.
 *
 * @example
 * ```ts
 * const backlog: ReplayFilter = { endpointId: 'we_1' }
 * const lastHour: ReplayFilter = { from: Date.now() - 3_600_000, to: Date.now() }
 * ```
 */
export type ReplayFilter =
  | { eventId: string; endpointId: string }
  | { endpointId: string; from?: number; to?: number }
  | { endpointId?: string; from: number; to: number }

/**
 * A page of one endpoint's deliveries, newest event first (`createdAt` descending, then
 * `eventId` descending), strictly after the `(createdAt, eventId)` of `after`.
 *
 * @example
 * ```ts
 * const query: DeliveryListQuery = { endpointId: 'we_1', status: 'dead', limit: 20 }
 * ```
 */
export interface DeliveryListQuery {
  endpointId: string
  status?: DeliveryStatus
  after?: { createdAt: number; eventId: string }
  limit: number
}

/**
 * Where deliveries wait, are leased, and are kept once final. Every method returns a Promise.
 *
 * @example
 * ```ts
 * async function drainOnce(queue: DeliveryQueue) {
 *   for (const delivery of await queue.claim({ now: Date.now(), limit: 10, leaseMs: 30_000 })) {
 *     const attempt = { attempt: delivery.attempts, at: Date.now(), latencyMs: 0, status: 200, failure: null, body: null }
 *     await queue.settle(delivery, attempt, { status: 'succeeded' }, Date.now())
 *   }
 * }
 * ```
 */
export interface DeliveryQueue {
  /**
   * Adds deliveries as `pending` with 0 attempts. A (eventId, endpointId) pair already present
   * is left as it is (enqueueing is idempotent). How many were added.
   */
  enqueue(deliveries: readonly NewDelivery[]): Promise<number>
  /**
   * Leases up to `limit` due `pending` deliveries whose lease is absent or expired, earliest
   * `nextAttemptAt` first, honouring `perEndpoint`. Two concurrent claims never lease the same
   * delivery.
   */
  claim(options: ClaimOptions): Promise<LeasedDelivery[]>
  /**
   * Records an attempt (appended to the log, `attempts` plus one) and applies `resolution`, if
   * `delivery.lease` still holds it (same lease, not expired at `now`). The lease ends either
   * way. Whether it held: `false` means another worker has the delivery and nothing was
   * written.
   */
  settle(
    delivery: LeasedDelivery,
    attempt: AttemptRecord,
    resolution: DeliveryResolution,
    now: number,
  ): Promise<boolean>
  /**
   * Gives a lease back without an attempt (the worker is stopping, or the endpoint is at its
   * concurrency limit): the delivery stays `pending`, due at `nextAttemptAt` (default: as it
   * was). Whether the lease still held: the delivery still carries it (no settle, release,
   * replay or later claim since). Release takes no `now`, so an expired lease nobody claimed
   * again still releases.
   */
  release(delivery: LeasedDelivery, nextAttemptAt?: number): Promise<boolean>
  get(eventId: string, endpointId: string): Promise<Delivery | undefined>
  /** See {@link DeliveryListQuery}. */
  list(query: DeliveryListQuery): Promise<Delivery[]>
  /**
   * Sends the deliveries `filter` selects again: each becomes `pending` with 0 attempts, due at
   * `now`, its log kept. How many. A lease expired at `now` ends. A `pending` delivery under a
   * lease unexpired at `now` (an attempt in flight) keeps it: nobody else claims it meanwhile,
   * and the holder's settle then lands on the reset delivery: its line is appended, `attempts`
   * becomes 1 and its resolution applies (a `pending` one's `nextAttemptAt` replaces `now`).
   */
  replay(filter: ReplayFilter, now: number): Promise<number>
}
