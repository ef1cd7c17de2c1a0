/**
 * The worker process of the crash test (worker-crash.test.ts): a delivery worker on the
 * PostgreSQL queue of `DATABASE_URL` (schema `CRASH_SCHEMA`), signing with the endpoints'
 * secrets and posting through the SSRF guard to the one origin `CRASH_ORIGIN` allowed. It
 * prints `ready` once started; SIGTERM stops it gracefully; the test kills it with SIGKILL.
 * Run with `node --conditions=@api-blocks/source`, so the sources are imported as they are.
 *
 * @module
 */
import {
  createDeliveryWorker,
  createEndpointRegistry,
  createRetryPolicy,
  createSsrfGuard,
  createWebhookSender,
} from '@api-blocks/webhooks'
import pg from 'pg'
import { PostgresDeliveryQueue } from '../src/webhook-delivery-queue.ts'
import { PostgresEndpointStore } from '../src/webhook-endpoint-store.ts'

const { DATABASE_URL, CRASH_SCHEMA, CRASH_ORIGIN, CRASH_LEASE_MS } = process.env
if (!DATABASE_URL || !CRASH_SCHEMA || !CRASH_ORIGIN || !CRASH_LEASE_MS) {
  throw new Error(
    'crash-worker: DATABASE_URL, CRASH_SCHEMA, CRASH_ORIGIN and CRASH_LEASE_MS are required',
  )
}

const pool = new pg.Pool({
  connectionString: DATABASE_URL,
  max: 4,
  connectionTimeoutMillis: 5_000,
  statement_timeout: 5_000,
})
pool.on('error', () => {}) // a connection dying idle: the next query fails and the worker backs off
const queue = new PostgresDeliveryQueue({ db: pool, schema: CRASH_SCHEMA })
const registry = createEndpointRegistry({
  store: new PostgresEndpointStore({ db: pool, schema: CRASH_SCHEMA }),
})
const guard = createSsrfGuard({ allowedOrigins: [CRASH_ORIGIN], connectTimeoutMs: 2_000 })
const sender = createWebhookSender({ guard, timeoutMs: 1_000 })
const worker = createDeliveryWorker({
  queue,
  registry,
  sender,
  // A failed attempt is tried again at once: the test is about crashes, not back-off.
  policy: createRetryPolicy({ schedule: [0], maxAttempts: 10 }),
  // Short leases, so the deliveries a killed worker held are claimed again soon.
  leaseMs: Number(CRASH_LEASE_MS),
  batchSize: 16,
  concurrency: 8,
  perEndpoint: 4,
  pollIntervalMs: 50,
  onEvent: (event) => {
    if (event.type === 'error') console.error(`worker ${event.stage} error:`, event.error)
  },
})
worker.start()
process.stdout.write('ready\n')

process.once('SIGTERM', () => {
  worker
    .stop()
    .then(() => Promise.all([sender.close(), guard.close(), pool.end()]))
    .then(
      () => process.exit(0),
      () => process.exit(1),
    )
})
