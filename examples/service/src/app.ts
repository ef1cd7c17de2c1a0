// The reference service: every block composed in front of the /v1/orders resource, and the
// same orders over GraphQL on /graphql.
import type { Principal } from '@api-blocks/core'
import { clientAddressOf, setClientAddress } from '@api-blocks/core'
import type { PreparerOptions, PubSub } from '@api-blocks/graphql'
import { MemoryPubSub } from '@api-blocks/graphql'
import type { Handler, Middleware } from '@api-blocks/http'
import {
  compose,
  compress,
  cors,
  errorBoundary,
  limits,
  negotiation,
  problemResponse,
  requestId,
} from '@api-blocks/http'
import type { IdempotencyStore } from '@api-blocks/idempotency'
import { idempotency, MemoryIdempotencyStore } from '@api-blocks/idempotency'
import type { CursorKey } from '@api-blocks/pagination'
import { createCursorCodec } from '@api-blocks/pagination'
import { problems } from '@api-blocks/problem-details'
import type { RateLimiter, RateLimitPolicy, RateLimitStore } from '@api-blocks/rate-limit'
import { MemoryRateLimitStore, rateLimit, rateLimitKey } from '@api-blocks/rate-limit'
import type { OAuthOptions } from './auth/server.ts'
import { createOAuth, isOAuthPath } from './auth/server.ts'
import { publishOrderChanges } from './graphql/changes.ts'
import type { ServiceGraphQLOptions } from './graphql/endpoint.ts'
import { createGraphQLEndpoint, GRAPHQL_PATH, unlessEventStream } from './graphql/endpoint.ts'
import type { Logger } from './log.ts'
import { errorLog, idempotencyLog, oauthLog, pubsubLog, rateLimitLog, requestLog } from './log.ts'
import { openApiDocument } from './openapi.ts'
import { orderCreator } from './orders/create.ts'
import { orderRoutes } from './orders/routes.ts'
import type { OrderStore } from './orders/store.ts'
import { MemoryOrderStore } from './orders/store.ts'
import { router } from './router.ts'
import { webhookRoutes } from './webhooks/routes.ts'
import type { ServiceWebhooks } from './webhooks/setup.ts'
import { createWebhooks } from './webhooks/setup.ts'

/** How the service is put together; every member has an embedded default. */
export interface ServiceOptions {
  /**
   * Where clients reach the service (an origin, perhaps with a base path): the OpenAPI
   * `servers` entry, and the base of every absolute URL it sends (Location, Link). The
   * request's Host header is never used for them: any client can set it. Default
   * `http://localhost:3000`.
   */
  publicUrl?: string
  /**
   * Where orders and operations live (default: in memory, one process). Several instances
   * share a `PostgresOrderStore` (orders/postgres-store.ts), which also commits each
   * Idempotency-Key record in the transaction of its write.
   */
  orderStore?: OrderStore
  /**
   * The outbound webhooks (src/webhooks/setup.ts): the endpoint registry, the delivery queue
   * and the worker. The order store publishes to them: the memory default here, a
   * `PostgresOrderStore` through the `events` it was built with (src/stores.ts). Default:
   * in memory, and the worker NOT started (`main.ts` builds them and starts it): events are
   * queued but not sent.
   */
  webhooks?: ServiceWebhooks
  /**
   * The authorisation server the service is (issuer = `publicUrl`): users, clients, its store
   * and keys, opaque or JWT access tokens (src/auth/server.ts). Default: the demo user and
   * clients, in memory, with keys made for this process.
   */
  oauth?: OAuthOptions
  /** Browser origins allowed by CORS (default: a local front-end dev server). */
  corsOrigins?: readonly string[]
  /** Base URI of problem types (default: the catalog's `tag:` base). */
  problemBase?: string
  /** Largest request body, in bytes (default 64 KiB: orders are small). */
  maxBodyBytes?: number
  /** Milliseconds since the epoch (tests pass a fixed clock). */
  clock?: () => number
  /** Runs the asynchronous part of actions (tests run it when they choose). */
  schedule?: (task: () => void) => void
  /** Makes request ids (default `crypto.randomUUID()`). */
  generateRequestId?: () => string
  /**
   * Keys that sign list cursors, newest first (at least 32 bytes each): the first signs, every
   * one verifies, so a key is rotated in by putting it first and out, a cursor lifetime (24 h)
   * later, by removing it. Default: one random key per process, so cursors do not survive a
   * restart nor work on another instance; `main.ts` reads them from `CURSOR_SECRET`.
   */
  cursorKeys?: readonly CursorKey[]
  /** Rate-limit policies applied to every route, per client (docs/spec.md §8 leaves the numbers open). */
  rateLimits?: readonly RateLimitPolicy[]
  /**
   * The budget of POST /login per client address, on top of `rateLimits` (default 20 a minute):
   * each one costs an scrypt derivation (src/auth/passwords.ts), far more than any other request.
   */
  loginRateLimits?: readonly RateLimitPolicy[]
  /** Where limiter state lives (default: in memory). */
  rateLimitStore?: RateLimitStore
  /** Where Idempotency-Key records live (default: in memory; Redis or PostgreSQL to share them). */
  idempotencyStore?: IdempotencyStore
  /**
   * The client's IP address, for an adapter that does not record it itself (keys the rate limit
   * of the public routes, the token endpoint and the login pages, where there is no principal).
   * Default: the address the adapter recorded (`clientAddressOf` of `@api-blocks/core`).
   */
  clientAddress?: (request: Request) => string | undefined
  /**
   * Extra time POST /v1/orders takes, in milliseconds (default 0). A demonstration knob: with
   * it, a second request with the same Idempotency-Key arrives while the first is in flight.
   */
  createLatencyMs?: number
  /**
   * Carries order changes to the `orderChanged` subscriptions (default: in memory, this
   * process's subscribers only). A `RedisPubSub` reaches the subscribers of every instance.
   */
  pubsub?: PubSub
  /** GraphQL on /graphql (docs/service.md, "GraphQL"). */
  graphql?: ServiceGraphQLOptions
  /** Receives every error answered as a 5xx (default: logged at error by `logger`). */
  onError?: (error: unknown, request: Request) => void
  /**
   * Where the service logs (src/log.ts: one line per answer, 5xx errors, store failures,
   * idempotency events); a pino logger fits. Default: none, and store failures of the rate
   * limiter go to the console at most once a minute (rateLimit's own report).
   */
  logger?: Logger
}

/**
 * The service: one Fetch handler for every HTTP request, and what a WebSocket server needs to
 * serve the same GraphQL operations (main.ts attaches one at /graphql).
 */
export interface Service extends Handler {
  graphql: {
    /** The schema, the guards and the persisted documents of /graphql. */
    operations: PreparerOptions
    /** The limiter /graphql charges each operation's cost to (state and policies of /v1's). */
    limiter: RateLimiter
    /** The principal of an `Authorization` value, for `connection_init` (src/auth/server.ts). */
    authenticate: (authorization: string | null | undefined) => Promise<Principal | undefined>
  }
}

/** Per client: a burst of 10 per second, and 1000 per hour. */
const DEFAULT_RATE_LIMITS: readonly RateLimitPolicy[] = [
  { name: 'burst', quota: 10, windowSeconds: 1 },
  { name: 'hourly', quota: 1000, windowSeconds: 3600 },
]

/** POST /login per address: 20 a minute (each costs a fraction of a second of scrypt). */
const DEFAULT_LOGIN_RATE_LIMITS: readonly RateLimitPolicy[] = [
  { name: 'login', quota: 20, windowSeconds: 60 },
]

/** Builds the service as one Fetch handler. */
export function createService(options: ServiceOptions = {}): Service {
  // One body limit for every route and every layer that reads a body: limits() records it per
  // request (core's setBodyLimit), so the idempotency middleware reads no more than the route
  // accepts and answers the same 413.
  const { logger } = options
  const maxBodyBytes = options.maxBodyBytes ?? 64 * 1024
  const webhooks = options.webhooks ?? createWebhooks(options.clock ? { clock: options.clock } : {})
  const onError = options.onError ?? (logger ? errorLog(logger) : undefined)
  // Every committed write of an order, from /v1 or /graphql, reaches the orderChanged
  // subscribers through the pub/sub (src/graphql/changes.ts).
  const pubsub = options.pubsub ?? new MemoryPubSub()
  const store = publishOrderChanges(
    options.orderStore ??
      new MemoryOrderStore({
        ...(options.clock ? { clock: options.clock } : {}),
        events: webhooks.orderEvents,
      }),
    {
      pubsub,
      ...(options.clock ? { clock: options.clock } : {}),
      ...(logger ? { onError: pubsubLog(logger, options.clock) } : {}),
    },
  )
  // One create path for POST /v1/orders and the createOrder mutation.
  const create = orderCreator({ store, createLatencyMs: options.createLatencyMs ?? 0 })
  const page = { defaultLimit: 20, maxLimit: 100 }
  const publicUrl = options.publicUrl ?? 'http://localhost:3000'
  const cursors = createCursorCodec({
    keys: options.cursorKeys ?? [
      { id: 'boot', secret: crypto.getRandomValues(new Uint8Array(32)) },
    ],
    ttlMs: 24 * 60 * 60 * 1000,
    ...(options.clock ? { clock: options.clock } : {}),
  })
  const openapi = JSON.stringify(openApiDocument(publicUrl))
  const oauth = createOAuth(
    publicUrl,
    { ...(logger ? { onEvent: oauthLog(logger, options.clock) } : {}), ...options.oauth },
    {
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.problemBase ? { problemBase: options.problemBase } : {}),
    },
  )
  const routes = router({
    '/': {
      GET: async () =>
        Response.json({
          name: 'api-blocks reference service',
          links: {
            orders: '/v1/orders',
            graphql: GRAPHQL_PATH,
            webhook_endpoints: '/v1/webhook_endpoints',
            openapi: '/openapi.json',
            openid_configuration: '/.well-known/openid-configuration',
          },
        }),
    },
    '/openapi.json': {
      GET: async () => new Response(openapi, { headers: { 'content-type': 'application/json' } }),
    },
    ...orderRoutes({
      store,
      publicUrl,
      cursors,
      page,
      create,
      schedule: options.schedule ?? ((task) => setTimeout(task, 500).unref()),
    }),
    ...webhookRoutes({
      registry: webhooks.registry,
      queue: webhooks.queue,
      wake: () => webhooks.worker.wake(),
      publicUrl,
      cursors,
      page,
      clock: options.clock ?? Date.now,
    }),
  })

  // Where the caller connects from, for the blocks that key on it (core's clientAddressOf): what
  // the adapter recorded, else what the `clientAddress` option says. It keys the rate limit of
  // what needs no token (/, /openapi.json, the token endpoint, the login pages); every /v1
  // request has a principal, which keys its rate limit and its Idempotency-Keys instead.
  const recordAddress: Middleware = (request, next) => {
    if (clientAddressOf(request) === undefined) {
      const address = options.clientAddress?.(request)
      if (address !== undefined) setClientAddress(request, address)
    }
    return next(request)
  }

  // Who the caller is, for the rate limit: rateLimitKey's defaults, the principal the bearer
  // layer recorded (the user, or the client acting for itself), else the client address, IPv6
  // masked to /56. An unverified API key must not count (a client could send a fresh one with
  // every request to get a fresh quota).
  // A store that fails lets requests through (rateLimit's default, fail-open: a shared store that
  // is down should not take the API down) and is reported: to `logger` (src/log.ts), else to the
  // console at most once a minute.
  const rateLimitStore = options.rateLimitStore ?? new MemoryRateLimitStore()
  const limitBy = (
    key: (request: Request) => Promise<string>,
    policies: readonly RateLimitPolicy[] = options.rateLimits ?? DEFAULT_RATE_LIMITS,
  ) =>
    rateLimit({
      store: rateLimitStore,
      policies,
      key,
      ...(options.clock ? { clock: options.clock } : {}),
      ...(logger ? { onEvent: rateLimitLog(logger, options.clock) } : {}),
    })
  const limit = limitBy((request) => rateLimitKey(request))
  // The token endpoint and the login pages are limited per address (principal: null): a
  // password or client-secret guesser gets the same budget as anyone else.
  const byAddress = (request: Request) => rateLimitKey(request, { principal: null })
  const limitAnonymous = (handler: Handler): Handler => {
    const middleware = limitBy(byAddress)
    return (request) => middleware(request, handler)
  }
  // POST /login has its own, much smaller budget per address as well (the policy names keep
  // its counters apart from the general ones): each sign-in costs an scrypt derivation.
  const limitLogin = limitBy(
    async (request) => `login:${await byAddress(request)}`,
    options.loginRateLimits ?? DEFAULT_LOGIN_RATE_LIMITS,
  )

  // A /v1 request the bearer layer refuses (no token, a bogus or expired one: 401; a malformed
  // header: 400) has no principal: it is charged to its address, so it carries RateLimit fields
  // and a guesser meets 429s (each bogus token costs a store lookup). A request with a valid
  // token passes to the per-principal limiter below and is not charged here. (The 429 comes
  // after the lookup: a cheap check before it would charge every request twice.)
  const limitRefused = limitBy(byAddress)
  const protect: Middleware = async (request, next) => {
    let passed = false
    const response = await oauth.protect(request, (verified) => {
      passed = true
      return next(verified)
    })
    if (passed) return response
    if (response.status === 401 || response.status === 400) {
      return limitRefused(request, async () => response)
    }
    // 403, a valid token without the scope: charged to the principal it names, as if it passed.
    if (response.status === 403) return limit(request, async () => response)
    return response
  }

  // docs/spec.md §4.3 rule 6: a mutating POST (create, cancel) accepts an Idempotency-Key; the
  // first result is kept 24 hours and replayed; another body with the same key is a 409.
  // Scoped by default by the principal (core's principalKey: the user a token speaks for with
  // the client it speaks through, else the client acting for itself), so no principal replays
  // another's stored response.
  const withKeys = idempotency({
    store: options.idempotencyStore ?? new MemoryIdempotencyStore(),
    methods: ['POST'],
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.problemBase ? { problemBase: options.problemBase } : {}),
    ...(logger ? { onEvent: idempotencyLog(logger, options.clock) } : {}),
  })
  // Except under /v1/webhook_endpoints: a create or a rotation answers with a signing secret,
  // which a stored response would keep (in the idempotency store, in clear) and replay. The
  // header is ignored there (registering twice makes two endpoints; delete the extra one).
  const keyed: Middleware = (request, next) =>
    isWebhookPath(new URL(request.url).pathname) ? next(request) : withKeys(request, next)

  // The API: JSON only, a bearer token on /v1 (before the limiter and the idempotency layer, so
  // both key on the principal the token names).
  const api = compose(
    negotiation({ types: ['application/json'], notAcceptable: true }),
    protect,
    limit,
    keyed,
    // Innermost: what handlers throw (a 422, a 412) becomes a Response here, so the layers
    // above treat it as an answer: rate-limit headers on it, a deterministic 4xx stored.
    errorBoundary(),
  )(routes)
  // The authorisation server's endpoints (JSON and redirects) and its HTML pages sit outside
  // negotiation() (which would answer a browser's Accept: text/html with 406) and outside the
  // bearer layer; everything else is the API.
  const authorization = limitAnonymous(async (request) => {
    const response = await oauth.front(request)
    return (
      response ??
      problemResponse(problems.notFound.create({ detail: 'No resource at this path.' }), request)
    )
  })

  // GraphQL on /graphql (docs/service.md, "GraphQL"), outside negotiation() (its clients ask for
  // application/graphql-response+json, or text/event-stream for a subscription): the bearer
  // layer of /v1 (401 without a valid token; the scopes are the fields' own, @requiresScopes),
  // the same Idempotency-Keys, and no flat charge: the handler charges each operation its
  // cost, with the limiter state and key of /v1, so both interfaces draw on one budget per
  // principal. The WebSocket server main.ts attaches runs the same operations.
  const endpoint = createGraphQLEndpoint({
    store,
    create,
    cursors,
    page,
    pubsub,
    settings: options.graphql ?? {},
    rateLimitStore,
    policies: options.rateLimits ?? DEFAULT_RATE_LIMITS,
    clock: options.clock,
    logger,
  })
  const graphql = compose(protect, unlessEventStream(keyed), errorBoundary())(endpoint.handler)

  const front: Handler = (request) => {
    const path = new URL(request.url).pathname
    if (path === '/login' && request.method === 'POST') return limitLogin(request, authorization)
    if (path === GRAPHQL_PATH) return graphql(request)
    return isOAuthPath(path) ? authorization(request) : api(request)
  }
  const handler = compose(
    // Outermost: every response, errors included, carries X-Request-Id.
    requestId({
      ...(options.generateRequestId ? { generate: options.generateRequestId } : {}),
      ...(options.problemBase ? { problem: { base: options.problemBase } } : {}),
      ...(onError ? { onError } : {}),
    }),
    // One line per answer, with the request id; store failures below are logged with it too.
    ...(logger ? [requestLog(logger)] : []),
    // X-Request-Id is set outside cors() (so preflights carry it too): expose it explicitly.
    // The demo SPA's origin (its redirect URI's) may call /token and the API from the browser.
    cors({
      origin: options.corsOrigins ?? ['http://localhost:5173', 'http://127.0.0.1:5173'],
      exposeHeaders: ['X-Request-Id', 'WWW-Authenticate'],
    }),
    limits({ maxBodyBytes }),
    compress(),
    recordAddress,
  )(front)
  return Object.assign(handler, {
    graphql: {
      operations: endpoint.operations,
      limiter: endpoint.limiter,
      authenticate: oauth.authenticate,
    },
  })
}

/** Whether `path` is the webhook endpoints resource or below it. */
function isWebhookPath(path: string): boolean {
  return path === '/v1/webhook_endpoints' || path.startsWith('/v1/webhook_endpoints/')
}
