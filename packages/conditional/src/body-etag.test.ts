import { describe, expect, test } from 'vitest'
import { bodyEtag } from './body-etag.ts'
import { etagFromBody } from './validators.ts'

const url = 'https://api.example/v1/report'
const json = '{"total":42}'

function chunked(text: string, size: number): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text)
  let at = 0
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) return controller.close()
      controller.enqueue(bytes.slice(at, at + size))
      at += size
    },
  })
}

const run = (
  handler: () => Response,
  init: RequestInit = {},
  options?: Parameters<typeof bodyEtag>[0],
) => bodyEtag(options)(new Request(url, init), async () => handler())

describe('bodyEtag (opt-in body hashing)', () => {
  test('tags a 200 GET with the SHA-256 of its body and keeps the body', async () => {
    const response = await run(() => Response.json({ total: 42 }))
    expect(response.headers.get('etag')).toBe(await etagFromBody(json))
    expect(await response.text()).toBe(json)
  })

  test('the tag does not depend on how the handler streamed the body', async () => {
    const tags = await Promise.all(
      [1, 3, 1024].map(async (size) => {
        const response = await run(() => new Response(chunked(json, size)))
        return response.headers.get('etag')
      }),
    )
    expect(new Set(tags).size).toBe(1)
    expect(tags[0]).toBe(await etagFromBody(json))
  })

  test('answers 304 to a matching If-None-Match, with the 200 fields §15.4.5 keeps', async () => {
    const etag = await etagFromBody(json)
    const response = await run(
      () =>
        new Response(json, {
          headers: { 'content-type': 'application/json', 'cache-control': 'no-cache' },
        }),
      { headers: { 'if-none-match': `W/"x", ${etag}` } },
    )
    expect(response.status).toBe(304)
    expect(response.body).toBeNull()
    expect(response.headers.get('etag')).toBe(etag)
    expect(response.headers.get('cache-control')).toBe('no-cache')
    expect(response.headers.has('content-type')).toBe(false)
  })

  test('answers 412 to a GET whose If-Match does not match', async () => {
    const response = await run(() => new Response(json), { headers: { 'if-match': '"other"' } })
    expect(response.status).toBe(412)
  })

  test.each([201, 206, 404, 500])(
    'leaves a %i untouched: only complete 200 bodies are tagged',
    async (status) => {
      const response = await run(() => new Response(json, { status }), {
        headers: { 'if-none-match': '*' },
      })
      expect(response.status).toBe(status)
      expect(response.headers.has('etag')).toBe(false)
    },
  )

  test('leaves other methods untouched', async () => {
    const response = await run(() => new Response(json), { method: 'POST', body: '{}' })
    expect(response.headers.has('etag')).toBe(false)
  })

  test.each([
    ['Cache-Control: no-store', { 'cache-control': 'private, no-store' }],
    ['an event stream', { 'content-type': 'text/event-stream' }],
  ])('skips %s', async (_, headers) => {
    const response = await run(() => new Response(json, { headers }))
    expect(response.headers.has('etag')).toBe(false)
    expect(await response.text()).toBe(json)
  })

  test('streams a body over maxBytes through untagged and intact', async () => {
    const big = 'x'.repeat(10_000)
    const response = await run(() => new Response(chunked(big, 1000)), {}, { maxBytes: 4096 })
    expect(response.headers.has('etag')).toBe(false)
    expect(await response.text()).toBe(big)
  })

  test('evaluates a tag the handler set instead of hashing', async () => {
    const response = await run(() => new Response(json, { headers: { etag: '"v9"' } }), {
      headers: { 'if-none-match': '"v9"' },
    })
    expect(response.status).toBe(304)
    expect(response.headers.get('etag')).toBe('"v9"')
  })

  test('a malformed tag from the handler is passed through, never thrown', async () => {
    const response = await run(() => new Response(json, { headers: { etag: 'v9' } }), {
      headers: { 'if-none-match': 'v9' },
    })
    expect(response.status).toBe(200)
    expect(response.headers.get('etag')).toBe('v9')
  })

  test('If-Modified-Since uses the Last-Modified the handler set', async () => {
    const response = await run(
      () => new Response(json, { headers: { 'last-modified': 'Thu, 01 Jan 2026 12:00:00 GMT' } }),
      { headers: { 'if-modified-since': 'Thu, 01 Jan 2026 12:00:00 GMT' } },
    )
    expect(response.status).toBe(304)
  })

  test('tags a body of exactly maxBytes; one byte more passes through untagged', async () => {
    const body = 'y'.repeat(64)
    const exact = await run(() => new Response(chunked(body, 10)), {}, { maxBytes: 64 })
    expect(exact.headers.get('etag')).toBe(await etagFromBody(body))
    const over = await run(() => new Response(chunked(`${body}y`, 10)), {}, { maxBytes: 64 })
    expect(over.headers.has('etag')).toBe(false)
    expect(await over.text()).toBe(`${body}y`)
  })

  test.each([-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])(
    'refuses maxBytes %s when the middleware is made, not at request time',
    (maxBytes) => {
      expect(() => bodyEtag({ maxBytes })).toThrow(RangeError)
    },
  )

  test('a handler body that fails mid-stream rejects with its own error', async () => {
    const failure = new Error('upstream hung up')
    let sent = false
    const failing = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent) return controller.error(failure)
        sent = true
        controller.enqueue(new TextEncoder().encode('{"partial":'))
      },
    })
    await expect(run(() => new Response(failing))).rejects.toBe(failure)
  })
})
