import { compose, requestId } from '@api-blocks/http'
import { problems } from '@api-blocks/problem-details'
import { afterEach, describe, expect, test, vi } from 'vitest'
import { MemoryRateLimitStore } from './memory-store.ts'
import type { RateLimitEvent, RateLimitOptions } from './middleware.ts'
import { rateLimit, rateLimitedResponse } from './middleware.ts'
import type { RateLimitStore } from './store.ts'

const T0 = 1_700_000_000_000
const request = (path = '/v1/orders') => new Request(`https://api.example${path}`)
const ok = async () => Response.json({ ok: true })

function setup(overrides: Partial<RateLimitOptions> = {}) {
  const clock = { now: T0 }
  const events: RateLimitEvent[] = []
  const options: RateLimitOptions = {
    store: new MemoryRateLimitStore(),
    policies: [
      { name: 'burst', quota: 2, windowSeconds: 1 },
      { name: 'daily', quota: 100, windowSeconds: 86_400 },
    ],
    key: () => 'ip:203.0.113.7/32',
    onStoreError: 'fail-closed',
    clock: () => clock.now,
    onEvent: (event) => events.push(event),
    ...overrides,
  }
  return { limit: rateLimit(options), options, clock, events }
}

const brokenStore: RateLimitStore = {
  consume: () => Promise.reject(new Error('ECONNREFUSED 127.0.0.1:6379')),
  reset: () => Promise.resolve(),
}

describe('rateLimit middleware', () => {
  test('an allowed request passes and its response gets the rate-limit fields', async () => {
    const { limit } = setup()
    const response = await limit(request(), ok)
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({ ok: true })
    expect(response.headers.get('ratelimit-limit')).toBe('2')
    expect(response.headers.get('ratelimit-remaining')).toBe('1')
    expect(response.headers.get('ratelimit-reset')).toBe('1')
    expect(response.headers.get('x-ratelimit-remaining')).toBe('1')
  })

  test('MUST (SPEC §7.2): a denied request answers 429 quota-exceeded with Retry-After and the fields', async () => {
    const { limit, events } = setup()
    const handler = vi.fn(ok)
    await limit(request(), handler)
    await limit(request(), handler)
    const response = await limit(request('/v1/orders?page=2'), handler)
    expect(handler).toHaveBeenCalledTimes(2)
    expect(response.status).toBe(429)
    expect(response.headers.get('content-type')).toBe('application/problem+json')
    expect(response.headers.get('retry-after')).toBe('1')
    expect(response.headers.get('ratelimit-remaining')).toBe('0')
    expect(response.headers.get('x-ratelimit-limit')).toBe('2')
    const body = await response.json()
    expect(body).toEqual({
      type: 'https://iana.org/assignments/http-problem-types#quota-exceeded',
      title: 'Request quota exceeded.',
      status: 429,
      detail: 'Quota exceeded: "burst" (2 per 1 s). Retry in 1 s.',
      instance: '/v1/orders',
      'violated-policies': ['burst'],
    })
    expect(problems.quotaExceeded.is(body)).toBe(true)
    expect(events).toEqual([
      expect.objectContaining({
        type: 'rejected',
        code: 'QUOTA_EXCEEDED',
        key: 'ip:203.0.113.7/32',
      }),
    ])
  })

  test('a denied request is not charged: the next one passes once the burst refills', async () => {
    const { limit, clock } = setup({ headers: { structured: true } })
    for (let i = 0; i < 2; i++) await limit(request(), ok)
    for (let i = 0; i < 5; i++) expect((await limit(request(), ok)).status).toBe(429)
    clock.now += 500
    const response = await limit(request(), ok)
    expect(response.status).toBe(200)
    // daily was charged for the three allowed requests only
    expect(response.headers.get('ratelimit')).toMatch(/"daily";r=97;/)
  })

  test('structured fields as an option', async () => {
    const { limit } = setup({ headers: { structured: true } })
    const response = await limit(request(), ok)
    expect(response.headers.get('ratelimit-policy')).toBe('"burst";q=2;w=1, "daily";q=100;w=86400')
    expect(response.headers.get('ratelimit')).toBe('"burst";r=1;t=1, "daily";r=99;t=864')
  })

  test('fields the handler already set are never overwritten', async () => {
    const { limit } = setup()
    const response = await limit(request(), async () => {
      return new Response('x', { headers: { 'RateLimit-Limit': '7', 'RateLimit-Remaining': '3' } })
    })
    expect(response.headers.get('ratelimit-limit')).toBe('7')
    expect(response.headers.get('ratelimit-remaining')).toBe('3')
    expect(response.headers.has('ratelimit-reset')).toBe(false)
    expect(response.headers.get('x-ratelimit-limit')).toBe('2')
  })

  test('a response with immutable headers (Response.redirect) is copied, not broken', async () => {
    const { limit } = setup()
    const response = await limit(request(), async () =>
      Response.redirect('https://api.example/v2', 308),
    )
    expect(response.status).toBe(308)
    expect(response.headers.get('location')).toBe('https://api.example/v2')
    expect(response.headers.get('ratelimit-limit')).toBe('2')
  })

  test('weighted cost from a function of the request', async () => {
    const { limit } = setup({ cost: (r) => (new URL(r.url).pathname === '/v1/export' ? 2 : 1) })
    const response = await limit(request('/v1/export'), ok)
    expect(response.headers.get('ratelimit-remaining')).toBe('0')
    expect((await limit(request(), ok)).status).toBe(429)
  })

  test('a key of undefined exempts the request: no charge, no fields', async () => {
    const { limit } = setup({ key: () => undefined })
    for (let i = 0; i < 5; i++) {
      const response = await limit(request('/health'), ok)
      expect(response.status).toBe(200)
      expect(response.headers.has('ratelimit-limit')).toBe(false)
    }
  })

  test('MUST NOT answer 429 for a store failure: fail-closed answers 503 service-unavailable', async () => {
    const { limit, events } = setup({ store: brokenStore, onStoreError: 'fail-closed' })
    const handler = vi.fn(ok)
    const response = await limit(request(), handler)
    expect(handler).not.toHaveBeenCalled()
    expect(response.status).toBe(503)
    const body = await response.json()
    expect(problems.serviceUnavailable.is(body)).toBe(true)
    expect(body.detail).not.toContain('ECONNREFUSED')
    expect(events).toEqual([
      {
        type: 'store-error',
        code: 'STORE_UNAVAILABLE',
        key: 'ip:203.0.113.7/32',
        action: 'fail-closed',
        error: new Error('ECONNREFUSED 127.0.0.1:6379'),
      },
    ])
  })

  test('fail-open lets the request through without rate-limit fields and reports the error', async () => {
    const { limit, events } = setup({ store: brokenStore, onStoreError: 'fail-open' })
    const response = await limit(request(), ok)
    expect(response.status).toBe(200)
    expect([...response.headers.keys()].filter((name) => name.includes('ratelimit'))).toEqual([])
    expect(events).toMatchObject([
      { type: 'store-error', code: 'STORE_UNAVAILABLE', action: 'fail-open' },
    ])
  })

  test('an onEvent hook that throws does not change the answer', async () => {
    const { limit } = setup({
      store: brokenStore,
      onStoreError: 'fail-open',
      onEvent: () => {
        throw new Error('observer bug')
      },
    })
    expect((await limit(request(), ok)).status).toBe(200)
  })

  test('errors that are not store failures propagate (a bad cost, a key function that throws)', async () => {
    await expect(setup({ cost: -1 }).limit(request(), ok)).rejects.toBeInstanceOf(RangeError)
    const boom = new Error('key failed')
    await expect(
      setup({
        key: () => {
          throw boom
        },
      }).limit(request(), ok),
    ).rejects.toBe(boom)
  })

  test('without onStoreError a store failure fails open: the request passes', async () => {
    const { onStoreError: _, ...options } = setup().options
    const limit = rateLimit({ ...options, store: brokenStore })
    const handler = vi.fn(ok)
    const response = await limit(request(), handler)
    expect(handler).toHaveBeenCalledOnce()
    expect(response.status).toBe(200)
  })

  test('an onStoreError that is neither fail-open nor fail-closed is refused at startup', () => {
    expect(() =>
      rateLimit({
        ...setup().options,
        onStoreError: 'fail-maybe' as unknown as 'fail-open',
      }),
    ).toThrow(/onStoreError/)
  })

  test('problem options reach the 429 body (type base, language)', async () => {
    const { limit } = setup({ problem: { base: 'https://api.example/problems/' } })
    await limit(request(), ok)
    await limit(request(), ok)
    const denied = await limit(
      new Request('https://api.example/v1/orders', { headers: { 'accept-language': 'de' } }),
      ok,
    )
    expect(denied.headers.get('content-language')).toBe('de')
    expect((await denied.json()).title).toBe('Anfragekontingent überschritten.')
  })
})

describe('rateLimit: what the handler throws keeps the rate-limit fields', () => {
  const throwing = (error: unknown) => async (): Promise<Response> => {
    throw error
  }

  test('a thrown problem (422) is answered as its problem, with the fields', async () => {
    const { limit } = setup()
    const invalid = problems.validation.error({
      detail: 'quantity must be positive',
      errors: [{ detail: 'must be positive', pointer: '/items/0/quantity' }],
    })
    const response = await limit(request(), throwing(invalid))
    expect(response.status).toBe(422)
    expect(response.headers.get('content-type')).toBe('application/problem+json')
    expect(await response.json()).toMatchObject({
      status: 422,
      detail: 'quantity must be positive',
      instance: '/v1/orders',
    })
    expect(response.headers.get('ratelimit-limit')).toBe('2')
    expect(response.headers.get('ratelimit-remaining')).toBe('1')
    expect(response.headers.get('x-ratelimit-remaining')).toBe('1')
  })

  test('a thrown Error is answered 500 internal, its message not shown, with the fields', async () => {
    const { limit } = setup({ headers: { structured: true } })
    const response = await limit(request(), throwing(new Error('database password is hunter2')))
    expect(response.status).toBe(500)
    const body = await response.json()
    expect(problems.internal.is(body)).toBe(true)
    expect(JSON.stringify(body)).not.toContain('hunter2')
    expect(response.headers.get('ratelimit-remaining')).toBe('1')
    expect(response.headers.get('ratelimit')).toBe('"burst";r=1;t=1, "daily";r=99;t=864')
  })

  test('the request was charged: a throwing handler spends quota like any other', async () => {
    const { limit } = setup()
    await limit(request(), throwing(new Error('boom')))
    await limit(request(), throwing(new Error('boom')))
    expect((await limit(request(), ok)).status).toBe(429)
  })

  test("the answer renders with requestId()'s options and reaches its onError", async () => {
    const { options } = setup()
    const reported: unknown[] = []
    const failure = new Error('boom')
    const app = compose(
      requestId({
        generate: () => 'req-1',
        problem: { base: 'https://api.example/problems/' },
        onError: (error) => reported.push(error),
      }),
      rateLimit(options),
    )(throwing(failure))
    const response = await app(request())
    expect(response.status).toBe(500)
    expect(response.headers.get('x-request-id')).toBe('req-1')
    expect(response.headers.get('ratelimit-limit')).toBe('2')
    expect((await response.json()).type).toBe('https://api.example/problems/internal')
    expect(reported).toEqual([failure])
  })

  test('a denied request never runs the handler, so nothing is thrown: the 429 stands', async () => {
    const { limit } = setup()
    const handler = vi.fn(throwing(new Error('boom')))
    for (let i = 0; i < 2; i++) await limit(request(), handler)
    expect((await limit(request(), handler)).status).toBe(429)
    expect(handler).toHaveBeenCalledTimes(2)
  })
})

describe('rateLimit without onEvent: store errors go to console.error, at most once a minute', () => {
  afterEach(() => {
    vi.restoreAllMocks()
  })

  test('the first failure is written in full, then one line a minute with a count', async () => {
    const lines: unknown[][] = []
    vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => {
      lines.push(args)
    })
    const clock = { now: T0 }
    const limit = rateLimit({
      store: brokenStore,
      policies: [{ name: 'burst', quota: 2, windowSeconds: 1 }],
      key: () => 'ip:203.0.113.7/32',
      clock: () => clock.now,
    })
    expect((await limit(request(), ok)).status).toBe(200)
    expect(lines).toHaveLength(1)
    expect(lines[0]?.[0]).toMatch(/rate-limit store failed, requests pass unlimited \(fail-open\)/)
    expect(lines[0]?.[0]).toMatch(/onEvent/)
    expect(lines[0]?.[1]).toEqual(new Error('ECONNREFUSED 127.0.0.1:6379'))
    // A store that is down fails every request: no flood.
    for (let i = 0; i < 50; i++) {
      clock.now += 1000
      await limit(request(), ok)
    }
    expect(lines).toHaveLength(1)
    clock.now += 10_000 // a minute after the first report
    await limit(request(), ok)
    expect(lines).toHaveLength(2)
    expect(lines[1]?.[0]).toMatch(/\(50 more since the last report, not shown\)/)
  })

  test('fail-closed says so', async () => {
    const lines: unknown[][] = []
    vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => {
      lines.push(args)
    })
    const limit = rateLimit({
      store: brokenStore,
      policies: [{ name: 'burst', quota: 2, windowSeconds: 1 }],
      key: () => 'k',
      onStoreError: 'fail-closed',
    })
    expect((await limit(request(), ok)).status).toBe(503)
    expect(lines[0]?.[0]).toMatch(/requests get 503 \(fail-closed\)/)
  })

  test('rejections are not written, and a given onEvent replaces the console report', async () => {
    const error = vi.spyOn(console, 'error').mockImplementation(() => undefined)
    const quiet = rateLimit({
      store: new MemoryRateLimitStore(),
      policies: [{ name: 'one', quota: 1, windowSeconds: 60 }],
      key: () => 'k',
    })
    await quiet(request(), ok)
    expect((await quiet(request(), ok)).status).toBe(429)
    const observed: RateLimitEvent[] = []
    const hooked = rateLimit({
      store: brokenStore,
      policies: [{ name: 'one', quota: 1, windowSeconds: 60 }],
      key: () => 'k',
      onEvent: (event) => observed.push(event),
    })
    await hooked(request(), ok)
    expect(observed).toHaveLength(1)
    expect(error).not.toHaveBeenCalled()
  })
})

describe('a store that hangs (storeTimeoutMs, storeBreaker)', () => {
  /** A store that never answers (a paused Redis), counting the calls it gets. */
  function hangingStore() {
    let calls = 0
    let hanging = true
    const memory = new MemoryRateLimitStore()
    const store: RateLimitStore = {
      consume: (check) => {
        calls++
        return hanging ? new Promise(() => {}) : memory.consume(check)
      },
      reset: (key) => memory.reset(key),
    }
    return {
      store,
      calls: () => calls,
      recover: () => {
        hanging = false
      },
    }
  }

  test('MUST answer within storeTimeoutMs: fail-open passes the request and reports STORE_TIMEOUT', async () => {
    const { store } = hangingStore()
    const { limit, events } = setup({ store, onStoreError: 'fail-open', storeTimeoutMs: 20 })
    const response = await limit(request(), ok)
    expect(response.status).toBe(200)
    expect(response.headers.has('ratelimit-limit')).toBe(false)
    expect(events).toMatchObject([
      {
        type: 'store-error',
        code: 'STORE_UNAVAILABLE',
        action: 'fail-open',
        error: { code: 'STORE_TIMEOUT' },
      },
    ])
  })

  test('fail-closed answers a hung store with 503 service-unavailable and Retry-After', async () => {
    const { store } = hangingStore()
    const { limit } = setup({ store, onStoreError: 'fail-closed', storeTimeoutMs: 20 })
    const response = await limit(request(), ok)
    expect(response.status).toBe(503)
    expect(response.headers.get('retry-after')).toBe('1')
    expect(problems.serviceUnavailable.is(await response.json())).toBe(true)
  })

  test('MUST NOT call a store known to be down: the breaker opens, requests pass at once, one probe after the cooldown', async () => {
    const hung = hangingStore()
    const { limit, clock, events } = setup({
      store: hung.store,
      onStoreError: 'fail-open',
      storeTimeoutMs: 20,
      storeBreaker: { failureThreshold: 2, cooldownMs: 3_000 },
    })
    for (let i = 0; i < 2; i++) expect((await limit(request(), ok)).status).toBe(200)
    expect(hung.calls()).toBe(2)
    // Open: ten requests pass without a store call.
    for (let i = 0; i < 10; i++) expect((await limit(request(), ok)).status).toBe(200)
    expect(hung.calls()).toBe(2)
    expect(events.at(-1)).toMatchObject({
      type: 'store-error',
      action: 'fail-open',
      error: { code: 'STORE_CIRCUIT_OPEN' },
    })
    // The store comes back; after the cooldown one request probes it and closes the breaker.
    hung.recover()
    clock.now += 3_000
    const probe = await limit(request(), ok)
    expect(probe.headers.get('ratelimit-remaining')).toBe('1')
    expect(hung.calls()).toBe(3)
    expect((await limit(request(), ok)).headers.get('ratelimit-remaining')).toBe('0')
    expect(hung.calls()).toBe(4)
  })

  test('fail-closed while the breaker is open: 503 with the cooldown left as Retry-After', async () => {
    const { limit, clock } = setup({
      store: brokenStore,
      onStoreError: 'fail-closed',
      storeBreaker: { failureThreshold: 1, cooldownMs: 5_000 },
    })
    expect((await limit(request(), ok)).status).toBe(503)
    clock.now += 1_000
    const response = await limit(request(), ok)
    expect(response.status).toBe(503)
    expect(response.headers.get('retry-after')).toBe('4')
  })

  test('refuses a storeTimeoutMs that is not positive', () => {
    expect(() => setup({ storeTimeoutMs: 0 })).toThrow(RangeError)
  })
})

describe('rateLimitedResponse', () => {
  test('without a possible wait there is no Retry-After, and the detail says so', async () => {
    const response = rateLimitedResponse({
      allowed: false,
      checkedAt: T0,
      retryAfterSeconds: Infinity,
      policies: [
        {
          name: 'units',
          quota: 5,
          windowSeconds: 60,
          remaining: 5,
          resetSeconds: 0,
          violated: true,
        },
      ],
    })
    expect(response.status).toBe(429)
    expect(response.headers.has('retry-after')).toBe(false)
    expect((await response.json()).detail).toContain('waiting will not help')
  })
})
