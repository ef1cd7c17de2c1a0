import { describe, expect, test } from 'vitest'
import { compose } from '../compose.ts'
import { DEFAULT_MAX_HEADER_VALUE_LENGTH, DEFAULT_MAX_URL_LENGTH, limits } from './index.ts'

const ok = async () => new Response('ok')

describe('limits()', () => {
  const app = compose(limits())(ok)

  test('a request within the limits passes', async () => {
    expect((await app(new Request('https://api.example/v1/orders?limit=10'))).status).toBe(200)
  })

  test('a URL over the limit is 414 uri-too-long (RFC 9110 §15.5.15)', async () => {
    const long = `https://api.example/v1/orders?q=${'a'.repeat(DEFAULT_MAX_URL_LENGTH)}`
    const response = await app(new Request(long))
    expect(response.status).toBe(414)
    expect(response.headers.get('content-type')).toBe('application/problem+json')
  })

  test('the limit counts path and query, not scheme and host', async () => {
    const custom = compose(limits({ maxUrlLength: 10 }))(ok)
    expect((await custom(new Request(`https://${'h'.repeat(50)}.example/123456789`))).status).toBe(
      200,
    )
    expect((await custom(new Request('https://api.example/1234567890'))).status).toBe(414)
  })

  test('an oversized listed header is 431 naming the header (RFC 6585 §5)', async () => {
    const response = await app(
      new Request('https://api.example/', {
        headers: { accept: 'a/b,'.repeat(DEFAULT_MAX_HEADER_VALUE_LENGTH) },
      }),
    )
    expect(response.status).toBe(431)
    expect(await response.json()).toMatchObject({ status: 431, header: 'accept' })
  })

  test('X-Request-Id is not limited by default (requestId() replaces it instead)', async () => {
    const response = await app(
      new Request('https://api.example/', { headers: { 'x-request-id': 'a'.repeat(20_000) } }),
    )
    expect(response.status).toBe(200)
  })

  test("'all' checks every header; per-header limits override the default", async () => {
    const strict = compose(
      limits({ headers: 'all', maxHeaderValueLength: 100, headerLimits: { cookie: 1000 } }),
    )(ok)
    expect(
      (await strict(new Request('https://api.example/', { headers: { 'x-any': 'a'.repeat(101) } })))
        .status,
    ).toBe(431)
    expect(
      (await strict(new Request('https://api.example/', { headers: { cookie: 'a'.repeat(900) } })))
        .status,
    ).toBe(200)
    expect(
      (await strict(new Request('https://api.example/', { headers: { cookie: 'a'.repeat(1001) } })))
        .status,
    ).toBe(431)
  })

  test('a header named only in headerLimits is checked too', async () => {
    const custom = compose(limits({ headers: [], headerLimits: { 'x-tenant': 8 } }))(ok)
    expect(
      (await custom(new Request('https://api.example/', { headers: { 'x-tenant': '123456789' } })))
        .status,
    ).toBe(431)
  })

  test('refuses limits that are not positive integers', () => {
    expect(() => limits({ maxUrlLength: 0 })).toThrow(RangeError)
    expect(() => limits({ headerLimits: { cookie: 1.5 } })).toThrow(RangeError)
  })
})

describe('limits({ maxBodyBytes }): one body limit for the routes behind it', () => {
  test('records the limit for every body reader behind it (core bodyLimitOf), and readBody honours it', async () => {
    const { bodyLimitOf } = await import('@api-blocks/core')
    const { readBody } = await import('../body/index.ts')
    const { errorBoundary } = await import('../errors.ts')
    const seen: (number | undefined)[] = []
    const app = compose(
      limits({ maxBodyBytes: 10 }),
      errorBoundary(),
    )(async (request) => {
      seen.push(bodyLimitOf(request))
      return new Response((await readBody(request)) as Uint8Array<ArrayBuffer>)
    })
    const post = (body: string) => new Request('https://api.example/', { method: 'POST', body })
    expect((await app(post('0123456789'))).status).toBe(200)
    const refused = await app(post('0123456789a'))
    expect(refused.status).toBe(413)
    expect(await refused.json()).toMatchObject({ max_bytes: 10 })
    expect(seen).toEqual([10, 10])
    // Without the option nothing is recorded.
    const plain = compose(limits())(async (request) => new Response(String(bodyLimitOf(request))))
    expect(await (await plain(post('x'))).text()).toBe('undefined')
  })

  test('refuses a maxBodyBytes that is not a non-negative integer', () => {
    expect(() => limits({ maxBodyBytes: -1 })).toThrow(RangeError)
    expect(() => limits({ maxBodyBytes: 1.5 })).toThrow(RangeError)
  })
})
