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
