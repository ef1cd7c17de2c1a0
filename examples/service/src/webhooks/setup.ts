// The service's outbound webhooks (docs/service.md, "Webhooks"), put together from
// @api-blocks/webhooks: the endpoint registry behind the SSRF guard, the publisher that turns
// each order change into one delivery per subscribed endpoint, and the worker that sends them
// (signed, retried on the schedule of docs/spec.md §3.1, dead-lettered at the end).
import type { Queryable } from '@api-blocks/postgres'
import type {
  DeliveryQueue,
  DeliveryWorker,
  DeliveryWorkerEvent,
  EndpointRegistry,
  EndpointStore,
  SsrfGuard,
  WebhookEvent,
  WebhookPublisher,
} from '@api-blocks/webhooks'
import {
  createDeliveryWorker,
  createEndpointRegistry,
  createEvent,
  createRetryPolicy,
  createSsrfGuard,
  createWebhookPublisher,
  createWebhookSender,
  MemoryDeliveryQueue,
  MemoryEndpointStore,
  retrySchedules,
} from '@api-blocks/webhooks'
import type { WebhookSettings } from '../config.ts'
import type { OrderEvents } from '../orders/store.ts'
import { ORDER_EVENT_TYPES } from '../orders/store.ts'

/** The version of the order events' schema (`version` of every envelope). */
const EVENT_VERSION = '1'

/**
 * The {@link OrderEvents} an order store calls: each change becomes a fat event (`data.object`
 * is the order as the API shows it) handed to `publish`, which makes one delivery per
 * subscribed endpoint. A store with transactions passes its transaction's connection (`db`):
 * `publish` then reads the endpoints and enqueues the deliveries on that connection
 * (src/stores.ts), so they commit with the order or not at all, and a write never waits for a
 * second connection of the pool while it holds one.
 */
export function orderEvents(
  publish: (event: WebhookEvent, db?: Queryable) => Promise<number>,
  options: {
    clock?: () => number
    /** Called once deliveries are enqueued (the memory queue: the worker may start at once). */
    enqueued?: () => void
  } = {},
): OrderEvents {
  const { clock, enqueued } = options
  return async (type, order, db) => {
    const event = createEvent(
      { type, object: order, version: EVENT_VERSION },
      clock ? { clock } : {},
    )
    if ((await publish(event, db)) > 0) enqueued?.()
  }
}

/** How {@link createWebhooks} puts the pieces together; every member has a default. */
export interface WebhooksOptions {
  /** Where endpoints live (default: in memory). `PostgresEndpointStore` to share them. */
  endpointStore?: EndpointStore
  /** Where deliveries wait (default: in memory). `PostgresDeliveryQueue` to share them. */
  queue?: DeliveryQueue
  /** From the environment (config.ts): the schedule, the deadline, the allowed private origins. */
  settings?: WebhookSettings
  /** How often the worker looks at the queue when it has nothing to do (default 1000 ms). */
  pollIntervalMs?: number
  /** Receives what the worker reports (attempts, dead letters, endpoints disabled). */
  onEvent?: (event: DeliveryWorkerEvent) => void
  /**
   * The 32-byte key that seals endpoint secrets at rest (AES-256-GCM; a signing secret is an
   * HMAC key, so it cannot be stored hashed like a token). Default: random for this process,
   * which suits the memory store (it dies with the process); main.ts derives it from
   * OAUTH_TOKEN_KEY with {@link deriveSecretsKey}, so instances sharing PostgreSQL share it.
   */
  encryptionKey?: Uint8Array
  /** Milliseconds since the epoch. */
  clock?: () => number
}

/**
 * The key that seals endpoint secrets, derived from the OAuth token key with HKDF-SHA-256
 * (RFC 5869; a distinct `info`, so the two uses never share a key): one secret to configure
 * (OAUTH_TOKEN_KEY, required with a shared store) and the same key on every instance.
 */
export async function deriveSecretsKey(tokenKey: Uint8Array): Promise<Uint8Array> {
  const material = await crypto.subtle.importKey('raw', new Uint8Array(tokenKey), 'HKDF', false, [
    'deriveBits',
  ])
  const bits = await crypto.subtle.deriveBits(
    {
      name: 'HKDF',
      hash: 'SHA-256',
      salt: new Uint8Array(0),
      info: new TextEncoder().encode('api-blocks service: webhook endpoint secrets'),
    },
    material,
    256,
  )
  return new Uint8Array(bits)
}

/** What {@link createWebhooks} builds. */
export interface ServiceWebhooks {
  registry: EndpointRegistry
  queue: DeliveryQueue
  publisher: WebhookPublisher
  /** Sends what the queue holds; started by main.ts (every instance runs one). */
  worker: DeliveryWorker
  guard: SsrfGuard
  /** The order events of the memory order store: published after its write, the worker woken. */
  orderEvents: OrderEvents
  /** Stops the worker (in-flight attempts finish), then closes the sender and the guard. */
  close(): Promise<void>
}

/** Puts the outbound webhooks together. The worker is not started: call `worker.start()`. */
export function createWebhooks(options: WebhooksOptions = {}): ServiceWebhooks {
  const settings = options.settings ?? {
    retry: undefined,
    timeoutMs: undefined,
    allowedOrigins: [],
  }
  const clock = options.clock ? { clock: options.clock } : {}
  const store = options.endpointStore ?? new MemoryEndpointStore()
  const queue = options.queue ?? new MemoryDeliveryQueue()
  // Refuses private, loopback, link-local and metadata addresses, at registration (checkUrl)
  // and at every connect (its dispatcher: a host name that resolves elsewhere later is refused
  // then), except the origins WEBHOOK_ALLOWED_PRIVATE_ORIGINS lists.
  const guard = createSsrfGuard({ allowedOrigins: settings.allowedOrigins })
  const registry = createEndpointRegistry({
    store,
    guard,
    eventTypes: ORDER_EVENT_TYPES,
    encryptionKey: options.encryptionKey ?? crypto.getRandomValues(new Uint8Array(32)),
    ...clock,
  })
  const publisher = createWebhookPublisher({ registry, queue, ...clock })
  const sender = createWebhookSender({
    guard,
    ...(settings.timeoutMs !== undefined ? { timeoutMs: settings.timeoutMs } : {}),
    ...clock,
  })
  // The typical schedule of docs/spec.md §3.1, unless the environment sets the exponential one.
  const policy = createRetryPolicy(settings.retry ?? { schedule: retrySchedules.typical })
  const worker = createDeliveryWorker({
    queue,
    registry,
    sender,
    policy,
    // A lease outlives the attempt's deadline with room to settle: a delivery is never claimed
    // by a second worker while the first still waits for the receiver.
    leaseMs: (settings.timeoutMs ?? 10_000) + 30_000,
    ...(options.pollIntervalMs !== undefined ? { pollIntervalMs: options.pollIntervalMs } : {}),
    ...(options.onEvent ? { onEvent: options.onEvent } : {}),
    ...clock,
  })
  return {
    registry,
    queue,
    publisher,
    worker,
    guard,
    orderEvents: orderEvents((event) => publisher.publish(event), {
      ...clock,
      enqueued: () => worker.wake(),
    }),
    close: async () => {
      await worker.stop()
      await sender.close()
      await guard.close()
    },
  }
}
