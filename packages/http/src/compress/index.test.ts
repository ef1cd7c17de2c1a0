import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { compose } from '../compose.ts'
import { compress, isCompressible, weakenEtag, webEncoders } from './index.ts'

const url = 'https://api.example/v1/orders'
const big = JSON.stringify(Array.from({ length: 200 }, (_, i) => ({ id: i, name: `order ${i}` })))
const jsonResponse = (body = big, headers: Record<string, string> = {}, status = 200) =>
  new Response(status === 204 || status === 304 ? null : body, {
    status,
    headers: {
      'content-type': 'application/json',
      'content-length': String(body.length),
      ...headers,
    },
  })

async function decode(response: Response): Promise<string> {
  const coding = response.headers.get('content-encoding')
  if (coding === null) return response.text()
  const format = coding === 'br' ? 'brotli' : coding
  const stream = response.body!.pipeThrough(new DecompressionStream(format as CompressionFormat))
  return new Response(stream).text()
}

const call = (
  middleware = compress(),
  response = () => jsonResponse(),
  headers: Record<string, string> = {},
  method = 'GET',
) => compose(middleware)(async () => response())(new Request(url, { method, headers }))

describe('isCompressible', () => {
  test.each([
    ['application/json', true],
    ['application/problem+json; charset=utf-8', true],
    ['application/atom+xml', true],
    ['text/html', true],
    ['text/event-stream', false],
    ['image/png', false],
    ['application/octet-stream', false],
    ['application/zip', false],
    ['nonsense', false],
  ])('%s → %s', (type, expected) => {
    expect(isCompressible(type)).toBe(expected)
  })
})

describe('weakenEtag (RFC 9110 §8.8.3)', () => {
  test('a strong tag becomes weak; a weak one stays; a malformed one is dropped', () => {
    expect(weakenEtag('"abc"')).toBe('W/"abc"')
    expect(weakenEtag('W/"abc"')).toBe('W/"abc"')
    expect(weakenEtag('abc')).toBeUndefined()
  })
})

describe('compress() (Web build)', () => {
  test('the Web encoders include gzip and deflate (and br where CompressionStream has brotli)', () => {
    expect(Object.keys(webEncoders())).toEqual(expect.arrayContaining(['gzip', 'deflate']))
  })

  test('gzip when accepted: Content-Encoding set, Content-Length dropped, Vary merged', async () => {
    const response = await call(compress(), () => jsonResponse(big, { vary: 'Origin' }), {
      'accept-encoding': 'gzip, deflate',
    })
    expect(response.headers.get('content-encoding')).toBe('gzip')
    expect(response.headers.has('content-length')).toBe(false)
    expect(response.headers.get('vary')).toBe('Origin, Accept-Encoding')
    expect(await decode(response)).toBe(big)
  })

  test('a strong ETag MUST NOT be reused on the compressed representation: it is weakened', async () => {
    const response = await call(compress(), () => jsonResponse(big, { etag: '"v7"' }), {
      'accept-encoding': 'gzip',
    })
    expect(response.headers.get('etag')).toBe('W/"v7"')
  })

  test('deflate is the zlib format (RFC 9110 §8.4.1.2)', async () => {
    const response = await call(compress(), undefined, { 'accept-encoding': 'deflate' })
    expect(response.headers.get('content-encoding')).toBe('deflate')
    expect(await decode(response)).toBe(big)
  })

  test('br only when offered explicitly, where the runtime has it', async () => {
    const plain = await call(compress(), undefined, { 'accept-encoding': 'br' })
    expect(plain.headers.has('content-encoding')).toBe(false)
    expect(plain.headers.get('vary')).toBe('Accept-Encoding')
    if ('br' in webEncoders()) {
      const response = await call(compress({ encodings: ['br', 'gzip'] }), undefined, {
        'accept-encoding': 'gzip, br',
      })
      expect(response.headers.get('content-encoding')).toBe('br')
      expect(await decode(response)).toBe(big)
    }
  })

  test('no Accept-Encoding, or identity only: sent as is, but with Vary', async () => {
    for (const headers of [
      {},
      { 'accept-encoding': 'identity' },
      { 'accept-encoding': 'gzip;q=0' },
    ]) {
      const response = await call(compress(), undefined, headers)
      expect(response.headers.has('content-encoding')).toBe(false)
      expect(response.headers.get('content-length')).toBe(String(big.length))
      expect(response.headers.get('vary')).toBe('Accept-Encoding')
      expect(await response.text()).toBe(big)
    }
  })

  test.each([
    ['below the threshold', () => jsonResponse('{"a":1}')],
    ['not compressible', () => jsonResponse(big, { 'content-type': 'image/png' })],
    ['already encoded', () => jsonResponse(big, { 'content-encoding': 'br' })],
    [
      'Cache-Control: no-transform',
      () => jsonResponse(big, { 'cache-control': 'max-age=60, no-transform' }),
    ],
    ['204', () => jsonResponse(big, {}, 204)],
    ['206', () => jsonResponse(big, { 'content-range': 'bytes 0-9/100' }, 206)],
  ])(
    'MUST NOT transform, so skips, a response %s (no Content-Encoding, no Vary)',
    async (_, response) => {
      const result = await call(compress(), response, { 'accept-encoding': 'gzip' })
      expect(result.headers.get('content-encoding')).toBe(
        response().headers.get('content-encoding'),
      )
      expect(result.headers.has('vary')).toBe(false)
    },
  )

  test('MUST: a 304 is not transformed but carries the Vary the 200 would (RFC 9110 §15.4.5)', async () => {
    const result = await call(
      compress(),
      () => new Response(null, { status: 304, headers: { etag: '"x"', vary: 'Origin' } }),
      { 'accept-encoding': 'gzip' },
    )
    expect(result.status).toBe(304)
    expect(result.headers.has('content-encoding')).toBe(false)
    expect(result.headers.get('vary')).toBe('Origin, Accept-Encoding')
  })

  test('HEAD is never compressed but carries the Vary a GET would', async () => {
    const response = await call(
      compress(),
      () => new Response(null, { headers: { 'content-type': 'application/json' } }),
      { 'accept-encoding': 'gzip' },
      'HEAD',
    )
    expect(response.headers.has('content-encoding')).toBe(false)
    expect(response.headers.get('vary')).toBe('Accept-Encoding')
  })

  test('a streamed body without Content-Length counts as large', async () => {
    const stream = () =>
      new Response(new Blob([big]).stream(), { headers: { 'content-type': 'text/plain' } })
    const response = await call(compress({ threshold: 10 }), stream, { 'accept-encoding': 'gzip' })
    expect(response.headers.get('content-encoding')).toBe('gzip')
    expect(await decode(response)).toBe(big)
  })

  test('configuration errors are refused when the middleware is made', () => {
    expect(() => compress({ encodings: ['zstd'] })).toThrow(TypeError)
    expect(() => compress({ threshold: -1 })).toThrow(RangeError)
  })

  test('property: hostile Accept-Encoding never breaks the response', async () => {
    const printable = fc.string({
      unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
      maxLength: 120,
    })
    const middleware = compress()
    await fc.assert(
      fc.asyncProperty(printable, async (value) => {
        const response = await call(middleware, undefined, { 'accept-encoding': value })
        expect(response.status).toBe(200)
        expect(await decode(response)).toBe(big)
      }),
      { interruptAfterTimeLimit: 1500, numRuns: 60 },
    )
  })
})
