// The receiver as one Fetch handler: POST /webhooks verifies the signature over the raw bytes
// (before any parsing), refuses stale timestamps, drops a repeated webhook-id, answers at once
// and handles the event after the answer; GET /health answers 200.
import type { DedupStore, WebhookEvent } from '@api-blocks/webhooks'
import { createWebhookReceiver, MemoryDedupStore } from '@api-blocks/webhooks'

/** What the receiver logs of each event, once. */
export interface ReceivedEvent {
  event_id: string
  type: string
  /** Seconds since the epoch, as the event says. */
  created: number
  /** The order's id, status and version (`data.object`: the order as the API shows it). */
  order: { id: unknown; status: unknown; version: unknown }
}

export interface ReceiverOptions {
  /** `whsec_…` secrets: during a rotation, the old and the new one both verify. */
  secrets: readonly string[]
  /** Where handled webhook-ids are kept 24 hours (default: in memory, this process). */
  dedup?: DedupStore
  /** Receives each event once (a repeated delivery of it is answered 200 and not passed on). */
  onEvent: (event: ReceivedEvent) => void
  /** Receives a handler's failure (the id is released, so a redelivery is handled again). */
  onError?: (error: unknown) => void
  /** Milliseconds since the epoch (the timestamp tolerance is checked against it). */
  clock?: () => number
}

/** The receiver's routes. */
export function createReceiverApp(
  options: ReceiverOptions,
): (request: Request) => Promise<Response> {
  const receiver = createWebhookReceiver({
    secrets: options.secrets,
    dedup: options.dedup ?? new MemoryDedupStore(),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.onError ? { onError: (error: unknown) => options.onError?.(error) } : {}),
    handler: (event: WebhookEvent) => {
      const order = event.data.object
      options.onEvent({
        event_id: event.id,
        type: event.type,
        created: event.created,
        order: { id: order['id'], status: order['status'], version: order['version'] },
      })
    },
  })
  return async (request) => {
    const { pathname } = new URL(request.url)
    // 405 for another method, 413 past 1 MiB, 400 for a bad signature or a stale timestamp.
    if (pathname === '/webhooks') return receiver.handle(request)
    if (pathname === '/health' && request.method === 'GET') return Response.json({ ok: true })
    return new Response(null, { status: 404 })
  }
}
