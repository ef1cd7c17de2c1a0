import { problems } from '@api-blocks/problem-details'
import { describe, expect, test, vi } from 'vitest'
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
  const limit = rateLimit({
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
  })
  return { limit, clock, events }
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
      expect.objectContaining({ type: 'rejected', key: 'ip:203.0.113.7/32' }),
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
    expect(events).toMatchObject([{ type: 'store-error', action: 'fail-open' }])
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

  test('onStoreError is an explicit, required choice', () => {
    expect(() =>
      rateLimit({
        store: new MemoryRateLimitStore(),
        policies: [{ name: 'a', quota: 1, windowSeconds: 1 }],
        key: () => 'k',
      } as unknown as RateLimitOptions),
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
