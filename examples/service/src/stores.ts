// Where the service keeps shared state. Embedded defaults (memory) unless REDIS_URL or
// DATABASE_URL is set; then several instances behind a load balancer share idempotency
// records (and, on Redis, rate-limit state), which is how the service grows past one machine.
import type { PersistedDocumentStore, PubSub } from '@api-blocks/graphql'
import type { IdempotencyStore } from '@api-blocks/idempotency'
import type { OAuthStore } from '@api-blocks/oauth'
import {
  migrate,
  PostgresDeliveryQueue,
  PostgresEndpointStore,
  PostgresIdempotencyStore,
  PostgresOAuthStore,
} from '@api-blocks/postgres'
import { PostgresPersistedDocumentStore } from '@api-blocks/postgres/graphql'
import type { RateLimitStore } from '@api-blocks/rate-limit'
import {
  RedisIdempotencyStore,
  RedisOAuthStore,
  RedisRateLimitStore,
  reconnectBackoff,
} from '@api-blocks/redis'
import { RedisPersistedDocumentStore, RedisPubSub } from '@api-blocks/redis/graphql'
import type { DeliveryQueue, EndpointStore } from '@api-blocks/webhooks'
import { createWebhookPublisher } from '@api-blocks/webhooks'
import pg from 'pg'
import { createClient } from 'redis'
import { migrateOrders, PostgresOrderStore } from './orders/postgres-store.ts'
import type { OrderStore } from './orders/store.ts'
import { orderEvents } from './webhooks/setup.ts'

export interface SharedStores {
  idempotencyStore?: IdempotencyStore
  /**
   * Interactions, codes, grants and tokens of the authorisation server: in PostgreSQL when
   * `DATABASE_URL` is set (durable: a revocation survives a restart), else in Redis when
   * `REDIS_URL` is.
   */
  oauthStore?: OAuthStore
  /**
   * Orders and operations, in PostgreSQL when `DATABASE_URL` is set; each write enqueues its
   * webhook deliveries in {@link deliveryQueue} in its own transaction (the outbox).
   */
  orderStore?: OrderStore
  /** Webhook endpoints, in PostgreSQL when `DATABASE_URL` is set (every instance sees them). */
  webhookEndpointStore?: EndpointStore
  /** Webhook deliveries, in PostgreSQL when `DATABASE_URL` is set (every instance's worker sends from it). */
  deliveryQueue?: DeliveryQueue
  rateLimitStore?: RateLimitStore
  /**
   * Persisted GraphQL documents (APQ registrations, a manifest's): in PostgreSQL when
   * `DATABASE_URL` is set, else in Redis when `REDIS_URL` is (every instance knows a document
   * one of them registered).
   */
  persistedDocuments?: PersistedDocumentStore
  /** The pub/sub of order changes, in Redis when `REDIS_URL` is set (every instance's subscribers). */
  pubsub?: PubSub
  /**
   * Sets what to call once an order write whose webhook deliveries were enqueued has
   * committed (PostgreSQL: after the transaction, never inside it, so the worker it wakes
   * sees them): this instance's `worker.wake()`, so an event leaves at once rather than at the
   * worker's next poll. The memory order store needs none (its events wake the worker of
   * src/webhooks/setup.ts themselves); there it does nothing.
   */
  wakeAfterCommit(wake: () => void): void
  /** What the stores are, for the start-up banner. */
  description: string
  /** Closes the connections and stops the sweep. */
  close(): Promise<void>
}

export interface StoreEnvironment {
  REDIS_URL?: string | undefined
  DATABASE_URL?: string | undefined
  /** Prefix of every Redis key (default `api-blocks:`). */
  REDIS_PREFIX?: string | undefined
  /** PostgreSQL schema of the tables (default `public`). */
  DATABASE_SCHEMA?: string | undefined
  /**
   * Redis connect timeout and command queue timeout, in milliseconds (default 500). The blocks
   * bound each request's wait on their own (`storeTimeoutMs`); this bounds the client's.
   */
  REDIS_TIMEOUT_MS?: string | undefined
  /**
   * PostgreSQL connection timeout and `statement_timeout`, in milliseconds (default 1000); a
   * query that has no answer 500 ms after that (`query_timeout`) fails. The migrations at
   * start-up wait 60 times as long for their lock (one minute by default) and 90 times as
   * long for an answer.
   */
  DATABASE_TIMEOUT_MS?: string | undefined
}

/**
 * Where store failures are written: a pino logger fits (`error(obj, msg)` and the like), and
 * so does anything with these three methods. Each entry's object carries the `err` and which
 * `store` it concerns.
 */
export interface StoreLogger {
  error(obj: object, msg: string): void
  warn(obj: object, msg: string): void
  info(obj: object, msg: string): void
}

/** Options of {@link openStores}. */
export interface OpenStoresOptions {
  /** Where store failures and reconnections are written (default: one console line each). */
  logger?: StoreLogger
}

const consoleLogger: StoreLogger = {
  error: (obj, msg) => console.error(msg, describe(obj)),
  warn: (obj, msg) => console.error(msg, describe(obj)),
  info: (obj, msg) => console.log(msg, describe(obj)),
}

function describe(obj: object): string {
  const { err } = obj as { err?: unknown }
  return err instanceof Error ? err.message : ''
}

function milliseconds(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value === '') return fallback
  const parsed = Number(value)
  if (!Number.isInteger(parsed) || parsed <= 0) {
    throw new RangeError(`${name} must be a whole number of milliseconds > 0, got "${value}"`)
  }
  return parsed
}

/** Waits for `promise` at most `ms` (a close that a hung server would never finish). */
async function within(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined
  await Promise.race([
    promise.catch(() => {}),
    new Promise((resolve) => {
      timer = setTimeout(resolve, ms)
    }),
  ])
  clearTimeout(timer)
}

/** How long final webhook deliveries are kept in PostgreSQL: a week. */
const DELIVERY_RETENTION_MS = 7 * 24 * 60 * 60 * 1000

// Before the client was ever ready, it gives up after this many attempts, so that a service
// pointed at a server it cannot reach fails at start-up rather than waiting for ever.
const STARTUP_CONNECT_ATTEMPTS = 5

/**
 * Opens the stores the environment names. With both set, idempotency records go to
 * PostgreSQL (durable; one statement per operation) and rate limits to Redis; rate limits
 * live in Redis only, since limiter state is hot, short-lived and needs no durability
 * (docs/stores.md). Fails (rejects) when a named server cannot be reached at start-up; once
 * running, a server that hangs or goes away costs each request a bounded wait (the clients'
 * timeouts and the blocks' `storeTimeoutMs`), and the clients reconnect with backoff when it
 * returns (docs/operations.md, "When a store fails").
 */
export async function openStores(
  env: StoreEnvironment,
  options: OpenStoresOptions = {},
): Promise<SharedStores> {
  const logger = options.logger ?? consoleLogger
  const closers: (() => Promise<unknown>)[] = []
  // This instance's delivery worker, woken after a commit that enqueued deliveries.
  let wake: (() => void) | undefined
  const stores: SharedStores = {
    description: 'in memory (set REDIS_URL or DATABASE_URL to share state between instances)',
    wakeAfterCommit: (callback) => {
      wake = callback
    },
    close: async () => {
      for (const close of closers.reverse()) await close()
    },
  }
  const parts: string[] = []
  try {
    if (env.DATABASE_URL) {
      const timeout = milliseconds(env.DATABASE_TIMEOUT_MS, 1_000, 'DATABASE_TIMEOUT_MS')
      const schema = env.DATABASE_SCHEMA ?? 'public'
      // Migrations on a connection of their own, without the pool's statement timeout: a
      // migration may wait for another instance's (an advisory lock). Bounded all the same, so
      // that a lock never released or a hung server fails the start instead of blocking it for
      // ever: the server gives up waiting for the lock after a minute (lock_timeout, SQLSTATE
      // 55P03), the client on a server that gives no answer at all (a paused one) after a
      // minute and a half (query_timeout, longer so that a live server's own error wins).
      const admin = new pg.Client({
        connectionString: env.DATABASE_URL,
        connectionTimeoutMillis: 10 * timeout,
        lock_timeout: 60 * timeout,
        query_timeout: 90 * timeout,
      })
      await admin.connect()
      try {
        await migrate(admin, { schema })
        await migrateOrders(admin, { schema })
      } finally {
        await admin.end()
      }
      const pool = new pg.Pool({
        connectionString: env.DATABASE_URL,
        max: 10,
        // A connection (from the pool or a new one) within this, or the query fails.
        connectionTimeoutMillis: timeout,
        // Server side: a statement running longer is cancelled.
        statement_timeout: timeout,
        // Client side: a query with no answer at all (a paused server, a cut network) fails,
        // and its connection is closed rather than given back.
        query_timeout: timeout + 500,
        idleTimeoutMillis: 30_000,
        keepAlive: true,
      })
      // A connection that breaks while idle in the pool must not crash the process; the pool
      // drops it, and queries report failures themselves (503).
      pool.on('error', (error) =>
        logger.warn({ err: error, store: 'postgres' }, 'postgres: idle connection lost'),
      )
      closers.push(() => within(pool.end(), 2_000))
      const store = new PostgresIdempotencyStore({ db: pool, schema })
      stores.idempotencyStore = store
      // Webhook endpoints and deliveries: every instance's worker sends from the one queue
      // (leases: FOR UPDATE SKIP LOCKED), whichever instance took the write.
      const endpointStore = new PostgresEndpointStore({ db: pool, schema })
      const deliveryQueue = new PostgresDeliveryQueue({ db: pool, schema })
      stores.webhookEndpointStore = endpointStore
      stores.deliveryQueue = deliveryQueue
      // Orders too: every instance sees every order, and a create commits with its record.
      // Each write's webhook deliveries are enqueued in its transaction (the transactional
      // outbox), the subscribed endpoints read on the same connection: committed with the
      // order, or not at all. Once such a transaction has committed (not inside it: the
      // worker would not see the rows yet), this instance's worker is woken; the others find
      // the deliveries at their next poll.
      const enqueuedOn = new WeakSet<object>()
      stores.orderStore = new PostgresOrderStore({
        pool,
        schema,
        idempotencyStore: store,
        events: orderEvents(async (event, db) => {
          const enqueued = await createWebhookPublisher(
            db === undefined
              ? { store: endpointStore, queue: deliveryQueue }
              : {
                  store: new PostgresEndpointStore({ db, schema }),
                  queue: deliveryQueue.inTransaction(db),
                },
          ).publish(event)
          if (enqueued > 0) {
            if (db === undefined) wake?.()
            else enqueuedOn.add(db)
          }
          return enqueued
        }),
        committed: (db) => {
          if (enqueuedOn.delete(db)) wake?.()
        },
      })
      // The authorisation server's state too: durable, so a revocation survives a restart of
      // anything, and preferred to Redis when both are set (an evicting Redis could drop a
      // family's revocation mark while its tokens stay).
      const oauthStore = new PostgresOAuthStore({ db: pool, schema })
      stores.oauthStore = oauthStore
      // Persisted GraphQL documents (migration 0006): durable, so an allow-list loaded from a
      // manifest, or what APQ registered, survives restarts; the least used pruned past 10,000.
      stores.persistedDocuments = new PostgresPersistedDocumentStore({ db: pool, schema })
      // Expiry by a sweep: records past their retention (idempotency records 24 hours, OAuth
      // codes, tokens and revocation marks their own) are deleted every minute.
      const sweep = setInterval(() => {
        // Final webhook deliveries (succeeded, failed, dead) are kept a week for inspection and
        // redelivery, then deleted.
        deliveryQueue
          .purge(Date.now() - DELIVERY_RETENTION_MS)
          .catch((error: Error) =>
            logger.error({ err: error, store: 'postgres' }, 'postgres: delivery purge failed'),
          )
        store
          .sweepExpired(Date.now() - 60_000)
          .catch((error: Error) =>
            logger.error({ err: error, store: 'postgres' }, 'postgres: idempotency sweep failed'),
          )
        oauthStore
          .purgeExpired(Date.now() - 60_000)
          .catch((error: Error) =>
            logger.error({ err: error, store: 'postgres' }, 'postgres: OAuth purge failed'),
          )
      }, 60_000)
      sweep.unref()
      closers.push(async () => clearInterval(sweep))
      parts.push(
        'orders, idempotency records, OAuth state, webhook endpoints and deliveries, persisted GraphQL documents in PostgreSQL',
      )
    }
    if (env.REDIS_URL) {
      const timeout = milliseconds(env.REDIS_TIMEOUT_MS, 500, 'REDIS_TIMEOUT_MS')
      let ready = false
      const backoff = reconnectBackoff({ baseMs: 50, maxMs: 2_000 })
      const client = createClient({
        url: env.REDIS_URL,
        socket: {
          connectTimeout: timeout,
          // No byte from the server for 5 s (PINGs included) closes the connection, and the
          // client reconnects: what ends a hung connection when no request is writing to it.
          socketTimeout: 5_000,
          // Capped exponential backoff with jitter, for ever once the client was ready (also
          // after a socket timeout, where node-redis's default gives up).
          reconnectStrategy: (retries: number, cause: Error) =>
            !ready && retries >= STARTUP_CONNECT_ATTEMPTS ? cause : backoff(retries),
        },
        pingInterval: 1_000,
        // While disconnected, commands fail at once instead of queueing until a reconnect.
        disableOfflineQueue: true,
        // Commands waiting for a hung server are bounded in number…
        commandsQueueMaxLength: 1_000,
        // …and in time, until they are written (the blocks bound the wait for the answer).
        commandOptions: { timeout },
      })
      let failing = false
      client.on('error', (error: Error) => {
        // One line per failure spell (it repeats on every reconnect attempt), then one when back.
        if (failing) return
        failing = true
        logger.error({ err: error, store: 'redis' }, 'redis: connection failed, reconnecting')
      })
      client.on('ready', () => {
        if (failing) logger.info({ store: 'redis' }, 'redis: connection ready again')
        failing = false
        ready = true
      })
      await client.connect()
      // Gracefully (pending commands answered), unless the server hangs: then at once.
      closers.push(async () => {
        await within(client.close(), 2_000)
        client.destroy()
      })
      const prefix = env.REDIS_PREFIX ?? 'api-blocks:'
      stores.rateLimitStore = new RedisRateLimitStore({ client, prefix: `${prefix}rate-limit:` })
      if (!stores.idempotencyStore) {
        stores.idempotencyStore = new RedisIdempotencyStore({
          client,
          prefix: `${prefix}idempotency:`,
        })
        parts.push('idempotency records in Redis')
      }
      if (!stores.oauthStore) {
        stores.oauthStore = new RedisOAuthStore({ client, prefix: `${prefix}oauth:` })
        parts.push('OAuth state in Redis')
      }
      // GraphQL's orderChanged across instances: a write on any instance reaches the subscribers
      // of every one (a subscriber connection of its own, duplicated from this client).
      const pubsub = new RedisPubSub({
        client,
        prefix: `${prefix}pubsub:`,
        onEvent: (event) => {
          if (event.type === 'subscriber_error') {
            logger.warn({ err: event.error, store: 'redis' }, 'redis: pub/sub connection failed')
          } else {
            logger.warn({ event, store: 'redis' }, `redis: pub/sub ${event.type}`)
          }
        },
      })
      stores.pubsub = pubsub
      // Closed before the client (closers run last first).
      closers.push(() => within(pubsub.close(), 2_000))
      if (!stores.persistedDocuments) {
        stores.persistedDocuments = new RedisPersistedDocumentStore({
          client,
          prefix: `${prefix}graphql-documents:`,
        })
        parts.push('persisted GraphQL documents in Redis')
      }
      parts.push('rate limits and GraphQL subscriptions in Redis')
    }
  } catch (error) {
    await stores.close().catch(() => {})
    throw error
  }
  if (parts.length > 0) stores.description = parts.join(', ')
  return stores
}
