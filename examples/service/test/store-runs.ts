// The stores the OAuth client interop suites run on: memory always, PostgreSQL and Redis when
// DATABASE_URL / REDIS_URL are set (each run in its own schema or key prefix, the schema dropped
// afterwards). A run without its URL is a visibly skipped describe, its title saying why.
import type { StoreEnvironment } from '../src/stores.ts'
import type { RunningService } from './serve-on-stores.ts'
import { serveOnStores } from './serve-on-stores.ts'

const redisUrl = process.env['REDIS_URL']
const databaseUrl = process.env['DATABASE_URL']

export interface StoreRun {
  name: 'memory' | 'PostgreSQL' | 'Redis'
  /** The class of the OAuth store openStores picks (none: the service's memory default). */
  store?: string
  env: () => Promise<StoreEnvironment & { cleanup?: () => Promise<void> }>
  /** Why the run is skipped (its URL is not set). */
  skip?: string
}

/** Memory, then PostgreSQL and Redis (skipped without DATABASE_URL / REDIS_URL). */
export const storeRuns: readonly StoreRun[] = [
  { name: 'memory', env: async () => ({}) },
  {
    name: 'PostgreSQL',
    store: 'PostgresOAuthStore',
    ...(databaseUrl ? {} : { skip: 'DATABASE_URL not set' }),
    env: async () => {
      const schema = `oauth_interop_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`
      const pg = (await import('pg')).default
      return {
        DATABASE_URL: databaseUrl,
        DATABASE_SCHEMA: schema,
        cleanup: async () => {
          const admin = new pg.Client({ connectionString: databaseUrl })
          await admin.connect()
          await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
          await admin.end()
        },
      }
    },
  },
  {
    name: 'Redis',
    store: 'RedisOAuthStore',
    ...(redisUrl ? {} : { skip: 'REDIS_URL not set' }),
    env: async () => ({ REDIS_URL: redisUrl, REDIS_PREFIX: `test:oauth:${crypto.randomUUID()}:` }),
  },
]

/** "OAuth state in memory", "OAuth state in Redis (skipped: REDIS_URL not set)". */
export function storeRunTitle(run: StoreRun): string {
  const where = run.name === 'memory' ? 'in memory' : `in ${run.name}`
  return `OAuth state ${where}${run.skip ? ` (skipped: ${run.skip})` : ''}`
}

/** The service on the run's stores; `close` also drops what the run created. */
export async function serveOnStoreRun(
  run: StoreRun,
  options: Parameters<typeof serveOnStores>[1] = {},
): Promise<RunningService> {
  const { cleanup, ...env } = await run.env()
  let running: RunningService
  try {
    running = await serveOnStores(env, options)
  } catch (error) {
    await cleanup?.()
    throw error
  }
  return {
    ...running,
    close: async () => {
      try {
        await running.close()
      } finally {
        await cleanup?.()
      }
    },
  }
}
