// The crash test of issue 15 (Reliability, point 1): a delivery worker process on the
// PostgreSQL queue is killed with SIGKILL in the middle of a batch, with attempts in flight
// (the loopback receiver is slow to answer, and the kill comes from inside its handler), then
// a new worker process starts: every delivery ends `succeeded`, every event reached every
// endpoint at least once, and the deliveries cut off by the kill were delivered again
// (at-least-once: duplicates are allowed, and counted). No timing is asserted: the test waits
// for the queue to drain, however long that takes within the test's timeout.
import type { ChildProcess } from 'node:child_process'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import type { Server } from 'node:http'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import { createEndpointRegistry, createEvent, createWebhookPublisher } from '@api-blocks/webhooks'
import pg from 'pg'
import { describe, expect, test } from 'vitest'
import { migrate } from '../src/migrations.ts'
import { PostgresDeliveryQueue } from '../src/webhook-delivery-queue.ts'
import { PostgresEndpointStore } from '../src/webhook-endpoint-store.ts'
import { databaseUrl, dropSchema, testSchema } from './databases.ts'

const WORKER = fileURLToPath(new URL('./crash-worker.ts', import.meta.url))
const EVENTS = 150
const ENDPOINTS = ['/a', '/b']
/** The worker is killed when the receiver has seen this many requests. */
const KILL_AT = 100
/** The receiver holds every answer this long, so attempts are in flight when the kill comes. */
const ANSWER_DELAY_MS = 30
const LEASE_MS = 2_000

/** Starts the worker process; resolves once it says it is ready. */
async function startWorker(
  schema: string,
  origin: string,
): Promise<ChildProcess & { log: string[] }> {
  const child = spawn(process.execPath, ['--conditions=@api-blocks/source', WORKER], {
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      CRASH_SCHEMA: schema,
      CRASH_ORIGIN: origin,
      CRASH_LEASE_MS: String(LEASE_MS),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const log: string[] = []
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => log.push(chunk))
  await new Promise<void>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      if (chunk.includes('ready')) resolve()
    })
    child.once('exit', (code, signal) =>
      reject(
        new Error(`the worker exited before it was ready (${code ?? signal}): ${log.join('')}`),
      ),
    )
  })
  return Object.assign(child, { log })
}

describe.skipIf(databaseUrl === undefined)(
  databaseUrl === undefined
    ? 'a worker process killed mid-batch (skipped: DATABASE_URL not set)'
    : 'a worker process killed mid-batch (DATABASE_URL)',
  () => {
    test('SIGKILL with attempts in flight, restart: every delivery succeeds, none is lost, the cut-off ones are sent again', async ({
      annotate,
    }) => {
      const schema = testSchema()
      const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 })
      const children: ChildProcess[] = []
      let server: Server | undefined
      try {
        await migrate(pool, { schema })
        const queue = new PostgresDeliveryQueue({ db: pool, schema })
        const registry = createEndpointRegistry({
          store: new PostgresEndpointStore({ db: pool, schema }),
        })

        // The receiver: counts each (endpoint path, webhook-id), answers 200 a little later.
        const seen = new Map<string, number>()
        const inFlight = new Set<string>()
        let received = 0
        let inFlightAtKill: string[] = []
        let kill: (() => void) | undefined
        server = createServer((request, response) => {
          const key = `${request.url} ${String(request.headers['webhook-id'])}`
          seen.set(key, (seen.get(key) ?? 0) + 1)
          received++
          inFlight.add(key)
          if (received === KILL_AT) {
            // This request, and the others not yet answered, are attempts the worker never
            // sees the end of.
            inFlightAtKill = [...inFlight]
            kill?.()
          }
          request.resume()
          request.on('end', () => {
            setTimeout(() => {
              inFlight.delete(key)
              response.end('ok')
            }, ANSWER_DELAY_MS)
          })
          response.on('error', () => {}) // the killed worker's sockets are gone
        })
        server.listen(0, '127.0.0.1')
        await once(server, 'listening')
        const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

        const endpoints = []
        for (const path of ENDPOINTS) {
          endpoints.push((await registry.create({ url: `${origin}${path}` })).endpoint)
        }
        const publisher = createWebhookPublisher({ registry, queue })
        for (let i = 0; i < EVENTS; i++) {
          await publisher.publish(
            createEvent({ type: 'order.created', object: { id: `ord_${i}` } }),
          )
        }
        const total = EVENTS * ENDPOINTS.length
        const count = async (where: string) => {
          const { rows } = await pool.query(
            `SELECT count(*)::integer AS n FROM "${schema}"."api_blocks_webhook_deliveries" WHERE ${where}`,
          )
          return (rows[0] as { n: number }).n
        }
        expect(await count(`status = 'pending'`)).toBe(total)

        // The first worker, killed from inside the receiver's handler.
        const first = await startWorker(schema, origin)
        children.push(first)
        const exited = once(first, 'exit')
        kill = () => first.kill('SIGKILL')
        const [code, signal] = (await exited) as [number | null, NodeJS.Signals | null]
        expect({ code, signal }).toEqual({ code: null, signal: 'SIGKILL' })
        expect(inFlightAtKill.length).toBeGreaterThan(0)
        // It died holding leases: deliveries claimed and never settled.
        const leasedAtKill = await count('lease IS NOT NULL')
        expect(leasedAtKill).toBeGreaterThan(0)
        const succeededAtKill = await count(`status = 'succeeded'`)
        expect(succeededAtKill).toBeLessThan(total)

        // The second worker: waits out the dead one's leases, then delivers everything.
        const second = await startWorker(schema, origin)
        children.push(second)
        // Polled (no time asserted); the bound only turns a queue that never drains into a
        // failure that says where it stopped, before the test's own timeout.
        for (let polls = 0; (await count(`status = 'succeeded'`)) < total; polls++) {
          if (second.exitCode !== null) throw new Error(`the worker died: ${second.log.join('')}`)
          if (polls === 900) {
            const { rows } = await pool.query(
              `SELECT status, count(*)::integer AS n FROM "${schema}"."api_blocks_webhook_deliveries" GROUP BY status`,
            )
            throw new Error(
              `the queue did not drain: ${JSON.stringify(rows)}; ${second.log.join('')}`,
            )
          }
          await new Promise((resolve) => setTimeout(resolve, 100))
        }
        second.kill('SIGTERM')
        const [secondCode] = (await once(second, 'exit')) as [number | null]
        expect(secondCode).toBe(0)

        // Nothing lost: every event reached every endpoint, and the queue says so.
        expect(await count(`status <> 'succeeded'`)).toBe(0)
        expect(await count('lease IS NOT NULL')).toBe(0)
        const events = (
          await pool.query(
            `SELECT DISTINCT event_id FROM "${schema}"."api_blocks_webhook_deliveries"`,
          )
        ).rows.map((row) => (row as { event_id: string }).event_id)
        expect(events).toHaveLength(EVENTS)
        for (const event of events) {
          for (const path of ENDPOINTS) expect(seen.get(`${path} ${event}`) ?? 0).toBeGreaterThan(0)
        }
        // At least once: each attempt cut off by the kill was sent again.
        for (const key of inFlightAtKill) expect(seen.get(key)).toBeGreaterThanOrEqual(2)
        const duplicates = [...seen.values()].reduce((sum, n) => sum + n - 1, 0)
        expect(received).toBe(total + duplicates)
        await annotate(
          `${total} deliveries; killed after ${KILL_AT} requests with ${inFlightAtKill.length} in flight and ${leasedAtKill} leased (${succeededAtKill} settled); ${duplicates} duplicates after the restart`,
        )
        expect(endpoints).toHaveLength(ENDPOINTS.length)
      } finally {
        for (const child of children)
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
        server?.closeAllConnections()
        server?.close()
        await dropSchema(pool, schema)
        await pool.end()
      }
    }, 120_000)
  },
)
