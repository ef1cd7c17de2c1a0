// Where the service keeps shared state. Embedded defaults (memory) unless REDIS_URL or
// DATABASE_URL is set; then several instances behind a load balancer share idempotency
// records (and, on Redis, rate-limit state; on PostgreSQL, the orders), which is how the
// service grows past one machine.
import type { IdempotencyStore } from '@api-blocks/idempotency'
import { migrate, PostgresIdempotencyStore } from '@api-blocks/postgres'
import type { RateLimitStore } from '@api-blocks/rate-limit'
import { RedisIdempotencyStore, RedisRateLimitStore } from '@api-blocks/redis'
import pg from 'pg'
import { createClient } from 'redis'
import { openPostgresOrderStore } from './orders/postgres-store.ts'
import type { OrderStore } from './orders/store.ts'

export interface SharedStores {
  idempotencyStore?: IdempotencyStore
  /** Orders and operations, in PostgreSQL when `DATABASE_URL` is set. */
  orderStore?: OrderStore
  rateLimitStore?: RateLimitStore
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
}

/**
 * Opens the stores the environment names. With both set, idempotency records go to
 * PostgreSQL (durable; one statement per operation) and rate limits to Redis; rate limits
 * live in Redis only, since limiter state is hot, short-lived and needs no durability
 * (docs/stores.md). Fails (rejects) when a named server cannot be reached.
 */
export async function openStores(env: StoreEnvironment): Promise<SharedStores> {
  const closers: (() => Promise<unknown>)[] = []
  const stores: SharedStores = {
    description: 'in memory (set REDIS_URL or DATABASE_URL to share state between instances)',
    close: async () => {
      for (const close of closers.reverse()) await close()
    },
  }
  const parts: string[] = []
  if (env.DATABASE_URL) {
    const pool = new pg.Pool({ connectionString: env.DATABASE_URL, max: 10 })
    // A broken connection in the pool must not crash the process; queries report it (503).
    pool.on('error', (error) => console.error('postgres pool:', error.message))
    closers.push(() => pool.end())
    const schema = env.DATABASE_SCHEMA ?? 'public'
    await migrate(pool, { schema })
    const store = new PostgresIdempotencyStore({ db: pool, schema })
    stores.idempotencyStore = store
    // Orders too: every instance sees every order, and a create commits with its record.
    stores.orderStore = await openPostgresOrderStore(pool, { schema, idempotencyStore: store })
    // Expiry by a sweep: records past their 24-hour retention are deleted every minute.
    const sweep = setInterval(() => {
      store.sweepExpired(Date.now()).catch((error: Error) => console.error('sweep:', error.message))
    }, 60_000)
    sweep.unref()
    closers.push(async () => clearInterval(sweep))
    parts.push('orders and idempotency records in PostgreSQL')
  }
  if (env.REDIS_URL) {
    const client = createClient({ url: env.REDIS_URL })
    client.on('error', (error: Error) => console.error('redis client:', error.message))
    await client.connect()
    closers.push(() => client.close())
    const prefix = env.REDIS_PREFIX ?? 'api-blocks:'
    stores.rateLimitStore = new RedisRateLimitStore({ client, prefix: `${prefix}rate-limit:` })
    if (!stores.idempotencyStore) {
      stores.idempotencyStore = new RedisIdempotencyStore({
        client,
        prefix: `${prefix}idempotency:`,
      })
      parts.push('idempotency records in Redis')
    }
    parts.push('rate limits in Redis')
  }
  if (parts.length > 0) stores.description = parts.join(', ')
  return stores
}
