// The /v1/orders resource (docs/spec.md §4.3): list, create, read, replace, partial update, delete,
// the cancel action with its operation resource.

import type { Validators } from '@api-blocks/conditional'
import {
  cacheControlPresets,
  etagFromVersion,
  evaluatePreconditions,
  PreconditionError,
  toPreconditionResponse,
  validatorHeaders,
} from '@api-blocks/conditional'
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
  /** Page size bounds of the list (docs/spec.md §8 leaves them to the service). */
  page: { defaultLimit: number; maxLimit: number }
  /** Extra time a create takes (a demonstration of in-flight idempotency keys). */
  createLatencyMs: number
}

const STATUSES: readonly string[] = ['open', 'cancelling', 'cancelled']

const JSON_TYPE = 'application/json'

function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': JSON_TYPE, ...headers },
  })
}

// docs/spec.md §4.3 rule 9: orders are per-user data, sent with `private, no-store`.
const PER_USER = { 'cache-control': cacheControlPresets.perUser }

function validatorsOf(order: Order): Validators {
  return { etag: etagFromVersion(order.version), lastModified: Date.parse(order.updated_at) }
}

/** An order as a 200 (or 201) with its validators and cache headers. */
function orderResponse(order: Order, status = 200, headers: Record<string, string> = {}): Response {
  return json(order, status, { ...PER_USER, ...validatorHeaders(validatorsOf(order)), ...headers })
}

/**
 * RFC 9110 §13.2.2, evaluated after the order was found (§13.2.1: a 404 is never a 412) and
 * before the handler changes anything. Writes must be conditional (RFC 6585 §3: 428 without
 * If-Match). If-Match uses the strong comparison (§13.1.1): a weak tag never matches. The
 * tags here are the identity form's; compress() gives each coded form its own strong tag
 * (`"3%-gzip"`) and maps it back to `"3"` before this runs, so the tag of any form the
 * client received proves it saw the current version.
 */
function preconditions(request: Request, order: Order): Response | undefined {
  const result = evaluatePreconditions(request.method, request.headers, validatorsOf(order), {
    requireIfMatch: ['PUT', 'PATCH', 'DELETE'],
  })
  switch (result.outcome) {
    case 'proceed':
      return undefined
    case 'not-modified':
      return toPreconditionResponse(result, {
        headers: { ...PER_USER, ...validatorHeaders(validatorsOf(order)) },
      })
    default:
      // Thrown, so the error boundary renders it with the service's problem settings.
      throw new PreconditionError(result)
  }
}

function notFound(request: Request, what: string): Response {
  return problemResponse(problems.notFound.create({ detail: `No ${what} with this id.` }), request)
}

/** The handlers of `/v1/orders`, `/v1/orders/:id`, `/v1/orders/:id/cancel` and `/v1/operations/:id`. */
export function orderRoutes(options: OrderRoutesOptions): Record<string, MethodHandlers> {
  const { store, maxBodyBytes, schedule, cursors: codec, page: bounds, createLatencyMs } = options
  const read = { maxBytes: maxBodyBytes }
  const location = (order: Order) => `/v1/orders/${order.id}`
  // A write to one order: 404 first (RFC 9110 §13.2.1), then the preconditions, then the body.
  const write = async (
    request: Request,
    act: (current: Order) => Promise<Response>,
  ): Promise<Response> => {
    const current = store.get(paramOf(request, 'id'))
    if (!current) return notFound(request, 'order')
    return preconditions(request, current) ?? act(current)
  }

  return {
    '/v1/orders': {
      // docs/spec.md §2.3: `data`, `has_more`, `next_cursor`; `limit` and `after`, plus a `status` filter.
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
        return json(body, 200, { ...PER_USER, ...(link ? { link } : {}) })
      },
      POST: async (request) => {
        const input = await readJson(request, createOrderSchema, read)
        if (createLatencyMs > 0)
          await new Promise((resolve) => setTimeout(resolve, createLatencyMs))
        const order = store.create(input)
        return orderResponse(order, 201, { location: location(order) })
      },
    },
    '/v1/orders/:id': {
      GET: async (request) => {
        const order = store.get(paramOf(request, 'id'))
        if (!order) return notFound(request, 'order')
        return preconditions(request, order) ?? orderResponse(order)
      },
      PUT: (request) =>
        write(request, async (current) => {
          const order = store.replace(current.id, await readJson(request, replaceOrderSchema, read))
          return order ? orderResponse(order) : notFound(request, 'order')
        }),
      PATCH: (request) =>
        write(request, async (current) => {
          const order = store.patch(current.id, await readJson(request, patchOrderSchema, read))
          return order ? orderResponse(order) : notFound(request, 'order')
        }),
      DELETE: (request) =>
        write(request, async (current) => {
          store.delete(current.id)
          return new Response(null, { status: 204 })
        }),
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
