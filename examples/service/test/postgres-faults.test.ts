// A PostgreSQL that hangs or dies must not take the service with it (docs/operations.md, "When a
// store fails"). The real service (createService + openStores + serve, as src/main.ts runs it)
// keeps its orders and idempotency records on a throwaway postgres of the test's own, which is
// paused (SIGSTOP on every process of it), resumed, killed and restarted:
// - GET /v1/orders, POST /v1/orders and a keyed POST answer 503 with a problem (Retry-After where
//   the idempotency block gives it) within a bound, never hang, and nothing is created;
// - a failed transaction gives its connection up at once (pg's query_timeout leaves a checked-out
//   connection open, and a ROLLBACK queued behind the hung query would hold it for a second
//   timeout), so a paused server does not drain the pool: requests succeed as soon as it resumes;
// - GET /openapi.json, which needs no store, keeps answering fast;
// - after a restart everything recovers, and the orders are still there.
// A second part bounds the migrations at start-up, which run on a connection of their own.
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { TestServer } from '../../../scripts/test-services.ts'
import { servicesAvailable, startPostgres } from '../../../scripts/test-services.ts'
import type { SharedStores, StoreLogger } from '../src/stores.ts'
import { openStores } from '../src/stores.ts'
import { apiFetch } from './oauth-client.ts'
import type { RunningService } from './serve-on-stores.ts'
import { serveOnStores } from './serve-on-stores.ts'

const available = servicesAvailable().postgres
const skipped = available ? '' : ' (skipped: no PostgreSQL server binaries)'
// DATABASE_TIMEOUT_MS of these tests: the pool's connection and statement timeouts, and 900 ms
// for a query that gets no answer at all (pg's query_timeout, 500 ms more), after which the
// request is answered 503. A failed transaction that waited for a second timeout (its ROLLBACK
// behind the hung query) took 1,800.
const TIMEOUT_MS = 400
const UNAVAILABLE_WITHIN_MS = 1_500
// A route that needs no store, with the server paused and a dozen requests waiting on it.
const FAST_MS = 500
// Once the server is back: every request of a burst answers, and within this.
const RECOVERED_WITHIN_MS = 1_500

const silent: StoreLogger = { error: () => {}, warn: () => {}, info: () => {} }

describe.skipIf(!available)(
  `the service with a paused, killed and restarted PostgreSQL${skipped}`,
  () => {
    let postgres: TestServer
    let stores: SharedStores
    let running: RunningService | undefined
    let base: string

    beforeAll(async () => {
      postgres = await startPostgres()
      running = await serveOnStores(
        { DATABASE_URL: postgres.url, DATABASE_TIMEOUT_MS: String(TIMEOUT_MS) },
        {
          logger: silent,
          service: { rateLimits: [{ name: 'burst', quota: 10_000, windowSeconds: 1 }] },
        },
      )
      ;({ base, stores } = running)
    }, 30_000)

    afterAll(async () => {
      await running?.close()
      await postgres?.stop()
    })

    const order = JSON.stringify({ customer: 'Ada', items: [{ sku: 'BOOK-042', quantity: 1 }] })
    const post = (key?: string) =>
      apiFetch(`${base}/v1/orders`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(key === undefined ? {} : { 'idempotency-key': key }),
        },
        body: order,
      })
    const list = () => apiFetch(`${base}/v1/orders?limit=100`)
    async function timed(run: () => Promise<Response>): Promise<[Response, number]> {
      const started = performance.now()
      const response = await run()
      return [response, performance.now() - started]
    }
    // Counted in the database itself, not through the service (nor its first page).
    async function orderCount(): Promise<number> {
      const client = new pg.Client({ connectionString: postgres.url })
      await client.connect()
      try {
        return Number((await client.query('SELECT count(*) AS n FROM orders')).rows[0].n)
      } finally {
        await client.end()
      }
    }

    async function expectUnavailable(
      [response, ms]: [Response, number],
      retryAfter: boolean,
    ): Promise<void> {
      expect(response.status).toBe(503)
      expect(response.headers.get('content-type')).toBe('application/problem+json')
      const problem = await response.json()
      expect(problem).toMatchObject({ status: 503 })
      expect(problem.type).toMatch(/service-unavailable$/)
      if (retryAfter) expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
      expect(ms).toBeLessThan(UNAVAILABLE_WITHIN_MS)
    }

    // A dozen requests at once that need the database, /openapi.json among them: each store
    // request answers 503 within the bound, the document at once.
    async function expectRoundUnavailable(round: string): Promise<void> {
      const lists = Array.from({ length: 4 }, () => timed(list))
      const creates = Array.from({ length: 4 }, () => timed(() => post()))
      const keyed = Array.from({ length: 4 }, (_, i) =>
        timed(() => post(`${round}-${i}-${crypto.randomUUID()}`)),
      )
      const [document, ms] = await timed(() => fetch(`${base}/openapi.json`))
      expect(document.status).toBe(200)
      await document.body?.cancel()
      expect(ms).toBeLessThan(FAST_MS)
      for (const answer of await Promise.all(lists)) await expectUnavailable(answer, false)
      for (const answer of await Promise.all(creates)) await expectUnavailable(answer, false)
      for (const answer of await Promise.all(keyed)) await expectUnavailable(answer, true)
    }

    // More requests at once than the pool has connections (10), each answered.
    async function expectBurstServed(): Promise<void> {
      const started = performance.now()
      const answers = await Promise.all([
        ...Array.from({ length: 12 }, () => list()),
        ...Array.from({ length: 12 }, () => post()),
      ])
      const ms = performance.now() - started
      expect(answers.map((answer) => answer.status)).toEqual([
        ...Array<number>(12).fill(200),
        ...Array<number>(12).fill(201),
      ])
      for (const answer of answers) await answer.body?.cancel()
      expect(ms).toBeLessThan(RECOVERED_WITHIN_MS)
    }

    test('with PostgreSQL up, orders are listed and created, a keyed create replayed', async () => {
      expect((await list()).status).toBe(200)
      expect((await post()).status).toBe(201)
      const key = `up-${crypto.randomUUID()}`
      expect((await post(key)).status).toBe(201)
      expect((await post(key)).headers.get('idempotent-replayed')).toBe('true')
      await expectBurstServed()
    })

    test('paused: 503 within the bound, /openapi.json fast, nothing created; resumed: served at once (the pool was not drained)', async () => {
      const before = await orderCount()
      postgres.pause()
      try {
        for (let round = 0; round < 3; round++) await expectRoundUnavailable(`paused-${round}`)
      } finally {
        postgres.resume()
      }
      await expectBurstServed()
      expect(await orderCount()).toBe(before + 12)
    }, 30_000)

    test('killed: 503 within the bound; restarted: everything recovers and the orders are still there', async () => {
      const before = await orderCount()
      await postgres.kill()
      for (let round = 0; round < 2; round++) await expectRoundUnavailable(`killed-${round}`)
      await postgres.restart()
      await expect.poll(async () => (await list()).status, { timeout: 10_000 }).toBe(200)
      await expectBurstServed()
      const key = `back-${crypto.randomUUID()}`
      await expect.poll(async () => (await post(key)).status, { timeout: 10_000 }).toBe(201)
      expect((await post(key)).headers.get('idempotent-replayed')).toBe('true')
      expect(await orderCount()).toBe(before + 13)
    }, 30_000)

    test('killed in the middle of a transaction: the write fails, and the process lives on (no uncaught connection error)', async () => {
      const store = stores.orderStore
      if (store === undefined) throw new Error('no order store')
      const input = { customer: 'Ada Lovelace', items: [{ sku: 'BOOK-042', quantity: 2 }] }
      // The answer is made between the INSERT and the COMMIT: the server dies right there, and
      // the connection, lent to the transaction, breaks while no query of it is running.
      const write = store.create(input, async (order) => {
        await postgres.kill()
        await new Promise((resolve) => setTimeout(resolve, 200))
        return order
      })
      await expect(write).rejects.toThrow()
      await postgres.restart()
      await expect.poll(async () => (await list()).status, { timeout: 10_000 }).toBe(200)
    }, 30_000)

    // The migrations at start-up, on a connection of their own: DATABASE_TIMEOUT_MS 25 gives
    // them 1.5 s (60 times as long) for their lock and 2.25 s (90 times) for an answer. Before,
    // a lock another session kept, or a server paused meanwhile, kept openStores waiting for ever.
    const MIGRATION_TIMEOUT_MS = 25
    const GIVES_UP_WITHIN_MS = 6_000
    const ORDERS_MIGRATION_LOCK = "hashtextextended('api-blocks.example-service.orders', 0)"

    async function startUp(): Promise<{
      outcome: 'rejected' | 'opened' | 'waiting'
      error?: { code?: string; message: string }
    }> {
      let error: { code?: string; message: string } | undefined
      const opening = openStores(
        {
          DATABASE_URL: postgres.url,
          DATABASE_SCHEMA: `migrations_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`,
          DATABASE_TIMEOUT_MS: String(MIGRATION_TIMEOUT_MS),
        },
        { logger: silent },
      )
      let timer: ReturnType<typeof setTimeout> | undefined
      const outcome = await Promise.race([
        opening.then(
          async (opened) => {
            await opened.close()
            return 'opened' as const
          },
          (reason: { code?: string; message: string }) => {
            error = reason
            return 'rejected' as const
          },
        ),
        new Promise<'waiting'>((resolve) => {
          timer = setTimeout(() => resolve('waiting'), GIVES_UP_WITHIN_MS)
        }),
      ])
      clearTimeout(timer)
      return { outcome, ...(error ? { error } : {}) }
    }

    async function holdingTheMigrationLock(run: (holder: pg.Client) => Promise<void>) {
      const holder = new pg.Client({ connectionString: postgres.url })
      await holder.connect()
      try {
        await holder.query(`SELECT pg_advisory_lock(${ORDERS_MIGRATION_LOCK})`)
        await run(holder)
      } finally {
        await holder.query(`SELECT pg_advisory_unlock(${ORDERS_MIGRATION_LOCK})`)
        await holder.end()
      }
    }

    test('start-up: a migration lock never released fails the start (lock_timeout), not blocks it', async () => {
      await holdingTheMigrationLock(async () => {
        // SQLSTATE 55P03 lock_not_available: the server gave up waiting for the lock.
        expect(await startUp()).toMatchObject({ outcome: 'rejected', error: { code: '55P03' } })
      })
    }, 15_000)

    test('start-up: a server paused during the migrations fails the start (query_timeout), not blocks it', async () => {
      await holdingTheMigrationLock(async (holder) => {
        const starting = startUp()
        // Once the migration waits for the lock, the server stops answering at all.
        await expect
          .poll(
            async () =>
              (
                await holder.query(
                  "SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%example-service.orders%'",
                )
              ).rows[0].n,
            { timeout: 5_000, interval: 20 },
          )
          .toBe('1')
        postgres.pause()
        try {
          // pg's query_timeout: the client gave up waiting for an answer.
          expect(await starting).toMatchObject({
            outcome: 'rejected',
            error: { message: expect.stringMatching(/timeout/i) },
          })
        } finally {
          postgres.resume()
        }
      })
    }, 15_000)
  },
)
