// /graphql as the service serves it: the executable schema, the guards and persisted documents
// every transport shares, the limiter each operation's cost is charged to, and the layers in
// front of the handler (docs/service.md, "GraphQL"). app.ts puts the bearer and idempotency
// layers of /v1 around it; main.ts attaches the WebSocket server with the same operations.
import { cacheControlPresets } from '@api-blocks/conditional'
import { storeGuard } from '@api-blocks/core'
import type { PersistedDocumentStore, PreparerOptions, PubSub } from '@api-blocks/graphql'
import { createGraphQLHandler, MemoryPersistedDocumentStore } from '@api-blocks/graphql'
import type { Handler, Middleware } from '@api-blocks/http'
import type { CursorCodec } from '@api-blocks/pagination'
import type { RateLimiter, RateLimitPolicy, RateLimitStore } from '@api-blocks/rate-limit'
import { createRateLimiter, rateLimitKey } from '@api-blocks/rate-limit'
import type { Logger } from '../log.ts'
import { errorLog, graphqlLog } from '../log.ts'
import type { OrderCreator } from '../orders/create.ts'
import type { OrderStore } from '../orders/store.ts'
import { GUARDS, orderSchema } from './index.ts'

/** Where GraphQL is served: POST, GET and server-sent events here, WebSocket by main.ts. */
export const GRAPHQL_PATH = '/graphql'

/** How /graphql is set up; every member has a default. */
export interface ServiceGraphQLOptions {
  /** Whether `__schema` and `__type` are answered (default true; main.ts: off in production). */
  introspection?: boolean
  /**
   * Persisted documents: `apq` (default: Apollo's automatic persisted queries and `documentId`),
   * `allow-list` (only the documents of the store run: load a manifest into it first), or
   * `false` (none).
   */
  persistedQueries?: 'apq' | 'allow-list' | false
  /** Where persisted documents live (default: in memory, 1000 documents). */
  persistedDocuments?: PersistedDocumentStore
}

/** What {@link createGraphQLEndpoint} builds on: the pieces of the order routes and the limiter of /v1. */
export interface GraphQLEndpointOptions {
  store: OrderStore
  create: OrderCreator
  cursors: CursorCodec
  page: { defaultLimit: number; maxLimit: number }
  pubsub: PubSub
  settings: ServiceGraphQLOptions
  /** The state and policies of /v1's rate limit: one budget per principal for both interfaces. */
  rateLimitStore: RateLimitStore
  policies: readonly RateLimitPolicy[]
  clock?: (() => number) | undefined
  logger?: Logger | undefined
}

/** The GraphQL endpoint: its handler, and what the WebSocket server shares with it. */
export interface GraphQLEndpoint {
  /** POST, GET and server-sent events, the cost charged; behind the bearer layer of app.ts. */
  handler: Handler
  /** The schema, the guards and the persisted documents. */
  operations: PreparerOptions
  /** The limiter each operation's cost is charged to. */
  limiter: RateLimiter
}

/** Builds the endpoint. */
export function createGraphQLEndpoint(options: GraphQLEndpointOptions): GraphQLEndpoint {
  const { settings, logger, clock, rateLimitStore } = options
  const persisted = settings.persistedQueries ?? 'apq'
  const operations: PreparerOptions = {
    schema: orderSchema(options),
    guards: GUARDS,
    introspection: settings.introspection ?? true,
    persistedQueries:
      persisted === false
        ? false
        : {
            store: settings.persistedDocuments ?? new MemoryPersistedDocumentStore(),
            mode: persisted,
          },
  }
  // As rateLimit() does for /v1: a store that hangs costs a request at most 200 ms, and none
  // while the breaker knows it is down.
  const guard = storeGuard({ timeoutMs: 200, breaker: {}, ...(clock ? { clock } : {}) })
  const limiter = createRateLimiter({
    store: {
      consume: (check) => guard.run(() => rateLimitStore.consume(check)),
      reset: (key) => guard.run(() => rateLimitStore.reset(key)),
    },
    policies: options.policies,
    ...(clock ? { clock } : {}),
  })
  const handler = createGraphQLHandler({
    ...operations,
    // The key of /v1 (rateLimitKey: the principal the bearer layer recorded).
    rateLimit: { limiter, key: (request) => rateLimitKey(request) },
    // A resolver's error, masked to the client as INTERNAL_SERVER_ERROR (the request id of the
    // line comes from the request log's context).
    ...(logger
      ? {
          onError: (error: unknown) => errorLog(logger)(error, undefined),
          onEvent: graphqlLog(logger, 'http'),
        }
      : {}),
  })
  return { handler: perUser(handler), operations, limiter }
}

/**
 * docs/spec.md §4.3 rule 9: orders are per-user data, so every answer of /graphql that sets no
 * Cache-Control of its own (APQ's PersistedQueryNotFound does) is `private, no-store`, as the
 * order routes answer; GET queries would otherwise be cacheable by shared caches.
 */
function perUser(handler: Handler): Handler {
  return async (request) => {
    const response = await handler(request)
    if (response.headers.has('cache-control')) return response
    try {
      response.headers.set('cache-control', cacheControlPresets.perUser)
      return response
    } catch {
      // Immutable headers (a Response of fetch): a copy carries it.
      const copy = new Response(response.body, response)
      copy.headers.set('cache-control', cacheControlPresets.perUser)
      return copy
    }
  }
}

/**
 * `middleware`, except for an event stream (a subscription over SSE), which it passes through:
 * an event stream is no answer to keep and replay, and the idempotency layer would hold it back
 * until it ended.
 */
export function unlessEventStream(middleware: Middleware): Middleware {
  return (request, next) =>
    /(^|,)\s*text\/event-stream/i.test(request.headers.get('accept') ?? '')
      ? next(request)
      : middleware(request, next)
}
