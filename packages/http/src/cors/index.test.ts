import { problems } from '@api-blocks/problem-details'
import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { compose } from '../compose.ts'
import { cors } from './index.ts'

const url = 'https://api.example/v1/orders'
const app = (policy: Parameters<typeof cors>[0], handler = async () => new Response('ok')) =>
  compose(cors(policy))(handler)
const preflight = (origin: string, extra: Record<string, string> = {}) =>
  new Request(url, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'PUT', ...extra },
  })

describe('cors(): configuration', () => {
  test("MUST refuse origin '*' with credentials when the policy is made", () => {
    expect(() => cors({ origin: '*', credentials: true })).toThrow(TypeError)
  })

  test.each([
    ['https://app.example/', 'a trailing slash'],
    ['https://app.example/path', 'a path'],
    ['HTTPS://APP.EXAMPLE', 'not the serialised (lowercase) form'],
    ['app.example', 'no scheme'],
    ['null', 'the null origin'],
  ])('refuses %s (%s)', (origin) => {
    expect(() => cors({ origin: [origin] })).toThrow(TypeError)
  })

  test('refuses bad maxAge, preflightStatus and header names', () => {
    expect(() => cors({ origin: '*', maxAge: -1 })).toThrow(TypeError)
    expect(() => cors({ origin: '*', preflightStatus: 201 as never })).toThrow(TypeError)
    expect(() => cors({ origin: '*', allowHeaders: ['bad header'] })).toThrow(TypeError)
    expect(() => cors({ origin: 'https://a.example' as never })).toThrow(TypeError)
  })
})

describe('cors(): preflight', () => {
  const policy = { origin: ['https://app.example'], credentials: true, allowHeaders: ['DPoP'] }

  test('answers 200 by default with methods, headers and max-age, without calling the handler', async () => {
    let called = false
    const response = await app(policy, async () => {
      called = true
      return new Response()
    })(preflight('https://app.example'))
    expect(called).toBe(false)
    expect(response.status).toBe(200)
    expect(Object.fromEntries(response.headers)).toMatchObject({
      'access-control-allow-origin': 'https://app.example',
      'access-control-allow-credentials': 'true',
      'access-control-allow-methods': 'GET, HEAD, PUT, PATCH, POST, DELETE',
      'access-control-max-age': '600',
      vary: 'Origin',
    })
    const allowed = response.headers.get('access-control-allow-headers')?.split(', ')
    expect(allowed).toEqual(
      expect.arrayContaining([
        'Authorization',
        'Idempotency-Key',
        'If-Match',
        'If-None-Match',
        'Content-Type',
        'DPoP',
      ]),
    )
  })

  test('the status can be 204', async () => {
    const response = await app({ ...policy, preflightStatus: 204 })(
      preflight('https://app.example'),
    )
    expect(response.status).toBe(204)
  })

  test('a refused origin gets an ok status without CORS headers, but with Vary: Origin', async () => {
    const response = await app(policy)(preflight('https://evil.example'))
    expect(response.headers.has('access-control-allow-origin')).toBe(false)
    expect(response.headers.has('access-control-allow-methods')).toBe(false)
    expect(response.headers.get('vary')).toBe('Origin')
  })

  test('OPTIONS without Access-Control-Request-Method is not a preflight', async () => {
    const response = await app(policy)(
      new Request(url, { method: 'OPTIONS', headers: { origin: 'https://app.example' } }),
    )
    expect(await response.text()).toBe('ok')
  })
})

describe('cors(): actual requests', () => {
  const policy = { origin: ['https://app.example'] }
  const handler = async () =>
    new Response('{}', {
      headers: {
        etag: '"v1"',
        location: '/v1/orders/1',
        'x-request-id': 'r1',
        'ratelimit-remaining': '9',
        'x-ratelimit-reset': '30',
        'content-type': 'application/json',
        'x-internal': 'secret',
        'access-control-expose-headers': 'X-Custom',
      },
    })

  test('an allowed origin gets Allow-Origin, and Expose-Headers derived from the response', async () => {
    const response = await app(
      policy,
      handler,
    )(new Request(url, { headers: { origin: 'https://app.example' } }))
    expect(response.headers.get('access-control-allow-origin')).toBe('https://app.example')
    expect(response.headers.has('access-control-allow-credentials')).toBe(false)
    const exposed = response.headers.get('access-control-expose-headers')?.split(', ')
    expect(exposed).toEqual([
      'X-Custom',
      'ETag',
      'Location',
      'RateLimit-Remaining',
      'X-RateLimit-Reset',
      'X-Request-Id',
    ])
  })

  test('Vary: Origin MUST be on responses to refused and non-CORS requests too', async () => {
    const refused = await app(
      policy,
      handler,
    )(new Request(url, { headers: { origin: 'https://evil.example' } }))
    expect(refused.headers.has('access-control-allow-origin')).toBe(false)
    expect(refused.headers.get('vary')).toBe('Origin')
    const sameOrigin = await app(policy, handler)(new Request(url))
    expect(sameOrigin.headers.get('vary')).toBe('Origin')
  })

  test('Vary: Origin is merged with the handler Vary, never overwriting it', async () => {
    const response = await app(
      policy,
      async () => new Response('x', { headers: { vary: 'Accept-Language' } }),
    )(new Request(url, { headers: { origin: 'https://app.example' } }))
    expect(response.headers.get('vary')).toBe('Accept-Language, Origin')
  })

  test("origin '*' answers '*' on every response and needs no Vary", async () => {
    const response = await app(
      { origin: '*' },
      handler,
    )(new Request(url, { headers: { origin: 'https://any.example' } }))
    expect(response.headers.get('access-control-allow-origin')).toBe('*')
    expect(response.headers.has('vary')).toBe(false)
    const plain = await app({ origin: '*' }, handler)(new Request(url))
    expect(plain.headers.get('access-control-allow-origin')).toBe('*')
  })

  test('a predicate decides; one that throws refuses', async () => {
    const byPredicate = app({
      origin: (origin) => origin.endsWith('.trusted.example'),
      credentials: true,
    })
    const yes = await byPredicate(
      new Request(url, { headers: { origin: 'https://a.trusted.example' } }),
    )
    expect(yes.headers.get('access-control-allow-origin')).toBe('https://a.trusted.example')
    expect(yes.headers.get('access-control-allow-credentials')).toBe('true')
    const throwing = app({
      origin: () => {
        throw new Error('x')
      },
    })
    const no = await throwing(new Request(url, { headers: { origin: 'https://a.example' } }))
    expect(no.headers.has('access-control-allow-origin')).toBe(false)
  })

  test('a predicate only sees well-formed origins', async () => {
    const seen: string[] = []
    const spy = app({
      origin: (origin) => {
        seen.push(origin)
        return true
      },
    })
    for (const origin of [
      'https://a.example, https://b.example',
      'javascript:alert(1)',
      'https://a.example/path',
      'null',
    ]) {
      await spy(new Request(url, { headers: { origin } }))
    }
    expect(seen).toEqual(['null'])
  })

  test('errors thrown below are answered as problems that still carry the CORS headers', async () => {
    const response = await app(policy, async () => {
      throw problems.conflict.error()
    })(new Request(url, { headers: { origin: 'https://app.example' } }))
    expect(response.status).toBe(409)
    expect(response.headers.get('access-control-allow-origin')).toBe('https://app.example')
    expect(response.headers.get('vary')).toContain('Origin')
  })

  test('property: hostile Origin values never throw, and only listed origins are allowed', async () => {
    const origin = fc.oneof(
      fc.string({
        unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
        maxLength: 100,
      }),
      fc.webUrl().map((u) => new URL(u).origin),
      fc.constant('https://app.example'),
      fc.constant(`https://${'a'.repeat(2000)}.example`),
    )
    const guarded = app(policy, handler)
    await fc.assert(
      fc.asyncProperty(origin, async (value) => {
        const request = new Request(url, { headers: { origin: value.trim() } })
        const response = await guarded(request)
        const allowed = response.headers.get('access-control-allow-origin')
        expect(allowed === null || allowed === 'https://app.example').toBe(true)
        expect(response.headers.get('vary')).toContain('Origin')
      }),
      { interruptAfterTimeLimit: 1500 },
    )
  })
})
