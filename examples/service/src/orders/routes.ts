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
import type { IdempotencyStore } from '@api-blocks/idempotency'
import { idempotencyContext } from '@api-blocks/idempotency'
import type { CursorCodec } from '@api-blocks/pagination'
import { nextPageLink, parseListRequest, toListEnvelope } from '@api-blocks/pagination'
import { problems } from '@api-blocks/problem-details'
import { paramOf } from '../router.ts'
import type { OrderCreator } from './create.ts'
import type { Order } from './schema.ts'
import { createOrderSchema, patchOrderSchema, replaceOrderSchema } from './schema.ts'
import type { OrderChanges, OrderStore } from './store.ts'
import { LIST_ORDER } from './store.ts'

export interface OrderRoutesOptions {
  store: OrderStore
  /**
   * The service's public origin (and base path), e.g. `https://api.example.com`: absolute URLs
   * (Location, Link) are built on it, never on the request's Host header, which any client
   * can set.
   */
  publicUrl: string
  /** Runs the asynchronous part of an action (default: soon, on a timer). */
  schedule: (task: () => void) => void
  /** Signs and checks list cursors. */
  cursors: CursorCodec
  /** Page size bounds of the list (docs/spec.md §8 leaves them to the service). */
  page: { defaultLimit: number; maxLimit: number }
  /** Creates an order (orders/create.ts: the path the createOrder mutation takes too). */
  create: OrderCreator
  /** Receives a failure of the asynchronous part of an action (default: the console). */
  onError?: (error: unknown) => void
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
  // Bodies are read within the limit limits({ maxBodyBytes }) records for every route (core's
  // bodyLimitOf), the one the idempotency middleware applies too.
  const { store, create, schedule, cursors: codec, page: bounds } = options
  const base = options.publicUrl.replace(/\/+$/, '')
  // RFC 9110 §10.2.2 allows a relative Location, but an absolute one on the configured origin
  // is what a client behind proxies can follow as it is; the path goes into the order's
  // `target` (relative, so a stored operation does not depend on the configuration).
  const path = (order: Pick<Order, 'id'>) => `/v1/orders/${order.id}`
  // A write to one order: 404 first (RFC 9110 §13.2.1), then the preconditions, then the body,
  // then a write conditional on the version the preconditions saw. When another instance
  // (or request) wrote in between, the order is read again and the preconditions answer for
  // what it is now: 412 (or 404 when it went).
  const write = async (
    request: Request,
    act: (current: Order) => Promise<Response | undefined>,
  ): Promise<Response> => {
    const current = await store.get(paramOf(request, 'id'))
    if (!current) return notFound(request, 'order')
    const refused = preconditions(request, current)
    if (refused) return refused
    const response = await act(current)
    if (response) return response
    const now = await store.get(current.id)
    if (!now) return notFound(request, 'order')
    return preconditions(request, now) ?? raced()
  }
  const update = async (current: Order, changes: OrderChanges) => {
    const order = await store.update(current, changes)
    return order ? orderResponse(order) : undefined
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
        const status = (statuses[0] ?? null) as Order['status'] | null
        const cursors = codec.forQuery({ order: LIST_ORDER, filters: { status } })
        const page = await parseListRequest(url.searchParams, { cursors, ...bounds })
        const body = await toListEnvelope(await store.list({ status, page }), page, cursors)
        // The request's path and query on the public origin: never its Host header.
        const link = nextPageLink(`${base}${url.pathname}${url.search}`, body.next_cursor)
        return json(body, 200, { ...PER_USER, ...(link ? { link } : {}) })
      },
      POST: async (request) => {
        const input = await readJson(request, createOrderSchema)
        // The order and its Idempotency-Key record commit together (a store with transactions).
        return create(input, (order, idempotencyStore) =>
          settle(
            request,
            orderResponse(order, 201, { location: `${base}${path(order)}` }),
            idempotencyStore,
          ),
        )
      },
    },
    '/v1/orders/:id': {
      GET: async (request) => {
        const order = await store.get(paramOf(request, 'id'))
        if (!order) return notFound(request, 'order')
        return preconditions(request, order) ?? orderResponse(order)
      },
      PUT: (request) =>
        write(request, async (current) =>
          update(current, await readJson(request, replaceOrderSchema)),
        ),
      PATCH: (request) =>
        write(request, async (current) => {
          const patch = await readJson(request, patchOrderSchema)
          const changes: OrderChanges = {}
          if (patch.customer !== undefined) changes.customer = patch.customer
          if (patch.items !== undefined) changes.items = patch.items
          if (patch.note !== undefined) changes.note = patch.note
          // RFC 7396 §2: an empty merge patch leaves the target as it is: no write, no new version.
          if (Object.keys(changes).length === 0) return orderResponse(current)
          return update(current, changes)
        }),
      DELETE: (request) =>
        write(request, async (current) =>
          (await store.delete(current)) ? new Response(null, { status: 204 }) : undefined,
        ),
    },
    '/v1/orders/:id/cancel': {
      POST: async (request) => {
        const id = paramOf(request, 'id')
        const accepted = await store.cancel(id, path({ id }), (operation, idempotencyStore) =>
          // RFC 9110 §15.3.3: a 202 points to a status monitor; Retry-After says when to poll.
          settle(
            request,
            json(operation, 202, {
              location: `${base}/v1/operations/${operation.id}`,
              'retry-after': '1',
            }),
            idempotencyStore,
          ).then((response) => ({ response, operation })),
        )
        if (accepted) {
          const { operation } = accepted
          schedule(() => {
            store
              .finishCancel(id, operation.id)
              .catch(options.onError ?? ((error: unknown) => console.error('cancel:', error)))
          })
          return accepted.response
        }
        const order = await store.get(id)
        if (!order) return notFound(request, 'order')
        return problemResponse(
          problems.conflict.create({ detail: `The order is ${order.status}.` }),
          request,
        )
      },
    },
    '/v1/operations/:id': {
      GET: async (request) => {
        const operation = await store.getOperation(paramOf(request, 'id'))
        if (!operation) return notFound(request, 'operation')
        return json(operation, 200, operation.status === 'running' ? { 'retry-after': '1' } : {})
      },
    },
  }
}

/**
 * The answer of a write, with its Idempotency-Key record completed in the write's own
 * transaction when the store has one (`completeWith`: a lost lease or a failed store throws,
 * and the write rolls back). Otherwise the middleware completes the record after the handler.
 */
function settle(
  request: Request,
  response: Response,
  idempotencyStore: IdempotencyStore | undefined,
): Promise<Response> {
  const context = idempotencyContext(request)
  if (context === undefined || idempotencyStore === undefined) return Promise.resolve(response)
  return context.completeWith(response, idempotencyStore)
}

/** A conditional write lost a race its preconditions could not see (the same version again). */
function raced(): never {
  throw problems.conflict.error({
    detail: 'The order changed while it was being written; read it again.',
  })
}
