// A Redis that hangs or dies must not take the service with it (docs/operations.md, "When a
// store fails"). A throwaway redis-server of the test's own is paused (SIGSTOP), resumed,
// killed and restarted under the two blocks, with the client configured as the docs say:
// - the rate limiter answers within its deadline and fails open, reporting the failure, and
//   at once while its breaker is open;
// - idempotency answers 503 with Retry-After and a problem, and runs nothing;
// - both recover once the server is back (the client reconnects with backoff).
import type { IdempotencyEvent } from '@api-blocks/idempotency'
import { idempotency } from '@api-blocks/idempotency'
import type { RateLimitEvent } from '@api-blocks/rate-limit'
import { rateLimit } from '@api-blocks/rate-limit'
import { createClient } from 'redis'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { TestServer } from '../../../scripts/test-services.ts'
import { servicesAvailable, startRedis } from '../../../scripts/test-services.ts'
import { RedisIdempotencyStore } from '../src/idempotency-store.ts'
import { RedisRateLimitStore } from '../src/rate-limit-store.ts'
import { reconnectBackoff } from '../src/reconnect.ts'

const available = servicesAvailable().redis
// The blocks' deadlines (200 ms for the rate limit, 1 s for idempotency) plus slack, and below
// the client's own command timeout (500 ms) where it matters: a block that stopped enforcing its
// deadline fails these. Once a breaker is open (5 failures in a row, the default), at once.
const WITHIN_RATE_LIMIT_DEADLINE_MS = 450
const WITHIN_IDEMPOTENCY_DEADLINE_MS = 1_300
const BREAKER_OPEN_MS = 100
const FAILURE_THRESHOLD = 5

describe.skipIf(!available)(
  `a paused, killed and restarted Redis${available ? '' : ' (skipped: redis-server is not on PATH)'}`,
  () => {
    let server: TestServer
    let client: ReturnType<typeof createClient>
    const events: RateLimitEvent[] = []
    const keyedEvents: IdempotencyEvent[] = []
    let runs = 0
    let limit: ReturnType<typeof rateLimit>
    let keyed: ReturnType<typeof idempotency>

    beforeAll(async () => {
      server = await startRedis()
      client = createClient({
        url: server.url,
        socket: {
          connectTimeout: 500,
          socketTimeout: 5_000,
          reconnectStrategy: reconnectBackoff({ baseMs: 50, maxMs: 1_000 }),
        },
        pingInterval: 1_000,
        disableOfflineQueue: true,
        commandsQueueMaxLength: 1_000,
        commandOptions: { timeout: 500 },
      })
      client.on('error', () => {})
      await client.connect()
      limit = rateLimit({
        store: new RedisRateLimitStore({ client }),
        policies: [{ name: 'burst', quota: 1_000, windowSeconds: 1 }],
        key: () => 'client:faults',
        onEvent: (event) => events.push(event),
      })
      keyed = idempotency({
        store: new RedisIdempotencyStore({ client }),
        scope: 'faults',
        onEvent: (event) => keyedEvents.push(event),
      })
    }, 30_000)

    afterAll(async () => {
      client?.destroy()
      await server?.stop()
    })

    const get = () =>
      limit(new Request('https://api.example/v1/orders'), async () => Response.json([]))
    const post = (key: string) =>
      keyed(
        new Request('https://api.example/v1/orders', {
          method: 'POST',
          headers: { 'idempotency-key': key, 'content-type': 'application/json' },
          body: '{}',
        }),
        async () => Response.json({ run: ++runs }, { status: 201 }),
      )
    const timed = async <T>(run: () => Promise<T>): Promise<[T, number]> => {
      const started = performance.now()
      const result = await run()
      return [result, performance.now() - started]
    }

    // The i-th failure in a row: the first ones within the deadline, failing with `code` when
    // given (STORE_TIMEOUT on a paused server), the later ones at once (STORE_CIRCUIT_OPEN).
    async function expectFailOpen(i: number, code?: string): Promise<void> {
      const [response, ms] = await timed(get)
      expect(response.status).toBe(200)
      expect(response.headers.has('ratelimit-remaining')).toBe(false)
      const open = i >= FAILURE_THRESHOLD
      expect(ms).toBeLessThan(open ? BREAKER_OPEN_MS : WITHIN_RATE_LIMIT_DEADLINE_MS)
      expect(events.at(-1)).toMatchObject({ type: 'store-error', action: 'fail-open' })
      if (open) expect(events.at(-1)).toMatchObject({ error: { code: 'STORE_CIRCUIT_OPEN' } })
      else if (code) expect(events.at(-1)).toMatchObject({ error: { code } })
    }

    async function expectUnavailable(i: number, key: string, code?: string): Promise<void> {
      const before = runs
      const [response, ms] = await timed(() => post(key))
      expect(response.status).toBe(503)
      expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
      expect(response.headers.get('content-type')).toBe('application/problem+json')
      expect((await response.json()).type).toMatch(/service-unavailable$/)
      const open = i >= FAILURE_THRESHOLD
      expect(ms).toBeLessThan(open ? BREAKER_OPEN_MS : WITHIN_IDEMPOTENCY_DEADLINE_MS)
      expect(keyedEvents.at(-1)).toMatchObject({ type: 'store-error', operation: 'claim' })
      if (open) expect(keyedEvents.at(-1)).toMatchObject({ error: { code: 'STORE_CIRCUIT_OPEN' } })
      else if (code) expect(keyedEvents.at(-1)).toMatchObject({ error: { code } })
      expect(runs).toBe(before)
    }

    async function expectRecovered(): Promise<void> {
      // The client reconnects (backoff up to 1 s), the breakers let a probe through (1 s).
      await expect
        .poll(async () => (await get()).headers.get('ratelimit-remaining'), {
          timeout: 10_000,
          interval: 100,
        })
        .not.toBeNull()
      const key = `recovered-${crypto.randomUUID()}`
      await expect
        .poll(async () => (await post(key)).status, { timeout: 10_000, interval: 100 })
        .toBe(201)
      const replay = await post(key)
      expect(replay.headers.get('idempotent-replayed')).toBe('true')
    }

    test('with the server up, the limiter charges and a keyed request is stored', async () => {
      expect((await get()).headers.get('ratelimit-remaining')).not.toBeNull()
      expect((await post('up')).status).toBe(201)
    })

    test('paused: the limiter fails open within its deadline, reports STORE_TIMEOUT, then answers at once (breaker)', async () => {
      server.pause()
      try {
        events.length = 0
        for (let i = 0; i < 8; i++) await expectFailOpen(i, 'STORE_TIMEOUT')
        // Idempotency fails closed: 503, Retry-After, a problem; nothing runs.
        for (let i = 0; i < 6; i++) await expectUnavailable(i, `paused-${i}`, 'STORE_TIMEOUT')
      } finally {
        server.resume()
      }
      await expectRecovered()
    }, 20_000)

    test('killed: both answer within their deadlines; restarted: both recover (reconnect with backoff)', async () => {
      await server.kill()
      events.length = 0
      for (let i = 0; i < 8; i++) await expectFailOpen(i)
      for (let i = 0; i < 6; i++) await expectUnavailable(i, `killed-${i}`)
      await server.restart()
      await expectRecovered()
    }, 20_000)

    test('a restart of a Redis that keeps nothing on disk forgets the records: a retry runs again', async () => {
      const key = `forgotten-${crypto.randomUUID()}`
      expect((await post(key)).status).toBe(201)
      const first = runs
      await server.restart()
      await expect.poll(async () => (await post(key)).status, { timeout: 10_000 }).toBe(201)
      // Documented in docs/operations.md: the record was lost, so the request executed again.
      expect(runs).toBe(first + 1)
    })
  },
)
