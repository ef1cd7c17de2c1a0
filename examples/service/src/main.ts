// `npm start`: the reference service on node:http with embedded (in-memory) defaults.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import { principalKey } from '@api-blocks/core'
import type { PersistedDocumentStore, PersistedManifest } from '@api-blocks/graphql'
import { loadPersistedManifest, MemoryPersistedDocumentStore } from '@api-blocks/graphql'
import { attachGraphQLWebSocket } from '@api-blocks/graphql/ws'
import type { ServeOptions } from '@api-blocks/node'
import { serve } from '@api-blocks/node'
import type { Service } from './app.ts'
import { createService } from './app.ts'
import type { Accounts } from './auth/accounts.ts'
import { loadAccounts } from './auth/accounts.ts'
import type { ConfiguredSigningKey, GraphQLSettings, WebhookSettings } from './config.ts'
import {
  ConfigError,
  parseAccessTokenFormat,
  parseCursorKeys,
  parseGraphQLSettings,
  parsePublicUrl,
  parseSigningKeys,
  parseTokenKey,
  parseWebhookSettings,
} from './config.ts'
import { GRAPHQL_PATH } from './graphql/endpoint.ts'
import { createLogger, errorLog, graphqlLog, isLogLevel, LOG_LEVELS, webhookLog } from './log.ts'
import { openStores } from './stores.ts'
import type { ServiceWebhooks } from './webhooks/setup.ts'
import { createWebhooks, deriveSecretsKey } from './webhooks/setup.ts'

// `npm start -- --with-receiver`: the service and examples/webhook-receiver together. The
// receiver's with-service mode starts this file again (without the flag), registers the
// receiver with a demo token, and deletes that endpoint on exit; this process only waits for it.
if (process.argv.includes('--with-receiver')) {
  const receiver = fileURLToPath(new URL('../../webhook-receiver/src/main.ts', import.meta.url))
  const child = spawn(
    process.execPath,
    ['--conditions=@api-blocks/source', receiver, '--with-service'],
    { stdio: 'inherit' },
  )
  // Ctrl-C reaches the child too (same terminal): it cleans up and exits, and so do we.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => child.kill(signal))
  }
  const [code] = (await once(child, 'exit')) as [number | null]
  process.exit(code ?? 1)
}

const port = Number(process.env['PORT'] ?? 3000)
if (!Number.isInteger(port) || port < 0 || port > 65_535) {
  console.error(`PORT must be a port number, got "${process.env['PORT']}"`)
  process.exit(1)
}
const host = process.env['HOST'] ?? '127.0.0.1'
// PUBLIC_URL: where clients reach the service (behind a proxy: its URL), the base of Location
// and Link; CURSOR_SECRET: the keys that sign list cursors, the same on every instance
// (docs/service.md, "Several instances"). The authorisation server's (docs/service.md, "OAuth"):
// OAUTH_CONFIG (more users and clients), OAUTH_TOKEN_KEY and OAUTH_SIGNING_KEYS (required with
// a shared store: every instance must hash tokens and sign ID tokens alike), ACCESS_TOKEN_FORMAT.
// Invalid values stop the start.
let config: {
  publicUrl?: string
  cursorKeys?: ReturnType<typeof parseCursorKeys>
  accounts?: Accounts
  tokenKey?: Uint8Array
  signingKeys?: ConfiguredSigningKey[]
  accessTokenFormat: 'opaque' | 'jwt'
  webhooks: WebhookSettings
  graphql: GraphQLSettings
}
try {
  const env = process.env
  config = {
    ...(env['PUBLIC_URL'] ? { publicUrl: parsePublicUrl(env['PUBLIC_URL']) } : {}),
    ...(env['CURSOR_SECRET'] ? { cursorKeys: parseCursorKeys(env['CURSOR_SECRET']) } : {}),
    ...(env['OAUTH_CONFIG'] ? { accounts: loadAccounts(env['OAUTH_CONFIG']) } : {}),
    ...(env['OAUTH_TOKEN_KEY'] ? { tokenKey: parseTokenKey(env['OAUTH_TOKEN_KEY']) } : {}),
    ...(env['OAUTH_SIGNING_KEYS']
      ? { signingKeys: parseSigningKeys(env['OAUTH_SIGNING_KEYS']) }
      : {}),
    accessTokenFormat: parseAccessTokenFormat(env['ACCESS_TOKEN_FORMAT'] || 'opaque'),
    // WEBHOOK_RETRY_BASE_MS, WEBHOOK_RETRY_MAX_MS, WEBHOOK_MAX_ATTEMPTS, WEBHOOK_TIMEOUT_MS,
    // WEBHOOK_ALLOWED_PRIVATE_ORIGINS (docs/service.md, "Webhooks").
    webhooks: parseWebhookSettings(env),
    // GRAPHQL_PERSISTED_QUERIES, GRAPHQL_PERSISTED_MANIFEST, GRAPHQL_INTROSPECTION
    // (docs/service.md, "GraphQL").
    graphql: parseGraphQLSettings(env),
  }
  if (env['REDIS_URL'] || env['DATABASE_URL']) {
    for (const name of ['OAUTH_TOKEN_KEY', 'OAUTH_SIGNING_KEYS']) {
      if (!env[name]) {
        throw new ConfigError(
          `${name} must be set when REDIS_URL or DATABASE_URL is: every instance sharing the OAuth store needs the same one (npm run oauth-secrets prints new ones).`,
        )
      }
    }
  }
} catch (error) {
  if (!(error instanceof ConfigError)) throw error
  console.error(`Invalid configuration: ${error.message}`)
  process.exit(1)
}

const createLatencyMs = Number(process.env['DEMO_LATENCY_MS'] ?? 0)
// Per client: RATE_LIMIT_PER_SECOND (default 10) and RATE_LIMIT_PER_HOUR (default 1000).
const rateLimits = [
  { name: 'burst', quota: Number(process.env['RATE_LIMIT_PER_SECOND'] ?? 10), windowSeconds: 1 },
  {
    name: 'hourly',
    quota: Number(process.env['RATE_LIMIT_PER_HOUR'] ?? 1000),
    windowSeconds: 3600,
  },
]
// LOG_LEVEL (default info): JSON lines on stdout, pretty ones when stdout is a terminal.
const level = process.env['LOG_LEVEL'] ?? 'info'
if (!isLogLevel(level)) {
  console.error(`Invalid configuration: LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`)
  process.exit(1)
}
const logger = createLogger({ level, pretty: process.stdout.isTTY === true })

// Against clients that hold connections (docs/service.md, "Settings"): each variable left unset
// keeps the default of @api-blocks/node's serve().
const limits: ServeOptions = {
  server: defined({
    headersTimeout: wholeNumber('HEADERS_TIMEOUT_MS'),
    requestTimeout: wholeNumber('REQUEST_TIMEOUT_MS'),
    keepAliveTimeout: wholeNumber('KEEP_ALIVE_TIMEOUT_MS'),
    connectionsCheckingInterval: wholeNumber('CONNECTIONS_CHECK_INTERVAL_MS'),
  }),
  ...defined({
    idleTimeout: wholeNumber('IDLE_TIMEOUT_MS'),
    maxConnections: wholeNumber('MAX_CONNECTIONS'),
    maxPipelinedRequests: wholeNumber('MAX_PIPELINED_REQUESTS'),
  }),
}
// Store failures (a lost connection, a failed sweep) go to the same log.
const stores = await openStores(process.env, { logger })
// Outbound webhooks: endpoints and deliveries where the stores are (memory, or PostgreSQL with
// DATABASE_URL); this instance's worker sends what the queue holds, alongside every other
// instance's (leases keep two from sending one delivery at once).
const webhooks: ServiceWebhooks = createWebhooks({
  ...(stores.webhookEndpointStore ? { endpointStore: stores.webhookEndpointStore } : {}),
  ...(stores.deliveryQueue ? { queue: stores.deliveryQueue } : {}),
  settings: config.webhooks,
  onEvent: webhookLog(logger),
  // Endpoint secrets are sealed at rest under a key derived from OAUTH_TOKEN_KEY (the same on
  // every instance); without it, a key of this process's (the memory store dies with it too).
  ...(config.tokenKey ? { encryptionKey: await deriveSecretsKey(config.tokenKey) } : {}),
})
// With DATABASE_URL an order write enqueues its deliveries in its transaction: once it commits,
// this instance's worker sends them at once rather than at its next poll.
stores.wakeAfterCommit(() => webhooks.worker.wake())
// Persisted GraphQL documents where the stores are (PostgreSQL, else Redis, else memory), with
// the manifest's documents registered first: in allow-list mode, the only ones that run.
const persistedDocuments: PersistedDocumentStore =
  stores.persistedDocuments ?? new MemoryPersistedDocumentStore()
if (config.graphql.manifest !== undefined) {
  try {
    // Checked by loadPersistedManifest (a TypeError names what is wrong with it).
    await loadPersistedManifest(persistedDocuments, config.graphql.manifest as PersistedManifest)
  } catch (error) {
    console.error(`Invalid configuration: GRAPHQL_PERSISTED_MANIFEST: ${(error as Error).message}`)
    await webhooks.close()
    await stores.close()
    process.exit(1)
  }
}
// The service is made once the server listens: without PUBLIC_URL its URLs name the port the
// server got (PORT=0 picks a free one). No request is read before it is set.
let service: Service | undefined
// The opt-in fast path of @api-blocks/node (lightweight Request and Response globals): the
// configuration the benchmarks measure, and the one the socket tests of this service run.
let server: ReturnType<typeof serve>
try {
  server = serve((request) => (service as Service)(request), {
    port,
    hostname: host,
    lightweight: true,
    // What fails outside the handler: a response that cannot be written, a body that breaks.
    onError: errorLog(logger),
    ...limits,
  })
} catch (error) {
  // serve() refuses settings out of range (a TypeError, or node's RangeError).
  console.error(`Invalid configuration: ${(error as Error).message}`)
  process.exit(1)
}
await once(server, 'listening')
const shown =
  host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host
const base = `http://${shown}:${(server.address() as AddressInfo).port}`
const publicUrl = config.publicUrl ?? base
// The public URL is the OAuth issuer, which RFC 8414 §2 wants on https (the blocks allow http
// on a loopback address, for development).
const { protocol, hostname } = new URL(publicUrl)
if (protocol === 'http:' && !['localhost', '127.0.0.1', '[::1]'].includes(hostname)) {
  console.error(
    `Invalid configuration: the public URL ${publicUrl} is the OAuth issuer, which must be https (http only on localhost, 127.0.0.1 or [::1]): set PUBLIC_URL to the https URL clients use.`,
  )
  server.close()
  await webhooks.close()
  await stores.close()
  process.exit(1)
}
try {
  service = createService({
    publicUrl,
    ...(config.cursorKeys ? { cursorKeys: config.cursorKeys } : {}),
    ...(stores.orderStore ? { orderStore: stores.orderStore } : {}),
    webhooks,
    ...(stores.idempotencyStore ? { idempotencyStore: stores.idempotencyStore } : {}),
    ...(stores.rateLimitStore ? { rateLimitStore: stores.rateLimitStore } : {}),
    oauth: {
      ...(config.accounts ?? {}),
      ...(stores.oauthStore ? { store: stores.oauthStore } : {}),
      ...(config.tokenKey ? { tokenKey: config.tokenKey } : {}),
      ...(config.signingKeys ? { signingKeys: config.signingKeys } : {}),
      accessTokenFormat: config.accessTokenFormat,
    },
    rateLimits,
    ...(createLatencyMs > 0 ? { createLatencyMs } : {}),
    ...(stores.pubsub ? { pubsub: stores.pubsub } : {}),
    graphql: {
      introspection: config.graphql.introspection,
      persistedQueries: config.graphql.persistedQueries,
      persistedDocuments,
    },
    logger,
  })
} catch (error) {
  // createService refuses options out of range (a RangeError or TypeError): a setting's fault.
  console.error(`Invalid configuration: ${(error as Error).message}`)
  server.close()
  await webhooks.close()
  await stores.close()
  process.exit(1)
}
webhooks.worker.start()
// GraphQL subscriptions and queries over WebSocket on the same URL: the same schema, guards and
// persisted documents, the token in connection_init's payload ({ "authorization": "Bearer …" };
// without a valid one the socket closes with 4403), each operation's cost charged to the same
// rate limit as over HTTP. Mutations are served over HTTP only, where the Idempotency-Key layer
// is (a WebSocket message has no headers).
const { graphql } = service as Service
const sockets = attachGraphQLWebSocket(server, {
  ...graphql.operations,
  path: GRAPHQL_PATH,
  operations: ['query', 'subscription'],
  authenticate: (params) =>
    graphql.authenticate(
      typeof params?.['authorization'] === 'string' ? params['authorization'] : undefined,
    ),
  rateLimit: {
    limiter: graphql.limiter,
    // The key /graphql and /v1 charge over HTTP (rateLimitKey: `principal:<principalKey>`).
    key: (principal) =>
      `principal:${(principal === undefined ? undefined : principalKey(principal)) ?? 'none'}`,
  },
  onError: (error) => errorLog(logger)(error, undefined),
  onEvent: graphqlLog(logger, 'websocket'),
})

// The demo user and clients, unless the configuration file left them out ("demo": false).
const demo = config.accounts?.clients.some((client) => client.id === 'demo-backend') ?? true
// The first minute: a token for the demo back end (client credentials), then the API with it.
const token = `curl -s -u demo-backend:demo-backend-secret -d grant_type=client_credentials -d 'scope=read:orders write:orders manage:webhooks' ${base}/token`
const retry = config.webhooks.retry
const schedule = retry
  ? `exponential (base ${retry.baseMs} ms, max ${retry.maxMs} ms, ${retry.maxAttempts} attempts)`
  : 'the typical schedule (at once, 1 min, 10 min, 1 h, 6 h, 12 h, 24 h)'
console.log(`api-blocks reference service listening on ${base}
  orders:   ${base}/v1/orders (a bearer token: scope read:orders to read, write:orders to write)
  graphql:  ${base}${GRAPHQL_PATH} (the same orders and tokens; POST, GET, text/event-stream and WebSocket; persisted queries: ${config.graphql.persistedQueries === false ? 'off' : config.graphql.persistedQueries}; introspection ${config.graphql.introspection ? 'on' : 'off'})
  webhooks: ${base}/v1/webhook_endpoints (scope manage:webhooks, and read:orders to register one); retries: ${schedule}${config.webhooks.allowedOrigins.length > 0 ? `; private origins allowed: ${config.webhooks.allowedOrigins.join(', ')}` : ''}
  openapi:  ${base}/openapi.json
  issuer:   ${publicUrl} (OAuth 2.0 / OpenID Connect: ${publicUrl}/.well-known/openid-configuration)
  tokens:   ${config.accessTokenFormat === 'jwt' ? 'JWT access tokens (ACCESS_TOKEN_FORMAT=jwt)' : 'opaque access tokens, checked in process: a revocation takes effect at once'}
  keys:     ${config.tokenKey && config.signingKeys ? `token key and signing key "${config.signingKeys[0]?.kid}" from OAUTH_TOKEN_KEY and OAUTH_SIGNING_KEYS` : 'random for this process: tokens die with it (set OAUTH_TOKEN_KEY and OAUTH_SIGNING_KEYS to keep them)'}
  sign in:  ${demo ? 'ada / lovelace (demo clients: demo-backend / demo-backend-secret, and the public demo-spa)' : `${config.accounts?.users.length ?? 0} users and ${config.accounts?.clients.length ?? 0} clients from OAUTH_CONFIG`}
  storage:  ${stores.description}
  public:   ${publicUrl} (Location and Link; set PUBLIC_URL behind a proxy)
  cursors:  ${config.cursorKeys ? `signed with key "${config.cursorKeys[0]?.id}" (CURSOR_SECRET)` : 'WARNING: CURSOR_SECRET is not set: a random key, so cursors die with this process and fail on any other instance'}

Try (docs/service.md walks through every convention${demo ? '' : '; use a client of OAUTH_CONFIG in place of demo-backend'}):
  TOKEN=$(${token} | sed -E 's/.*"access_token":"([^"]+)".*/\\1/')
  curl -i ${base}/v1/orders -H "authorization: Bearer $TOKEN"
  curl -i -X POST ${base}/v1/orders -H "authorization: Bearer $TOKEN" -H 'content-type: application/json' \\
       -H 'idempotency-key: k1' -d '{"customer":"Ada Lovelace","items":[{"sku":"BOOK-042","quantity":2}]}'
  curl -i <the Location of the order> -H "authorization: Bearer $TOKEN" -H 'if-none-match: "1"'
  curl -i -X PATCH <the Location> -H "authorization: Bearer $TOKEN" -H 'if-match: "1"' \\
       -H 'content-type: application/json' -d '{"note":"Gift wrap"}'
  curl -i -X POST <the Location>/cancel -H "authorization: Bearer $TOKEN"
  curl -i -X POST ${base}/v1/webhook_endpoints -H "authorization: Bearer $TOKEN" \\
       -H 'content-type: application/json' -d '{"url":"https://hooks.example.com/orders"}'
  curl -i ${base}/v1/orders          # no token: 401 with WWW-Authenticate: Bearer
  curl -i ${base}${GRAPHQL_PATH} -H "authorization: Bearer $TOKEN" -H 'content-type: application/json' \\
       -d '{"query":"{ orders(first: 5) { edges { node { id status customer } } pageInfo { hasNextPage endCursor } } }"}'
`)

// Graceful: no new connections, the worker's in-flight attempts finish (their leases would
// otherwise expire and another instance send them again), then the stores close.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(
    signal,
    () =>
      void sockets.close().then(() =>
        server.close(
          () =>
            void webhooks
              .close()
              .then(() => stores.close())
              .then(() => process.exit(0)),
        ),
      ),
  )
}

function wholeNumber(name: string): number | undefined {
  const text = process.env[name]
  if (text === undefined || text === '') return undefined
  const value = Number(text)
  if (Number.isSafeInteger(value) && value >= 0) return value
  console.error(`Invalid configuration: ${name} must be a whole number >= 0, got "${text}"`)
  process.exit(1)
}

function defined<T extends Record<string, number | undefined>>(
  values: T,
): { [K in keyof T]?: number } {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as {
    [K in keyof T]?: number
  }
}
