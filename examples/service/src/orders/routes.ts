// The /v1/orders resource (SPEC.md §4.3): list, create, read, replace, partial update, delete,
// the cancel action with its operation resource.
import type { MethodHandlers } from '@api-blocks/http'
import { problemResponse, readJson } from '@api-blocks/http'
import type { CursorCodec } from '@api-blocks/pagination'
import { nextPageLink, parseListRequest, seekArray, toListEnvelope } from '@api-blocks/pagination'
import { problems } from '@api-blocks/problem-details'
import { paramOf } from '../router.ts'
import type { Order } from './schema.ts'
import { createOrderSchema, patchOrderSchema, replaceOrderSchema } from './schema.ts'
import type { OrderStore } from './store.ts'

export interface OrderRoutesOptions {
  store: OrderStore
  /** Largest accepted request body, in bytes. */
  maxBodyBytes: number
  /** Runs the asynchronous part of an action (default: soon, on a timer). */
  schedule: (task: () => void) => void
  /** Signs and checks list cursors. */
  cursors: CursorCodec
  /** Page size bounds of the list (SPEC.md §8 leaves them to the service). */
  page: { defaultLimit: number; maxLimit: number }
}

const STATUSES: readonly string[] = ['open', 'cancelling', 'cancelled']

const JSON_TYPE = 'application/json'

function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': JSON_TYPE, ...headers },
  })
}

function notFound(request: Request, what: string): Response {
  return problemResponse(problems.notFound.create({ detail: `No ${what} with this id.` }), request)
}

/** The handlers of `/v1/orders`, `/v1/orders/:id`, `/v1/orders/:id/cancel` and `/v1/operations/:id`. */
export function orderRoutes(options: OrderRoutesOptions): Record<string, MethodHandlers> {
  const { store, maxBodyBytes, schedule, cursors: codec, page: bounds } = options
  const read = { maxBytes: maxBodyBytes }
  const location = (order: Order) => `/v1/orders/${order.id}`

  return {
    '/v1/orders': {
      // SPEC.md §2.3: `data`, `has_more`, `next_cursor`; `limit` and `after`, plus a `status` filter.
      // The cursor is bound to the order and the filter, so it cannot be replayed on another query.
      GET: async (request) => {
        const url = new URL(request.url)
        const statuses = url.searchParams.getAll('status')
        if (statuses.length > 1 || (statuses[0] !== undefined && !STATUSES.includes(statuses[0]))) {
          throw problems.badRequest.error({
            detail: `status must be one of ${STATUSES.join(', ')}.`,
          })
        }
        const status = statuses[0] ?? null
        const cursors = codec.forQuery({
          order: { keys: ['created_at', 'id'], direction: 'asc' },
          filters: { status },
        })
        const page = await parseListRequest(url.searchParams, { cursors, ...bounds })
        const matching = store.list().filter((order) => status === null || order.status === status)
        const body = await toListEnvelope(seekArray(matching, page), page, cursors)
        const link = nextPageLink(url, body.next_cursor)
        return json(body, 200, link ? { link } : {})
      },
      POST: async (request) => {
        const input = await readJson(request, createOrderSchema, read)
        const order = store.create(input)
        return json(order, 201, { location: location(order) })
      },
    },
    '/v1/orders/:id': {
      GET: async (request) => {
        const order = store.get(paramOf(request, 'id'))
        return order ? json(order) : notFound(request, 'order')
      },
      PUT: async (request) => {
        const id = paramOf(request, 'id')
        if (!store.get(id)) return notFound(request, 'order')
        const order = store.replace(id, await readJson(request, replaceOrderSchema, read))
        return order ? json(order) : notFound(request, 'order')
      },
      PATCH: async (request) => {
        const id = paramOf(request, 'id')
        if (!store.get(id)) return notFound(request, 'order')
        const order = store.patch(id, await readJson(request, patchOrderSchema, read))
        return order ? json(order) : notFound(request, 'order')
      },
      DELETE: async (request) =>
        store.delete(paramOf(request, 'id'))
          ? new Response(null, { status: 204 })
          : notFound(request, 'order'),
    },
    '/v1/orders/:id/cancel': {
      POST: async (request) => {
        const order = store.get(paramOf(request, 'id'))
        if (!order) return notFound(request, 'order')
        if (order.status !== 'open') {
          return problemResponse(
            problems.conflict.create({ detail: `The order is ${order.status}.` }),
            request,
          )
        }
        store.setStatus(order.id, 'cancelling')
        const operation = store.createOperation(location(order))
        schedule(() => {
          store.setStatus(order.id, 'cancelled')
          store.completeOperation(operation.id, 'succeeded')
        })
        // RFC 9110 §15.3.3: a 202 points to a status monitor; Retry-After says when to poll.
        return json(operation, 202, {
          location: `/v1/operations/${operation.id}`,
          'retry-after': '1',
        })
      },
    },
    '/v1/operations/:id': {
      GET: async (request) => {
        const operation = store.getOperation(paramOf(request, 'id'))
        if (!operation) return notFound(request, 'operation')
        return json(operation, 200, operation.status === 'running' ? { 'retry-after': '1' } : {})
      },
    },
  }
}
