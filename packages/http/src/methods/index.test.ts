import { defineBodySlots } from '@api-blocks/core'
import { describe, expect, test } from 'vitest'
import { allowedMethods, methods } from './index.ts'

const url = 'https://api.example/v1/orders/1'
const resource = methods({
  GET: async () =>
    new Response('{"id":1}', {
      headers: { 'content-type': 'application/json', etag: '"v1"', 'content-length': '8' },
    }),
  PUT: async () => new Response(null, { status: 204 }),
  DELETE: async () => new Response(null, { status: 204 }),
})

describe('allowedMethods', () => {
  test('adds HEAD with GET, and OPTIONS, in a stable order', () => {
    expect(
      allowedMethods({ POST: async () => new Response(), GET: async () => new Response() }),
    ).toEqual(['GET', 'HEAD', 'POST', 'OPTIONS'])
    expect(allowedMethods({ QUERY: async () => new Response() })).toEqual(['OPTIONS', 'QUERY'])
  })
})

describe('methods()', () => {
  test('dispatches to the handler of the method', async () => {
    expect((await resource(new Request(url, { method: 'PUT' }))).status).toBe(204)
    expect(await (await resource(new Request(url))).text()).toBe('{"id":1}')
  })

  test('HEAD runs GET and SHOULD send the same header fields, without content (RFC 9110 §9.3.2)', async () => {
    const head = await resource(new Request(url, { method: 'HEAD' }))
    expect(head.status).toBe(200)
    expect(head.headers.get('etag')).toBe('"v1"')
    expect(head.headers.get('content-length')).toBe('8')
    expect(head.body).toBeNull()
  })

  test('HEAD gives the Content-Length of a GET body held in memory (RFC 9110 §8.6)', async () => {
    // A Response that holds its body as a string, as the node adapter's does.
    class WholeResponse extends Response {
      readonly whole: string
      constructor(whole: string) {
        super(whole, { headers: { 'content-type': 'application/json' } })
        this.whole = whole
      }
    }
    defineBodySlots(WholeResponse.prototype, {
      wholeBody(this: WholeResponse) {
        return this.whole
      },
    })
    const body = JSON.stringify({ name: 'crème brûlée' })
    const head = await methods({ GET: async () => new WholeResponse(body) })(
      new Request(url, { method: 'HEAD' }),
    )
    expect(head.headers.get('content-length')).toBe(String(new TextEncoder().encode(body).length))
    const empty = await methods({ GET: async () => new Response(null, { status: 204 }) })(
      new Request(url, { method: 'HEAD' }),
    )
    expect(empty.headers.has('content-length')).toBe(false)
  })

  test('HEAD reads a streamed GET body to give its length, up to 1 MiB, never an event stream', async () => {
    const head = (make: () => Response) =>
      methods({ GET: async () => make() })(new Request(url, { method: 'HEAD' }))
    expect((await head(() => Response.json({ a: 'é' }))).headers.get('content-length')).toBe('10')
    const huge = await head(() => new Response(new Uint8Array(1024 * 1024 + 1)))
    expect(huge.headers.has('content-length')).toBe(false)
    // An event stream never ends: it is not read (this one never sends a byte, so a HEAD that
    // read it would never answer).
    const events = await head(
      () =>
        new Response(new ReadableStream({ pull: () => new Promise(() => {}) }), {
          headers: { 'content-type': 'text/event-stream' },
        }),
    )
    expect(events.headers.has('content-length')).toBe(false)
  })

  test('OPTIONS answers 200 with Allow (RFC 9110 §9.3.7)', async () => {
    const response = await resource(new Request(url, { method: 'OPTIONS' }))
    expect(response.status).toBe(200)
    expect(response.headers.get('allow')).toBe('GET, HEAD, PUT, DELETE, OPTIONS')
    expect(await response.text()).toBe('')
  })

  test('a 405 MUST carry Allow (RFC 9110 §15.5.6), as the method-not-allowed problem', async () => {
    const response = await resource(new Request(url, { method: 'POST', body: '{}' }))
    expect(response.status).toBe(405)
    expect(response.headers.get('allow')).toBe('GET, HEAD, PUT, DELETE, OPTIONS')
    expect(response.headers.get('content-type')).toBe('application/problem+json')
    expect(await response.json()).toMatchObject({
      status: 405,
      allowed_methods: ['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS'],
    })
  })

  test.each(['FOO', 'PATCH', 'PROPFIND'])('an unknown method %s → 405', async (method) => {
    const response = await resource(new Request(url, { method }))
    expect(response.status).toBe(405)
    expect(response.headers.get('allow')).toBe('GET, HEAD, PUT, DELETE, OPTIONS')
  })

  // RFC 9110 §9.1: method names are case-sensitive. Fetch normalises the six of its own
  // (`get`, `put` …) to upper case, but no other: a `Patch` or `purge` request never reaches
  // the PATCH or PURGE handler. (A lower-case `patch` is left out: undici warns about it.)
  test.each(['Patch', 'pAtCh', 'purge', 'Purge'])(
    'an oddly cased method %s MUST NOT match a handler (case-sensitive) → 405',
    async (method) => {
      const patchable = methods({
        PATCH: async () => new Response(null, { status: 204 }),
        PURGE: async () => new Response(null, { status: 202 }),
      })
      const request = new Request(url, { method })
      expect(request.method).toBe(method)
      const response = await patchable(request)
      expect(response.status).toBe(405)
      expect(response.headers.get('allow')).toBe('OPTIONS, PATCH, PURGE')
    },
  )

  test('own HEAD and OPTIONS handlers take precedence', async () => {
    const custom = methods({
      GET: async () => new Response('body'),
      HEAD: async () => new Response(null, { headers: { 'x-head': '1' } }),
      OPTIONS: async () => new Response(null, { status: 204 }),
    })
    expect((await custom(new Request(url, { method: 'HEAD' }))).headers.get('x-head')).toBe('1')
    expect((await custom(new Request(url, { method: 'OPTIONS' }))).status).toBe(204)
  })

  test('HEAD without GET is 405', async () => {
    const postOnly = methods({ POST: async () => new Response(null, { status: 201 }) })
    const response = await postOnly(new Request(url, { method: 'HEAD' }))
    expect(response.status).toBe(405)
    expect(response.headers.get('allow')).toBe('POST, OPTIONS')
  })

  test('a custom method can be handled', async () => {
    const custom = methods({ PURGE: async () => new Response(null, { status: 202 }) })
    expect((await custom(new Request(url, { method: 'PURGE' }))).status).toBe(202)
  })

  test('refuses keys that can never match (method names are case-sensitive, RFC 9110 §9.1)', () => {
    expect(() => methods({ get: async () => new Response() })).toThrow(TypeError)
    expect(() => methods({ 'BAD METHOD': async () => new Response() })).toThrow(TypeError)
    expect(() => methods({ GET: 'nope' as never })).toThrow(TypeError)
  })
})
