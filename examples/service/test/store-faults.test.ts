// A store that hangs or dies must not take the service with it (docs/operations.md, "When a
// store fails"). The real service (createService + openStores + serve, as src/main.ts runs it)
// on a throwaway redis-server of the test's own, which is paused (SIGSTOP), resumed, killed and
// restarted:
// - routes that need no store answer fast: the rate limiter in front of them fails open, within
//   its deadline and then at once (its breaker);
// - a keyed POST fails closed: 503, Retry-After and a problem body, the order not created;
// - after the server is back, everything recovers (the client reconnects with backoff).

import { MemoryOAuthStore } from '@api-blocks/oauth'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { TestServer } from '../../../scripts/test-services.ts'
import { servicesAvailable, startRedis } from '../../../scripts/test-services.ts'
import type { StoreLogger } from '../src/stores.ts'
import { apiFetch } from './oauth-client.ts'
import type { RunningService } from './serve-on-stores.ts'
import { serveOnStores } from './serve-on-stores.ts'

const available = servicesAvailable().redis
// The routes that need no store wait for the rate limiter's deadline at most (rateLimit's
// default, 200 ms, which the service keeps) plus slack, below the Redis client's own command
// timeout (REDIS_TIMEOUT_MS, 500 ms): a limiter that stopped enforcing its deadline fails this.
// Once its breaker is open (5 failures in a row), at once.
const LIMITER_DEADLINE_MS = 450
const BREAKER_OPEN_MS = 100
const FAILURE_THRESHOLD = 5
// A keyed POST waits for the idempotency deadline (1 s) at most, plus the rate limiter's (a
// probe of its half-open breaker, 200 ms).
const KEYED_MS = 1_500

describe.skipIf(!available)(
  `the service with a paused, killed and restarted Redis${available ? '' : ' (skipped: redis-server is not on PATH)'}`,
  () => {
    let redis: TestServer
    let running: RunningService | undefined
    let base: string
    const logged: { level: string; msg: string }[] = []
    const logger: StoreLogger = {
      error: (_obj, msg) => logged.push({ level: 'error', msg }),
      warn: (_obj, msg) => logged.push({ level: 'warn', msg }),
      info: (_obj, msg) => logged.push({ level: 'info', msg }),
    }

    beforeAll(async () => {
      redis = await startRedis()
      running = await serveOnStores(
        { REDIS_URL: redis.url, REDIS_PREFIX: `test:${crypto.randomUUID()}:` },
        {
          logger,
          service: {
            rateLimits: [{ name: 'burst', quota: 10_000, windowSeconds: 1 }],
            // OAuth state in memory here, so the routes below still authenticate while Redis
            // is down: these tests are about the limiter and the idempotency records (the
            // describe after them puts the OAuth state in Redis).
            oauth: { store: new MemoryOAuthStore() },
          },
        },
      )
      base = running.base
      // The token (/v1 needs one) is got while Redis is up; the tests then use it throughout.
      await (await apiFetch(`${base}/v1/orders`)).arrayBuffer()
    }, 30_000)

    afterAll(async () => {
      await running?.close()
      await redis?.stop()
    })

    const order = JSON.stringify({ customer: 'Ada', items: [{ sku: 'BOOK-042', quantity: 1 }] })
    const post = (key: string) =>
      apiFetch(`${base}/v1/orders`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': key },
        body: order,
      })
    async function timed(run: () => Promise<Response>): Promise<[Response, number]> {
      const started = performance.now()
      const response = await run()
      const ms = performance.now() - started
      return [response, ms]
    }
    // Every order (the tests create far fewer than a page of 100), not just the first 20.
    const orderCount = async () =>
      (await (await apiFetch(`${base}/v1/orders?limit=100`)).json()).data.length

    // Requests through the rate limiter since Redis failed: the first FAILURE_THRESHOLD wait for
    // its deadline, those after it none (the breaker is open), unless `probing`: once a cooldown
    // has passed, one request a second probes the store and waits for the deadline again.
    let limited = 0
    async function expectStorelessRoutesFast(probing = false): Promise<void> {
      for (const path of ['/v1/orders', '/openapi.json']) {
        const open = !probing && limited++ >= FAILURE_THRESHOLD
        const [response, ms] = await timed(() => apiFetch(base + path))
        expect(response.status).toBe(200)
        await response.body?.cancel()
        expect(ms).toBeLessThan(open ? BREAKER_OPEN_MS : LIMITER_DEADLINE_MS)
      }
    }

    async function expectKeyedPostUnavailable(): Promise<void> {
      const before = await orderCount()
      const [response, ms] = await timed(() => post(`down-${crypto.randomUUID()}`))
      expect(response.status).toBe(503)
      expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
      expect(response.headers.get('content-type')).toBe('application/problem+json')
      const problem = await response.json()
      expect(problem).toMatchObject({ status: 503 })
      expect(problem.type).toMatch(/service-unavailable$/)
      expect(ms).toBeLessThan(KEYED_MS)
      expect(await orderCount()).toBe(before)
    }

    async function expectRecovered(): Promise<void> {
      await expect
        .poll(
          async () => (await apiFetch(`${base}/v1/orders`)).headers.get('ratelimit-remaining'),
          {
            timeout: 10_000,
            interval: 100,
          },
        )
        .not.toBeNull()
      const key = `back-${crypto.randomUUID()}`
      await expect
        .poll(async () => (await post(key)).status, { timeout: 10_000, interval: 100 })
        .toBe(201)
      expect((await post(key)).headers.get('idempotent-replayed')).toBe('true')
    }

    test('with Redis up, the routes answer with rate-limit fields and a keyed POST is stored', async () => {
      const list = await apiFetch(`${base}/v1/orders`)
      expect(list.headers.get('ratelimit-remaining')).not.toBeNull()
      const key = `up-${crypto.randomUUID()}`
      expect((await post(key)).status).toBe(201)
      expect((await post(key)).headers.get('idempotent-replayed')).toBe('true')
    })

    test('Redis paused: GET /v1/orders and /openapi.json keep answering fast, a keyed POST gets 503; resumed: all recover', async () => {
      redis.pause()
      limited = 0
      try {
        for (let i = 0; i < 8; i++) await expectStorelessRoutesFast()
        for (let i = 0; i < 6; i++) await expectKeyedPostUnavailable()
        await expectStorelessRoutesFast(true)
      } finally {
        redis.resume()
      }
      await expectRecovered()
    }, 30_000)

    test('Redis killed: the same; restarted: all recover, and the store failure was logged', async () => {
      logged.length = 0
      await redis.kill()
      limited = 0
      for (let i = 0; i < 8; i++) await expectStorelessRoutesFast()
      for (let i = 0; i < 6; i++) await expectKeyedPostUnavailable()
      await redis.restart()
      await expectRecovered()
      expect(logged).toContainEqual(expect.objectContaining({ level: 'error' }))
      expect(logged.at(-1)).toMatchObject({ level: 'info' })
    }, 30_000)
  },
)

// With REDIS_URL alone the authorisation server keeps its state in Redis too (src/stores.ts):
// then a token cannot be checked while Redis is down, and the API fails closed.
const AUTH_DEADLINE_MS = 1_000 + 400

describe.skipIf(!available)(
  `the API with its OAuth state in a paused Redis${available ? '' : ' (skipped: redis-server is not on PATH)'}`,
  () => {
    let redis: TestServer
    let running: RunningService | undefined
    let base: string
    beforeAll(async () => {
      redis = await startRedis()
      running = await serveOnStores(
        { REDIS_URL: redis.url, REDIS_PREFIX: `test:${crypto.randomUUID()}:` },
        {
          logger: { error: () => {}, warn: () => {}, info: () => {} },
          service: { rateLimits: [{ name: 'burst', quota: 10_000, windowSeconds: 1 }] },
        },
      )
      base = running.base
      expect(running.stores.oauthStore?.constructor.name).toBe('RedisOAuthStore')
      expect((await apiFetch(`${base}/v1/orders`)).status).toBe(200)
    }, 30_000)
    afterAll(async () => {
      await running?.close()
      await redis?.stop()
    })

    test('MUST fail closed: while Redis is paused /v1 answers 503 with Retry-After within the deadline, never a token unchecked; /openapi.json stays up; resumed: tokens work again', async () => {
      redis.pause()
      try {
        for (let i = 0; i < 4; i++) {
          const started = performance.now()
          const response = await apiFetch(`${base}/v1/orders`)
          const ms = performance.now() - started
          expect(response.status).toBe(503)
          expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
          expect(response.headers.get('content-type')).toBe('application/problem+json')
          await response.body?.cancel()
          expect(ms).toBeLessThan(AUTH_DEADLINE_MS)
        }
        const document = await fetch(`${base}/openapi.json`)
        expect(document.status).toBe(200)
        await document.body?.cancel()
      } finally {
        redis.resume()
      }
      await expect
        .poll(async () => (await apiFetch(`${base}/v1/orders`)).status, {
          timeout: 10_000,
          interval: 200,
        })
        .toBe(200)
    }, 30_000)
  },
)
