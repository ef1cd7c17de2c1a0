// The /v1/webhook_endpoints resource (docs/service.md, "Webhooks"): register, list, read and
// delete receiver endpoints, rotate their secret, inspect their deliveries and redeliver one.
// Every endpoint belongs to the principal that registered it (core's principalKey): another
// principal gets 404 for it, as for an id that does not exist.
import { principalKey, principalOf } from '@api-blocks/core'
import type { MethodHandlers } from '@api-blocks/http'
import { readJson } from '@api-blocks/http'
import type { CursorCodec } from '@api-blocks/pagination'
import { nextPageLink, parseListRequest, toListEnvelope } from '@api-blocks/pagination'
import { problems } from '@api-blocks/problem-details'
import type {
  Delivery,
  DeliveryQueue,
  DeliveryStatus,
  EndpointRegistry,
  EndpointView,
} from '@api-blocks/webhooks'
import { WebhookError } from '@api-blocks/webhooks'
import { paramOf } from '../router.ts'
import type { DeliveryView, WebhookEndpointView } from './schema.ts'
import { createWebhookEndpointSchema } from './schema.ts'

export interface WebhookRoutesOptions {
  registry: EndpointRegistry
  queue: DeliveryQueue
  /** Asks the worker to look at the queue now (a redelivery is due at once). */
  wake: () => void
  /** The service's public origin (and base path): the base of Location and Link. */
  publicUrl: string
  /** Signs and checks list cursors. */
  cursors: CursorCodec
  /** Page size bounds of the lists. */
  page: { defaultLimit: number; maxLimit: number }
  /** Endpoints one principal may have (default 20): each event is one delivery per endpoint. */
  maxEndpointsPerOwner?: number
  /** Milliseconds since the epoch. */
  clock: () => number
}

const JSON_TYPE = 'application/json'
// Endpoints and their secrets are the caller's own: never stored by a shared cache.
const PRIVATE = { 'cache-control': 'private, no-store' }

function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': JSON_TYPE, ...PRIVATE, ...headers },
  })
}

const iso = (ms: number) => new Date(ms).toISOString()

/** An endpoint as the API shows it: never its secrets (they are shown once, when issued). */
function endpointView(endpoint: EndpointView): WebhookEndpointView {
  return {
    id: endpoint.id,
    url: endpoint.url,
    events:
      endpoint.events === null ? null : ([...endpoint.events] as WebhookEndpointView['events']),
    status: endpoint.status,
    disabled_reason: endpoint.disabledReason,
    created_at: iso(endpoint.createdAt),
    updated_at: iso(endpoint.updatedAt),
  }
}

/** A delivery as the API shows it: its state and attempt log (never its payload's secrets: it has none). */
function deliveryView(delivery: Delivery): DeliveryView {
  return {
    event_id: delivery.eventId,
    event_type: delivery.eventType as DeliveryView['event_type'],
    status: delivery.status,
    attempt_count: delivery.attempts,
    attempts: delivery.log.map((line) => ({
      attempt: line.attempt,
      at: iso(line.at),
      status_code: line.status,
      latency_ms: line.latencyMs,
      failure: line.failure,
      response_body: line.body,
    })),
    next_attempt_at: delivery.status === 'pending' ? iso(delivery.nextAttemptAt) : null,
    created_at: iso(delivery.createdAt),
    updated_at: iso(delivery.updatedAt),
  }
}

const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['pending', 'succeeded', 'failed', 'dead']

/** The owner of what a request registers: the principal the bearer layer recorded. */
function ownerOf(request: Request): string {
  const principal = principalOf(request)
  const key = principal === undefined ? undefined : principalKey(principal)
  // Every /v1 route is behind the bearer layer: no principal here is a wiring bug.
  if (key === undefined) throw new Error('No principal on a /v1/webhook_endpoints request')
  return key
}

/** The handlers of `/v1/webhook_endpoints` and below. */
export function webhookRoutes(options: WebhookRoutesOptions): Record<string, MethodHandlers> {
  const { registry, queue, cursors: codec, page: bounds, clock } = options
  const base = options.publicUrl.replace(/\/+$/, '')
  const maxEndpoints = options.maxEndpointsPerOwner ?? 20
  // Endpoint ids ascending; the cursor is bound to the owner, so it lists nothing of another's.
  const endpointCursors = (owner: string) =>
    codec.forQuery({ order: { keys: ['id'], direction: 'asc' }, filters: { owner } })
  // Newest event first, as the queue lists them.
  const deliveryCursors = (endpointId: string, status: DeliveryStatus | null) =>
    codec.forQuery({
      order: { keys: ['created_at', 'event_id'], direction: 'desc' },
      filters: { endpoint: endpointId, status },
    })
  /** The endpoint of the path, if it is the caller's (another's is a 404, as a missing one). */
  const endpointOf = (request: Request): Promise<EndpointView> =>
    registry.get(paramOf(request, 'id'), ownerOf(request))

  return {
    '/v1/webhook_endpoints': {
      GET: async (request) => {
        const url = new URL(request.url)
        const owner = ownerOf(request)
        const cursors = endpointCursors(owner)
        const page = await parseListRequest(url.searchParams, { cursors, ...bounds })
        const after = page.after?.[0]
        const rows = await registry.list({
          owner,
          ...(typeof after === 'string' ? { after } : {}),
          limit: page.limit + 1,
        })
        const body = await toListEnvelope(rows.map(endpointView), page, cursors)
        const link = nextPageLink(`${base}${url.pathname}${url.search}`, body.next_cursor)
        return json(body, 200, link ? { link } : {})
      },
      POST: async (request) => {
        const input = await readJson(request, createWebhookEndpointSchema)
        const owner = ownerOf(request)
        // A bound per principal (each event is one delivery per endpoint). Two concurrent
        // creates may both pass the count: the bound is a guard against floods, not an exact
        // quota.
        const existing = await registry.list({ owner, limit: maxEndpoints })
        if (existing.length >= maxEndpoints) {
          throw problems.conflict.error({
            detail: `At most ${maxEndpoints} webhook endpoints per client; delete one first.`,
          })
        }
        // The SSRF guard checks the URL (422 with a pointer at /url when it refuses it).
        const { endpoint, secret } = await registry.create({
          url: input.url,
          ...(input.events ? { events: input.events } : {}),
          owner,
        })
        return json({ ...endpointView(endpoint), secret }, 201, {
          location: `${base}/v1/webhook_endpoints/${endpoint.id}`,
        })
      },
    },
    '/v1/webhook_endpoints/:id': {
      GET: async (request) => json(endpointView(await endpointOf(request))),
      DELETE: async (request) => {
        const endpoint = await endpointOf(request)
        // Its pending deliveries end `failed` (endpoint-deleted) when the worker reaches them.
        await registry.delete(endpoint.id, ownerOf(request))
        return new Response(null, { status: 204, headers: PRIVATE })
      },
    },
    '/v1/webhook_endpoints/:id/rotate_secret': {
      POST: async (request) => {
        const endpoint = await endpointOf(request)
        // The new secret signs from now on; the previous one keeps signing during the overlap
        // window (24 hours), so a receiver can switch without missing a delivery.
        const rotated = await registry.rotateSecret(endpoint.id, ownerOf(request))
        return json({ ...endpointView(rotated.endpoint), secret: rotated.secret })
      },
    },
    '/v1/webhook_endpoints/:id/deliveries': {
      GET: async (request) => {
        const endpoint = await endpointOf(request)
        const url = new URL(request.url)
        const statuses = url.searchParams.getAll('status')
        if (
          statuses.length > 1 ||
          (statuses[0] !== undefined && !DELIVERY_STATUSES.includes(statuses[0] as DeliveryStatus))
        ) {
          throw problems.badRequest.error({
            detail: `status must be one of ${DELIVERY_STATUSES.join(', ')}.`,
          })
        }
        const status = (statuses[0] ?? null) as DeliveryStatus | null
        const cursors = deliveryCursors(endpoint.id, status)
        const page = await parseListRequest(url.searchParams, { cursors, ...bounds })
        const [createdAt, eventId] = page.after ?? []
        const rows = await queue.list({
          endpointId: endpoint.id,
          ...(status ? { status } : {}),
          ...(typeof createdAt === 'number' && typeof eventId === 'string'
            ? { after: { createdAt, eventId } }
            : {}),
          limit: page.limit + 1,
        })
        // The list envelope of docs/spec.md §2.3; the cursor holds the last delivery's position
        // in the queue's order (milliseconds, event id).
        const data = rows.slice(0, page.limit)
        const last = rows.length > page.limit ? data.at(-1) : undefined
        const nextCursor = last
          ? await cursors.cursorOf({ created_at: last.createdAt, event_id: last.eventId })
          : null
        const body = {
          data: data.map(deliveryView),
          has_more: nextCursor !== null,
          next_cursor: nextCursor,
        }
        const link = nextPageLink(`${base}${url.pathname}${url.search}`, body.next_cursor)
        return json(body, 200, link ? { link } : {})
      },
    },
    '/v1/webhook_endpoints/:id/deliveries/:event_id/redeliver': {
      POST: async (request) => {
        const endpoint = await endpointOf(request)
        const eventId = paramOf(request, 'event_id')
        // The same event again (same webhook-id, same body): receivers drop it if they had it.
        const replayed = await queue.replay({ eventId, endpointId: endpoint.id }, clock())
        if (replayed === 0) {
          throw new WebhookError(
            'DELIVERY_NOT_FOUND',
            'No delivery of this event to this endpoint.',
          )
        }
        options.wake()
        const delivery = await queue.get(eventId, endpoint.id)
        return json(delivery ? deliveryView(delivery) : { event_id: eventId }, 202)
      },
    },
  }
}
