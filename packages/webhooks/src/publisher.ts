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
  /** Where deliveries go: `enqueue`, and `get` when it has one (to find a reused event id). */
  queue: Pick<DeliveryQueue, 'enqueue'> & Partial<Pick<DeliveryQueue, 'get'>>
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
  queue?: Pick<DeliveryQueue, 'enqueue'> & Partial<Pick<DeliveryQueue, 'get'>>
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
   * Serialises the event once (`BODY_TOO_LARGE` over the limit; `EVENT_INVALID` when it does
   * not serialise, a `BigInt` say), checks the envelope those bytes hold (`EVENT_INVALID`: what
   * is checked is what is sent, whatever a `toJSON` does) and enqueues one delivery per enabled
   * endpoint subscribed to its type. How many deliveries were added (publishing an event again
   * adds none: enqueueing is idempotent). An id already published with another payload is
   * `EVENT_ID_REUSED` (409), found when the enqueue adds fewer than asked: the pairs already
   * present keep their payload, pairs new to the queue (an endpoint subscribed since) are added.
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
 * Throws `EVENT_ID_REUSED` when the pairs of `deliveries` already held another payload. The
 * first pair present decides: the same payload there is a republish of the same event.
 */
async function sameEvent(
  queue: Pick<DeliveryQueue, 'get'>,
  deliveries: readonly NewDelivery[],
  payload: string,
): Promise<void> {
  for (const delivery of deliveries) {
    const stored = await queue.get(delivery.eventId, delivery.endpointId)
    if (stored === undefined) continue
    if (stored.payload === payload) return
    throw new WebhookError(
      'EVENT_ID_REUSED',
      `event id ${delivery.eventId} was already published with another payload; a new event needs a new id`,
    )
  }
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
      // Serialised first, then the bytes checked: a toJSON anywhere could make them differ
      // from the object.
      let payload: string | undefined
      try {
        payload = JSON.stringify(event)
      } catch (cause) {
        const reason = cause instanceof Error ? cause.message : 'JSON.stringify threw'
        throw new WebhookError('EVENT_INVALID', `the event does not serialise to JSON: ${reason}`, {
          cause,
        })
      }
      if (typeof payload !== 'string') {
        throw new WebhookError('EVENT_INVALID', 'the event does not serialise to a JSON value')
      }
      if (payload.length > maxPayloadBytes || utf8Length(payload) > maxPayloadBytes) {
        throw new WebhookError(
          'BODY_TOO_LARGE',
          `the event is over ${maxPayloadBytes} bytes once serialised`,
          {
            maxBytes: maxPayloadBytes,
          },
        )
      }
      const sent = parseEvent(JSON.parse(payload))
      const endpoints = await store.subscribed(sent.type)
      if (endpoints.length === 0) return 0
      const now = clock()
      const queue = publishOptions.queue ?? options.queue
      let added = 0
      for (let start = 0; start < endpoints.length; start += ENQUEUE_CHUNK) {
        const deliveries: NewDelivery[] = endpoints
          .slice(start, start + ENQUEUE_CHUNK)
          .map((endpoint) => ({
            eventId: sent.id,
            eventType: sent.type,
            endpointId: endpoint.id,
            payload,
            createdAt: sent.created * 1000,
            nextAttemptAt: now,
          }))
        const inserted = await queue.enqueue(deliveries)
        added += inserted
        if (inserted < deliveries.length && queue.get !== undefined) {
          await sameEvent({ get: queue.get.bind(queue) }, deliveries, payload)
        }
      }
      return added
    },
  }
}
