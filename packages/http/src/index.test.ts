// The blocks together, in the order docs/http.md recommends, as the reference service uses them.
import { problems } from '@api-blocks/problem-details'
import { describe, expect, test } from 'vitest'
import { z } from 'zod'
import * as http from './index.ts'

const {
  compose,
  cors,
  requestId,
  limits,
  negotiation,
  compress,
  versionDeprecation,
  methods,
  readJson,
  requestIdOf,
  negotiatedOf,
} = http

const Order = z.object({ sku: z.string() })
const orders = methods({
  GET: async (request) =>
    Response.json(
      {
        // Over compress()'s 1 KiB threshold (100 items were 900 bytes).
        items: Array.from({ length: 200 }, (_, i) => ({ id: i })),
        language: negotiatedOf(request)?.language,
      },
      {
        headers: { etag: '"list-1"', 'content-language': negotiatedOf(request)?.language ?? 'en' },
      },
    ),
  POST: async (request) => {
    const order = await readJson(request, Order, { maxBytes: 1024 })
    return Response.json(
      { ...order, requestId: requestIdOf(request) },
      { status: 201, headers: { location: '/v1/orders/1' } },
    )
  },
})

const app = compose(
  cors({ origin: ['https://app.example'], credentials: true }),
  requestId({ generate: () => 'req-1' }),
  limits(),
  versionDeprecation({ prefix: '/v1', deprecation: new Date('2030-01-01T00:00:00Z') }),
  negotiation({ types: ['application/json'], languages: ['en', 'de'], notAcceptable: true }),
  compress(),
)(orders)

const url = 'https://api.example/v1/orders'
const origin = { origin: 'https://app.example' }

describe('the blocks composed', () => {
  test('a negotiated, compressed, CORS-exposed GET', async () => {
    const response = await app(
      new Request(url, {
        headers: { ...origin, 'accept-language': 'de', 'accept-encoding': 'gzip' },
      }),
    )
    expect(response.status).toBe(200)
    expect(response.headers.get('content-encoding')).toBe('gzip')
    expect(response.headers.get('etag')).toBe('"list-1%-gzip"')
    expect(response.headers.get('x-request-id')).toBe('req-1')
    expect(response.headers.get('vary')).toBe('Accept-Encoding, Accept, Accept-Language, Origin')
    expect(response.headers.get('deprecation')).toBe('@1893456000')
    expect(response.headers.get('access-control-expose-headers')?.split(', ').sort()).toEqual([
      'Content-Language',
      'Deprecation',
      'ETag',
      'X-Request-Id',
    ])
    const body = await new Response(
      response.body!.pipeThrough(new DecompressionStream('gzip')),
    ).json()
    expect(body.language).toBe('de')
  })

  test('a POST with a wrong Content-Type is a 415 problem carrying the id and the CORS headers', async () => {
    const response = await app(
      new Request(url, {
        method: 'POST',
        body: 'sku=1',
        headers: { ...origin, 'content-type': 'application/x-www-form-urlencoded' },
      }),
    )
    expect(response.status).toBe(415)
    expect(response.headers.get('x-request-id')).toBe('req-1')
    expect(response.headers.get('access-control-allow-origin')).toBe('https://app.example')
    expect(response.headers.get('deprecation')).toBe('@1893456000')
  })

  test('a valid POST answers 201 with the request id from the context', async () => {
    const response = await app(
      new Request(url, {
        method: 'POST',
        body: '{"sku":"a"}',
        headers: { ...origin, 'content-type': 'application/json' },
      }),
    )
    expect(response.status).toBe(201)
    expect(await response.json()).toEqual({ sku: 'a', requestId: 'req-1' })
    expect(response.headers.get('access-control-expose-headers')).toContain('Location')
  })

  test('an unknown method is a 405 problem with Allow, id and CORS headers', async () => {
    const response = await app(new Request(url, { method: 'FOO', headers: origin }))
    expect(response.status).toBe(405)
    expect(response.headers.get('allow')).toBe('GET, HEAD, POST, OPTIONS')
    expect(response.headers.get('x-request-id')).toBe('req-1')
    expect(response.headers.get('vary')).toContain('Origin')
  })

  test('406 when nothing offered is acceptable', async () => {
    const response = await app(new Request(url, { headers: { accept: 'text/html' } }))
    expect(response.status).toBe(406)
    expect(problems.notAcceptable.is(await response.json())).toBe(true)
  })

  test('a preflight is answered before anything else', async () => {
    const response = await app(
      new Request(url, {
        method: 'OPTIONS',
        headers: { ...origin, 'access-control-request-method': 'POST' },
      }),
    )
    expect(response.status).toBe(200)
    expect(response.headers.get('access-control-allow-methods')).toContain('POST')
  })

  test('OPTIONS without preflight headers answers Allow', async () => {
    const response = await app(new Request(url, { method: 'OPTIONS' }))
    expect(response.status).toBe(200)
    expect(response.headers.get('allow')).toBe('GET, HEAD, POST, OPTIONS')
  })
})
