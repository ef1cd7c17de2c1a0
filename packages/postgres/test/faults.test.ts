// A PostgreSQL that hangs or dies must not take the service with it (docs/operations.md, "When
// a store fails"). A throwaway postgres of the test's own is paused (SIGSTOP on its whole process
// group: the postmaster and every backend), resumed, killed and restarted under the idempotency
// middleware, with the pool configured as the docs say: a keyed request answers 503 with
// Retry-After and a problem within the deadline and runs nothing, at once while the breaker is
// open, and everything recovers once the server is back; the records survive a restart.
import type { IdempotencyEvent } from '@api-blocks/idempotency'
import { idempotency } from '@api-blocks/idempotency'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { TestServer } from '../../../scripts/test-services.ts'
import { servicesAvailable, startPostgres } from '../../../scripts/test-services.ts'
import { PostgresIdempotencyStore } from '../src/idempotency-store.ts'
import { migrate } from '../src/migrations.ts'

const available = servicesAvailable().postgres
// The idempotency deadline (1 s) plus slack, below the pool's own query_timeout (1.5 s): a
// middleware that stopped enforcing its deadline fails this. Once the breaker is open (5
// failures in a row, the default), at once.
const WITHIN_DEADLINE_MS = 1_300
const BREAKER_OPEN_MS = 100
const FAILURE_THRESHOLD = 5

describe.skipIf(!available)(
  `a paused, killed and restarted PostgreSQL${available ? '' : ' (skipped: no PostgreSQL server binaries)'}`,
  () => {
    let server: TestServer
    let pool: pg.Pool
    const poolErrors: Error[] = []
    let runs = 0
    const events: IdempotencyEvent[] = []
    let keyed: ReturnType<typeof idempotency>

    beforeAll(async () => {
      server = await startPostgres()
      pool = new pg.Pool({
        connectionString: server.url,
        max: 5,
        connectionTimeoutMillis: 1_000,
        query_timeout: 1_500,
        statement_timeout: 1_000,
        idleTimeoutMillis: 10_000,
        keepAlive: true,
      })
      // A connection that dies idle in the pool must not crash the process.
      pool.on('error', (error) => poolErrors.push(error))
      await migrate(pool, { schema: 'faults' })
      keyed = idempotency({
        store: new PostgresIdempotencyStore({ db: pool, schema: 'faults' }),
        scope: 'faults',
        onEvent: (event) => events.push(event),
      })
    }, 30_000)

    afterAll(async () => {
      await server?.stop()
      await pool?.end().catch(() => {})
    })

    const post = (key: string) =>
      keyed(
        new Request('https://api.example/v1/orders', {
          method: 'POST',
          headers: { 'idempotency-key': key, 'content-type': 'application/json' },
          body: '{}',
        }),
        async () => Response.json({ run: ++runs }, { status: 201 }),
      )

    // The i-th failure in a row: the first ones within the deadline, failing with one of `codes`
    // when given, the later ones at once (STORE_CIRCUIT_OPEN).
    async function expectUnavailable(i: number, key: string, codes?: string[]): Promise<void> {
      const before = runs
      const started = performance.now()
      const response = await post(key)
      const ms = performance.now() - started
      expect(response.status).toBe(503)
      expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
      expect(response.headers.get('content-type')).toBe('application/problem+json')
      expect((await response.json()).type).toMatch(/service-unavailable$/)
      const open = i >= FAILURE_THRESHOLD
      expect(ms).toBeLessThan(open ? BREAKER_OPEN_MS : WITHIN_DEADLINE_MS)
      expect(events.at(-1)).toMatchObject({ type: 'store-error', operation: 'claim' })
      if (open) expect(events.at(-1)).toMatchObject({ error: { code: 'STORE_CIRCUIT_OPEN' } })
      else if (codes)
        expect(codes).toContain((events.at(-1) as { error: { code: string } }).error.code)
      expect(runs).toBe(before)
    }

    async function expectRecovered(): Promise<void> {
      const key = `recovered-${crypto.randomUUID()}`
      await expect
        .poll(async () => (await post(key)).status, { timeout: 15_000, interval: 100 })
        .toBe(201)
      expect((await post(key)).headers.get('idempotent-replayed')).toBe('true')
    }

    test('with the server up, a keyed request is stored and replayed', async () => {
      expect((await post('up')).status).toBe(201)
      expect((await post('up')).headers.get('idempotent-replayed')).toBe('true')
    })

    test('paused: 503 with Retry-After within the deadline, at once once the breaker opens; resumed: recovers', async () => {
      server.pause()
      try {
        // No answer within the deadline (STORE_TIMEOUT), or no connection of the pool within
        // its connectionTimeoutMillis, as long (the store's QUERY_FAILED), whichever is first.
        for (let i = 0; i < 7; i++) {
          await expectUnavailable(i, `paused-${i}`, ['STORE_TIMEOUT', 'QUERY_FAILED'])
        }
      } finally {
        server.resume()
      }
      await expectRecovered()
    }, 30_000)

    test('killed: 503 with Retry-After; restarted: recovers, and the records are still there', async () => {
      const key = `durable-${crypto.randomUUID()}`
      expect((await post(key)).status).toBe(201)
      const executed = runs
      await server.kill()
      for (let i = 0; i < 7; i++) await expectUnavailable(i, `killed-${i}`)
      await server.restart()
      await expectRecovered()
      // Unlike a Redis that keeps nothing on disk, the record survived: the retry is a replay.
      const retry = await post(key)
      expect(retry.headers.get('idempotent-replayed')).toBe('true')
      expect(runs).toBe(executed + 1) // only expectRecovered's own request ran
    }, 30_000)
  },
)
