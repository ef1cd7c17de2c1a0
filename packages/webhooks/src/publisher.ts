/**
 * The publisher: turns one event into one delivery per enabled endpoint subscribed to its
 * type, in the delivery queue. The payload is serialised once and is the exact body of every
 * attempt to every endpoint, so every delivery of an event carries the same bytes and the same
 * `webhook-id`.
 *
 * @module
 */
import type { DeliveryQueue, NewDelivery } from './delivery-queue.ts'
import type { EndpointStore } from './endpoint-store.ts'
import { WebhookError } from './error.ts'
import type { WebhookEvent } from './event.ts'
import { parseEvent } from './event.ts'

/**
 * Options of {@link createWebhookPublisher}: where endpoints are found (a registry or its
 * store) and the queue deliveries go to.
 *
 * @example
 * ```ts
 * const options: WebhookPublisherOptions = { registry, queue: new MemoryDeliveryQueue() }
 * ```
 */
export type WebhookPublisherOptions = (
  | { registry: { readonly store: EndpointStore }; store?: never }
  | { store: EndpointStore; registry?: never }
) & {
  /** Where deliveries go; only `enqueue` is used. */
  queue: Pick<DeliveryQueue, 'enqueue'>
  /** Milliseconds since the epoch (default `Date.now`): the first attempt is due at once. */
  clock?: () => number
  /** The largest payload, in bytes of UTF-8 (default 262,144, 256 KiB; a receiver is not a file store). */
  maxPayloadBytes?: number
}

/**
 * Options of one {@link WebhookPublisher.publish}.
 *
 * @example
 * ```ts
 * // The transactional outbox: the order and its event commit together.
 * await db.transaction(async (tx) => {
 *   await saveOrder(tx, order)
 *   await publisher.publish(event, { queue: queue.inTransaction(tx) })
 * })
 * ```
 */
export interface PublishOptions {
  /**
   * Enqueue here instead (for example `PostgresDeliveryQueue#inTransaction(tx)`, so the
   * deliveries commit or roll back with the caller's write: the transactional outbox).
   */
  queue?: Pick<DeliveryQueue, 'enqueue'>
}

/**
 * Publishes events.
 *
 * @example
 * ```ts
 * async function orderCreated(publisher: WebhookPublisher, order: { id: string }) {
 *   return await publisher.publish(createEvent({ type: 'order.created', object: order }))
 * }
 * ```
 */
export interface WebhookPublisher {
  /**
   * Checks the envelope (`EVENT_INVALID`), serialises it once (`BODY_TOO_LARGE` over the
   * limit) and enqueues one delivery per enabled endpoint subscribed to its type. How many
   * deliveries were added (publishing an event again adds none: enqueueing is idempotent).
   */
  publish(event: WebhookEvent<object>, options?: PublishOptions): Promise<number>
}

/** Deliveries per enqueue call: a bound on one statement or one batch of a store. */
const ENQUEUE_CHUNK = 500
const DEFAULT_MAX_PAYLOAD = 256 * 1024

/** UTF-8 length of a string without encoding it (lone surrogates count as U+FFFD, 3 bytes). */
function utf8Length(text: string): number {
  let bytes = text.length
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x80) continue
    if (code < 0x800) bytes += 1
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1)
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 2 // four bytes for two UTF-16 units
        i++
      } else bytes += 2
    } else bytes += 2
  }
  return bytes
}

/**
 * Makes a publisher.
 *
 * @example
 * ```ts
 * import { createEvent, createWebhookPublisher, MemoryDeliveryQueue } from '@api-blocks/webhooks'
 *
 * const publisher = createWebhookPublisher({ registry, queue: new MemoryDeliveryQueue() })
 * const count = await publisher.publish(createEvent({ type: 'order.created', object: { id: 'ord_1' } }))
 * ```
 */
export function createWebhookPublisher(options: WebhookPublisherOptions): WebhookPublisher {
  const store = options.store ?? options.registry.store
  const clock = options.clock ?? Date.now
  const maxPayloadBytes = options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD
  if (!Number.isSafeInteger(maxPayloadBytes) || maxPayloadBytes < 1) {
    throw new RangeError('createWebhookPublisher(): maxPayloadBytes is a positive integer')
  }
  return {
    async publish(event, publishOptions = {}) {
      parseEvent(event)
      const payload = JSON.stringify(event)
      if (payload.length > maxPayloadBytes || utf8Length(payload) > maxPayloadBytes) {
        throw new WebhookError(
          'BODY_TOO_LARGE',
          `the event is over ${maxPayloadBytes} bytes once serialised`,
          {
            maxBytes: maxPayloadBytes,
          },
        )
      }
      const endpoints = await store.subscribed(event.type)
      if (endpoints.length === 0) return 0
      const now = clock()
      const queue = publishOptions.queue ?? options.queue
      let added = 0
      for (let start = 0; start < endpoints.length; start += ENQUEUE_CHUNK) {
        const deliveries: NewDelivery[] = endpoints
          .slice(start, start + ENQUEUE_CHUNK)
          .map((endpoint) => ({
            eventId: event.id,
            eventType: event.type,
            endpointId: endpoint.id,
            payload,
            createdAt: event.created * 1000,
            nextAttemptAt: now,
          }))
        added += await queue.enqueue(deliveries)
      }
      return added
    },
  }
}
