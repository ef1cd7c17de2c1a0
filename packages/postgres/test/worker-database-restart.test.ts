// The other half of the crash story: the database dies under a running delivery worker. A
// throwaway PostgreSQL of the test's own is killed (SIGKILL on every process) while attempts
// are in flight, so settles and claims fail; it restarts on the same data directory; the
// worker (in this process, its pool configured with timeouts) backs off, carries on, and every
// delivery ends `succeeded`, every event reaching every endpoint at least once. No timing is
// asserted: the test waits for the queue to drain.
import { once } from 'node:events'
import type { Server } from 'node:http'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { DeliveryWorkerEvent } from '@api-blocks/webhooks'
import {
  createDeliveryWorker,
  createEndpointRegistry,
  createEvent,
  createRetryPolicy,
  createSsrfGuard,
  createWebhookPublisher,
  createWebhookSender,
} from '@api-blocks/webhooks'
import pg from 'pg'
import { describe, expect, test } from 'vitest'
import type { TestServer } from '../../../scripts/test-services.ts'
import { servicesAvailable, startPostgres } from '../../../scripts/test-services.ts'
import { migrate } from '../src/migrations.ts'
import { PostgresDeliveryQueue } from '../src/webhook-delivery-queue.ts'
import { PostgresEndpointStore } from '../src/webhook-endpoint-store.ts'

const available = servicesAvailable().postgres
const EVENTS = 100
const ENDPOINTS = ['/a', '/b']
/** The database is killed when the receiver has seen this many requests. */
const KILL_AT = 60

describe.skipIf(!available)(
  `a delivery worker whose PostgreSQL is killed and restarted${available ? '' : ' (skipped: no PostgreSQL server binaries)'}`,
  () => {
    test('every delivery still succeeds, none is lost; the worker reports the store errors and carries on', async ({
      annotate,
    }) => {
      let database: TestServer | undefined
      let receiver: Server | undefined
      let pool: pg.Pool | undefined
      try {
        database = await startPostgres()
        pool = new pg.Pool({
          connectionString: database.url,
          max: 4,
          connectionTimeoutMillis: 1_000,
          query_timeout: 1_500,
          statement_timeout: 1_000,
        })
        pool.on('error', () => {}) // connections die with the server
        await migrate(pool)
        const queue = new PostgresDeliveryQueue({ db: pool })
        const registry = createEndpointRegistry({ store: new PostgresEndpointStore({ db: pool }) })

        const seen = new Map<string, number>()
        let received = 0
        let outage: Promise<void> | undefined
        const server = database
        receiver = createServer((request, response) => {
          const key = `${request.url} ${String(request.headers['webhook-id'])}`
          seen.set(key, (seen.get(key) ?? 0) + 1)
          if (++received === KILL_AT) {
            outage = server
              .kill()
              .then(() => new Promise((resolve) => setTimeout(resolve, 300)))
              .then(() => server.restart())
          }
          request.resume()
          request.on('end', () => setTimeout(() => response.end('ok'), 20))
        })
        receiver.listen(0, '127.0.0.1')
        await once(receiver, 'listening')
        const origin = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`

        for (const path of ENDPOINTS) await registry.create({ url: `${origin}${path}` })
        const publisher = createWebhookPublisher({ registry, queue })
        for (let i = 0; i < EVENTS; i++) {
          await publisher.publish(
            createEvent({ type: 'order.created', object: { id: `ord_${i}` } }),
          )
        }
        const total = EVENTS * ENDPOINTS.length

        const guard = createSsrfGuard({ allowedOrigins: [origin] })
        const sender = createWebhookSender({ guard, timeoutMs: 1_000 })
        const errors: DeliveryWorkerEvent[] = []
        const worker = createDeliveryWorker({
          queue,
          registry,
          sender,
          policy: createRetryPolicy({ schedule: [0], maxAttempts: 20 }),
          leaseMs: 2_000,
          batchSize: 16,
          concurrency: 8,
          perEndpoint: 4,
          pollIntervalMs: 50,
          onEvent: (event) => {
            if (event.type === 'error') errors.push(event)
          },
        })
        worker.start()
        const succeeded = async () => {
          try {
            const { rows } = await pool!.query(
              `SELECT count(*)::integer AS n FROM "public"."api_blocks_webhook_deliveries" WHERE status = 'succeeded'`,
            )
            return (rows[0] as { n: number }).n
          } catch {
            return -1 // the database is down
          }
        }
        try {
          for (let polls = 0; outage === undefined || (await succeeded()) < total; polls++) {
            if (polls === 1_200)
              throw new Error(`the queue did not drain (${await succeeded()} of ${total})`)
            await new Promise((resolve) => setTimeout(resolve, 100))
          }
          await outage
        } finally {
          await worker.stop()
          await sender.close()
          await guard.close()
        }

        // The outage hit the worker: store calls failed, and it carried on.
        expect(errors.length).toBeGreaterThan(0)
        expect(await succeeded()).toBe(total)
        const events = (
          await pool.query('SELECT DISTINCT event_id FROM "public"."api_blocks_webhook_deliveries"')
        ).rows.map((row) => (row as { event_id: string }).event_id)
        expect(events).toHaveLength(EVENTS)
        for (const event of events) {
          for (const path of ENDPOINTS) expect(seen.get(`${path} ${event}`) ?? 0).toBeGreaterThan(0)
        }
        const duplicates = [...seen.values()].reduce((sum, n) => sum + n - 1, 0)
        const stages = [...new Set(errors.map((event) => (event as { stage: string }).stage))]
        await annotate(
          `${total} deliveries; the database killed after ${KILL_AT} requests; ${errors.length} store errors (${stages.join(', ')}); ${duplicates} duplicates`,
        )
      } finally {
        receiver?.closeAllConnections()
        receiver?.close()
        await pool?.end().catch(() => {})
        await database?.stop()
      }
    }, 150_000)
  },
)
