/**
 * The delivery worker: claims due deliveries under leases, sends each through the sender,
 * asks the retry policy what follows, and settles it. At-least-once: a delivery leaves
 * `pending` only through a settle by the lease holder, so a worker that dies mid-attempt loses
 * nothing (its lease expires and another worker claims the delivery again).
 *
 * @module
 */
import type { AttemptResult } from './attempt.ts'
import type {
  AttemptRecord,
  DeliveryQueue,
  DeliveryResolution,
  LeasedDelivery,
} from './delivery-queue.ts'
import type { EndpointStatus, EndpointStore, WebhookEndpoint } from './endpoint-store.ts'
import type { RetryPolicy } from './retry-policy.ts'
import { createRetryPolicy } from './retry-policy.ts'
import type { WebhookSender } from './sender.ts'

/**
 * What the worker tells its observer (`onEvent`). Never a secret or a payload, only ids,
 * status codes and messages.
 *
 * - `attempt`: one attempt was made (or the delivery was settled without one, its endpoint
 *   disabled or deleted) and settled with `resolution`; `settled: false` means the lease was
 *   lost meanwhile (another worker holds the delivery, nothing was written; it is not retried
 *   here).
 * - `dead-letter`: a delivery ran out of attempts.
 * - `endpoint-disabled`: a receiver answered 410 Gone; its endpoint is now disabled.
 * - `error`: a store (or the registry) failed; `stage` says where. The worker carries on: after
 *   a failed claim it waits (doubling up to 30 s) before the next; a delivery whose settle failed
 *   is claimed again when its lease expires.
 *
 * @example
 * ```ts
 * const onEvent = (event: DeliveryWorkerEvent) => {
 *   if (event.type === 'dead-letter') console.warn('dead letter', event.eventId, event.endpointId)
 * }
 * ```
 */
export type DeliveryWorkerEvent =
  | {
      type: 'attempt'
      eventId: string
      endpointId: string
      record: AttemptRecord
      resolution: DeliveryResolution
      settled: boolean
    }
  | { type: 'dead-letter'; eventId: string; endpointId: string; attempts: number }
  | { type: 'endpoint-disabled'; endpointId: string; reason: string }
  | {
      type: 'error'
      stage: 'claim' | 'endpoint' | 'settle' | 'release' | 'disable'
      error: unknown
      eventId?: string
      endpointId?: string
    }

/**
 * Options of {@link createDeliveryWorker}.
 *
 * @example
 * ```ts
 * const options: DeliveryWorkerOptions = {
 *   queue,
 *   registry,
 *   sender: createWebhookSender({ guard }),
 *   concurrency: 16,
 *   perEndpoint: 4,
 *   onEvent: (event) => console.log(event.type),
 * }
 * ```
 */
export interface DeliveryWorkerOptions {
  queue: DeliveryQueue
  /** Where endpoints are read (a disabled or deleted one gets no attempt) and how they are disabled (410) and signed for. */
  registry: {
    readonly store: EndpointStore
    setStatus(id: string, status: EndpointStatus, reason: string | null): Promise<WebhookEndpoint>
    signingSecrets(endpoint: WebhookEndpoint, now: number): Promise<string[]>
  }
  /** Sends one attempt and never throws (`createWebhookSender`); its `timeoutMs` bounds `leaseMs` from below. */
  sender: Pick<WebhookSender, 'send' | 'timeoutMs'>
  /** Default `createRetryPolicy()`: the typical schedule of docs/spec.md §3.1. */
  policy?: RetryPolicy
  /** Milliseconds since the epoch (default `Date.now`): claims, attempt times, next attempts. */
  clock?: () => number
  /** Deliveries claimed at once (default 32). */
  batchSize?: number
  /** Attempts in flight at once, over all endpoints (default 16). */
  concurrency?: number
  /** Attempts in flight at once to one endpoint, counted over every worker on the queue (default 4). */
  perEndpoint?: number
  /**
   * How long a claim lasts (default the sender's `timeoutMs` plus 30,000 ms to settle: 40 s for
   * the default 10 s deadline). At least `timeoutMs` plus 5,000 ms (plus `timeoutMs` again when
   * that is shorter), or a `RangeError`: a lease that expires mid-attempt lets a second worker
   * send the same delivery at once.
   */
  leaseMs?: number
  /** How long the running worker waits when nothing is due (default 1,000 ms; `wake()` cuts it short). */
  pollIntervalMs?: number
  /** Called for every {@link DeliveryWorkerEvent}; what it throws is ignored. */
  onEvent?: (event: DeliveryWorkerEvent) => void
}

/**
 * A delivery worker. Run it with `start()`, or drive it with `tick()` in tests.
 *
 * @example
 * ```ts
 * async function drain(worker: DeliveryWorker) {
 *   while ((await worker.tick()) > 0) {}
 * }
 * ```
 */
export interface DeliveryWorker {
  /**
   * Starts the loop: claim, attempt, settle; sleep `pollIntervalMs` when nothing is due. Called
   * while a `stop()` drains, the new loop begins once that stop has resolved.
   */
  start(): void
  /**
   * Stops claiming, gives back leases of deliveries not yet attempted, and waits for the
   * attempts in flight and the claims under way (a `tick()`'s included): once it resolves,
   * nothing started before it sends.
   */
  stop(): Promise<void>
  /**
   * One round: claims what is due (up to `batchSize`, within `concurrency`), attempts and
   * settles all of it. How many deliveries it claimed (0 without claiming while a `stop()`
   * drains). For tests with an injected clock, and for hosts that schedule work themselves (a
   * cron, a queue consumer).
   */
  tick(): Promise<number>
  /** Ends the running loop's wait at once (after a publish, say). */
  wake(): void
}

const MAX_BACKOFF_MS = 30_000
/** What a lease must leave past the sender's deadline to settle in (less for a deadline under it). */
const LEASE_MARGIN_MS = 5_000

function positive(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new RangeError(`createDeliveryWorker(): ${name} must be a positive integer, got ${value}`)
  }
  return value
}

/**
 * Makes a delivery worker.
 *
 * What each claimed delivery comes to: its endpoint deleted → `failed` (`'endpoint-deleted'`);
 * disabled → `failed` (`'endpoint-disabled'`); both replayable once the endpoint is back.
 * Otherwise one attempt signed with every live secret, then the policy's decision: `succeeded`,
 * `failed` (a 410 also disables the endpoint, reason `'gone'`), `dead`, or `pending` due
 * `delayMs` after the attempt ended. Every attempt is a line of the delivery's log: status,
 * latency, the start of the body (or the failure's message).
 *
 * @example
 * ```ts
 * import { createDeliveryWorker, createWebhookSender } from '@api-blocks/webhooks'
 *
 * const worker = createDeliveryWorker({ queue, registry, sender: createWebhookSender({ guard }) })
 * worker.start()
 * process.on('SIGTERM', () => void worker.stop())
 * ```
 */
export function createDeliveryWorker(options: DeliveryWorkerOptions): DeliveryWorker {
  const { queue, registry, sender } = options
  const policy = options.policy ?? createRetryPolicy()
  const clock = options.clock ?? Date.now
  const batchSize = positive('batchSize', options.batchSize ?? 32)
  const concurrency = positive('concurrency', options.concurrency ?? 16)
  const perEndpoint = positive('perEndpoint', options.perEndpoint ?? 4)
  const leaseMs = positive('leaseMs', options.leaseMs ?? sender.timeoutMs + 30_000)
  const pollIntervalMs = positive('pollIntervalMs', options.pollIntervalMs ?? 1_000)
  // A short deadline (a test's, a fast network's) needs as long again, not 5 s, to settle in.
  const margin = Math.min(LEASE_MARGIN_MS, sender.timeoutMs)
  if (leaseMs < sender.timeoutMs + margin) {
    throw new RangeError(
      `createDeliveryWorker(): leaseMs (${leaseMs}) must be at least the sender's timeoutMs ` +
        `(${sender.timeoutMs}) plus ${margin} ms, or a lease expires mid-attempt and ` +
        'another worker sends the same delivery',
    )
  }

  /** The running loop claims once at least this many slots are free. */
  const refill = Math.max(1, Math.floor(Math.min(batchSize, concurrency) / 2))
  const inFlight = new Set<Promise<void>>()
  /** Claims under way (a claim's deliveries are not in `inFlight` until it answers). */
  const claims = new Set<Promise<unknown>>()
  /** The running loop's token: `stop()` clears `active`, so a loop ends whatever `start()` does next. */
  let current: { active: boolean } | undefined
  /** A `stop()` draining; attempts launched meanwhile are given back, not sent. */
  let stopping: Promise<void> | undefined
  let loop: Promise<void> | undefined
  let wakeUp: (() => void) | undefined
  let woken = false

  function emit(event: DeliveryWorkerEvent): void {
    try {
      options.onEvent?.(event)
    } catch {
      // An observer's failure is not the delivery's.
    }
  }

  async function release(delivery: LeasedDelivery, nextAttemptAt?: number): Promise<void> {
    try {
      await queue.release(delivery, nextAttemptAt)
    } catch (error) {
      emit({
        type: 'error',
        stage: 'release',
        error,
        eventId: delivery.eventId,
        endpointId: delivery.endpointId,
      })
    }
  }

  async function settle(
    delivery: LeasedDelivery,
    record: AttemptRecord,
    resolution: DeliveryResolution,
  ): Promise<void> {
    const ids = { eventId: delivery.eventId, endpointId: delivery.endpointId }
    let settled: boolean
    try {
      settled = await queue.settle(delivery, record, resolution, clock())
    } catch (error) {
      // Nothing known to be written: the lease expires and the delivery is claimed again.
      emit({ type: 'error', stage: 'settle', error, ...ids })
      return
    }
    emit({ type: 'attempt', ...ids, record, resolution, settled })
    if (settled && resolution.status === 'dead') {
      emit({ type: 'dead-letter', ...ids, attempts: delivery.attempts + 1 })
    }
  }

  /** Settles `failed` without an attempt: the endpoint is gone, disabled, or has no live (or no openable) secret. */
  async function skip(
    delivery: LeasedDelivery,
    failure:
      | 'endpoint-deleted'
      | 'endpoint-disabled'
      | 'no-signing-secret'
      | 'signing-secret-unavailable',
  ): Promise<void> {
    const record: AttemptRecord = {
      attempt: delivery.attempts,
      at: clock(),
      latencyMs: 0,
      status: null,
      failure,
      body: null,
    }
    await settle(delivery, record, { status: 'failed' })
  }

  /**
   * An endpoint and its live secrets, read once per claimed batch (not once per delivery).
   * `secrets` is the error when they do not unseal (a wrong or missing `encryptionKey`, a
   * damaged value): that is permanent, unlike a store that fails to answer (the promise rejects).
   */
  type Target = { endpoint: WebhookEndpoint | undefined; secrets: string[] | { error: unknown } }
  async function readTarget(endpointId: string): Promise<Target> {
    const endpoint = await registry.store.get(endpointId)
    if (endpoint === undefined) return { endpoint, secrets: [] }
    try {
      return { endpoint, secrets: await registry.signingSecrets(endpoint, clock()) }
    } catch (error) {
      return { endpoint, secrets: { error } }
    }
  }

  /** Consecutive failed endpoint reads (one per read, not per delivery): the delay of a given-back delivery doubles with them. */
  let readFailures = 0

  async function attempt(delivery: LeasedDelivery, read: Promise<Target>): Promise<void> {
    const ids = { eventId: delivery.eventId, endpointId: delivery.endpointId }
    let target: Target
    try {
      target = await read
    } catch (error) {
      // Given back, due after a delay that doubles with each consecutive failed read (up to
      // 30 s): a store that keeps failing is not hammered.
      emit({ type: 'error', stage: 'endpoint', error, ...ids })
      const delay = Math.min(pollIntervalMs * 2 ** Math.min(readFailures - 1, 16), MAX_BACKOFF_MS)
      await release(delivery, clock() + delay)
      return
    }
    const { endpoint, secrets } = target
    if (endpoint === undefined) return await skip(delivery, 'endpoint-deleted')
    if (endpoint.status !== 'enabled') return await skip(delivery, 'endpoint-disabled')
    if (stopping !== undefined) {
      // Stopping: not started, so given back rather than attempted.
      await release(delivery)
      return
    }
    if (!Array.isArray(secrets)) {
      // A sealed secret that does not open will not open on the next try either: failed, and
      // replayable once the registry has the right key.
      emit({ type: 'error', stage: 'endpoint', error: secrets.error, ...ids })
      return await skip(delivery, 'signing-secret-unavailable')
    }
    if (clock() >= delivery.leaseExpiresAt - sender.timeoutMs) {
      // The lease could expire before the attempt ends (a claim answered late, a slow endpoint
      // read): given back, so that no second worker sends it while this one still does.
      await release(delivery)
      return
    }
    if (secrets.length === 0) {
      // Only a store edited by hand gets here: a rotation always leaves a current secret.
      return await skip(delivery, 'no-signing-secret')
    }
    const at = clock()
    let result: AttemptResult
    try {
      const request = {
        url: endpoint.url,
        eventId: delivery.eventId,
        payload: delivery.payload,
        secrets,
      }
      result = await sender.send(request)
    } catch (error) {
      // A sender never throws; one that does is a bug, counted as a failed attempt so the
      // policy still bounds the retries.
      const message =
        error instanceof Error ? `${error.name}: ${error.message}` : 'the sender threw'
      result = {
        kind: 'failure',
        failure: 'connection',
        message: message.slice(0, 200),
        latencyMs: clock() - at,
      }
    }
    const decision = policy.decide(result, delivery.attempts)
    const record: AttemptRecord =
      result.kind === 'response'
        ? {
            attempt: delivery.attempts,
            at,
            latencyMs: result.latencyMs,
            status: result.status,
            failure: null,
            body: result.body === '' ? null : result.body,
          }
        : {
            attempt: delivery.attempts,
            at,
            latencyMs: result.latencyMs,
            status: null,
            failure: result.failure,
            body: result.message === '' ? null : result.message,
          }
    const resolution: DeliveryResolution =
      decision.status === 'pending'
        ? { status: 'pending', nextAttemptAt: clock() + decision.delayMs }
        : { status: decision.status }
    await settle(delivery, record, resolution)
    if (decision.status === 'failed' && decision.disableEndpoint) {
      // The receiver said the endpoint is gone, whoever settles the delivery.
      try {
        await registry.setStatus(delivery.endpointId, 'disabled', 'gone')
        emit({ type: 'endpoint-disabled', endpointId: delivery.endpointId, reason: 'gone' })
      } catch (error) {
        emit({ type: 'error', stage: 'disable', error, endpointId: delivery.endpointId })
      }
    }
  }

  function launch(delivery: LeasedDelivery, target: Promise<Target>): Promise<void> {
    const task = attempt(delivery, target)
      .catch((error: unknown) =>
        emit({
          type: 'error',
          stage: 'settle',
          error,
          eventId: delivery.eventId,
          endpointId: delivery.endpointId,
        }),
      )
      .finally(() => {
        inFlight.delete(task)
        // Room for a batch again: a sleeping loop claims now (deliveries held back by
        // perEndpoint may be due), without a claim per finished attempt.
        if (concurrency - inFlight.size >= refill) wakeUp?.()
      })
    inFlight.add(task)
    return task
  }

  /** Claims up to the free capacity and launches the attempts; the tasks, or `undefined` when the claim failed. */
  async function claimAndLaunch(): Promise<Promise<void>[] | undefined> {
    const limit = Math.min(batchSize, concurrency - inFlight.size)
    if (limit <= 0) return []
    let claimed: LeasedDelivery[]
    const claim = queue.claim({ now: clock(), limit, leaseMs, perEndpoint })
    claims.add(claim)
    try {
      claimed = await claim
    } catch (error) {
      emit({ type: 'error', stage: 'claim', error })
      return undefined
    } finally {
      claims.delete(claim)
    }
    const targets = new Map<string, Promise<Target>>()
    return claimed.map((delivery) => {
      let target = targets.get(delivery.endpointId)
      if (target === undefined) {
        target = readTarget(delivery.endpointId)
        // Counted here, once per read, before any attempt waiting on it runs; each delivery's
        // attempt reports the failure.
        target.then(
          () => {
            readFailures = 0
          },
          () => {
            readFailures++
          },
        )
        targets.set(delivery.endpointId, target)
      }
      return launch(delivery, target)
    })
  }

  function sleep(ms: number): Promise<void> {
    if (woken) {
      // wake() came while the loop was busy: the next wait is skipped, so it is not lost.
      woken = false
      return Promise.resolve()
    }
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms)
      function done() {
        clearTimeout(timer)
        if (wakeUp === done) wakeUp = undefined
        resolve()
      }
      wakeUp = done
    })
  }

  async function run(token: { active: boolean }): Promise<void> {
    let failures = 0
    while (token.active) {
      if (concurrency - inFlight.size < refill) {
        // Claims come in batches of at least `refill`: one store round trip per batch, not per attempt.
        await Promise.race(inFlight)
        continue
      }
      const limit = Math.min(batchSize, concurrency - inFlight.size)
      const tasks = await claimAndLaunch()
      if (tasks === undefined) {
        failures++
        await sleep(Math.min(pollIntervalMs * 2 ** Math.min(failures, 16), MAX_BACKOFF_MS))
        continue
      }
      failures = 0
      if (tasks.length < limit && token.active) await sleep(pollIntervalMs)
    }
  }

  return {
    start() {
      if (current !== undefined) return
      const token = { active: true }
      current = token
      // After a draining stop (a restart), or at once.
      loop = (stopping ?? Promise.resolve()).then(() => run(token))
    },

    stop() {
      if (current !== undefined) current.active = false
      current = undefined
      wakeUp?.()
      const previous = stopping
      const ended = loop
      const drained = (async () => {
        await previous
        await ended
        while (inFlight.size > 0 || claims.size > 0) {
          await Promise.allSettled([...inFlight, ...claims])
        }
      })()
      const mine: Promise<void> = drained.finally(() => {
        if (stopping === mine) stopping = undefined
      })
      stopping = mine
      return mine
    },

    async tick() {
      if (stopping !== undefined) return 0
      const tasks = await claimAndLaunch()
      if (tasks === undefined) return 0
      await Promise.all(tasks)
      return tasks.length
    },

    wake() {
      if (wakeUp === undefined) woken = true
      else wakeUp()
    },
  }
}
