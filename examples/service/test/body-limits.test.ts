// One client cannot hurt another, on request bodies: one body limit per route whichever layer
// reads the body first (the idempotency middleware or the handler), and a request
// Content-Encoding the route does not accept answered 415 with Accept-Encoding (RFC 9110
// §15.5.16, §12.5.3). Over a real socket through @api-blocks/node, as src/main.ts serves; what
// the server pulled from a body stream is counted on the Fetch handler itself (a client's fetch
// pumps its whole body into the socket whatever the server reads).
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import { gzipSync } from 'node:zlib'
import { serve } from '@api-blocks/node'
import { afterAll, describe, expect, test } from 'vitest'
import { createService } from '../src/app.ts'
import { clientCredentialsToken } from './oauth-client.ts'

const LIMIT = 64 * 1024
const service = createService({
  rateLimits: [{ name: 'tests', quota: 1_000_000, windowSeconds: 1 }],
})
// The Fetch handler as it is, for requests built here; with the client address an adapter records.
const handler = createService({
  rateLimits: [{ name: 'tests', quota: 1_000_000, windowSeconds: 1 }],
  clientAddress: () => '192.0.2.1',
})
const server = serve(service, { port: 0, hostname: '127.0.0.1', lightweight: true })
await once(server, 'listening')
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
// A token of each instance's own authorisation server (every /v1 route needs one).
const served = `Bearer ${await clientCredentialsToken(fetch, base)}`
const inProcess = `Bearer ${await clientCredentialsToken(handler, base)}`
afterAll(() => {
  server.closeAllConnections()
  return new Promise((resolve) => server.close(resolve))
})

const order = { customer: 'Ada Lovelace', items: [{ sku: 'BOOK-042', quantity: 2 }] }
let keys = 0

function post(body: BodyInit, headers: Record<string, string> = {}) {
  return fetch(`${base}/v1/orders`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json',
      authorization: served,
      ...headers,
    },
    body,
    duplex: 'half',
  } as RequestInit)
}

/** A valid order padded with white space to `bytes`. */
const padded = (bytes: number) => JSON.stringify(order).padEnd(bytes, ' ')

/** `bytes` of JSON as a stream of 1 KiB chunks (no Content-Length), counting what is pulled. */
function counted(bytes: number) {
  const text = new TextEncoder().encode(padded(bytes))
  const state = { pulled: 0, done: false }
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (state.pulled >= text.byteLength) {
        state.done = true
        return controller.close()
      }
      controller.enqueue(text.slice(state.pulled, state.pulled + 1024))
      state.pulled += 1024
    },
  })
  return { body, state }
}

describe('one body limit per route', () => {
  test('a 100 KiB keyed POST to /v1/orders gets one 413 with max_bytes 65536, with Content-Length (and a 2 MiB one)', async () => {
    // Past the idempotency block's own default (1 MiB) too: still the route's limit.
    for (const bytes of [100 * 1024, 2 * 1024 * 1024]) {
      const response = await post(padded(bytes), { 'idempotency-key': `big-${++keys}` })
      expect(response.status).toBe(413)
      expect(response.headers.get('content-type')).toBe('application/problem+json')
      expect(await response.json()).toMatchObject({ status: 413, max_bytes: LIMIT })
    }
  })

  test('streamed without Content-Length: the idempotency layer reads no more than the limit, and answers the same 413', async () => {
    const { body, state } = counted(100 * 1024)
    const request = (body: ReadableStream<Uint8Array>, headers: Record<string, string> = {}) =>
      new Request(`${base}/v1/orders`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: inProcess, ...headers },
        body,
        duplex: 'half',
      } as RequestInit)
    const response = await handler(request(body, { 'idempotency-key': `big-${++keys}` }))
    expect(response.status).toBe(413)
    const keyed = await response.json()
    expect(keyed).toMatchObject({ status: 413, max_bytes: LIMIT })
    // The limit, the chunk that went past it, and at most one the stream queued ahead.
    expect(state.done).toBe(false)
    expect(state.pulled).toBeLessThanOrEqual(LIMIT + 2 * 1024)
    // The handler's own reader (no key) answers the very same problem.
    const plain = await handler(request(counted(100 * 1024).body))
    const unkeyed = await plain.json()
    expect(plain.status).toBe(413)
    const { instance: _a, request_id: _b, ...one } = keyed
    const { instance: _c, request_id: _d, ...other } = unkeyed
    expect(one).toEqual(other)
  })

  test('a body within the limit is created, keyed or not', async () => {
    const text = padded(60 * 1024)
    expect((await post(text, { 'idempotency-key': `ok-${++keys}` })).status).toBe(201)
    expect((await post(text)).status).toBe(201)
  })
})

describe('request Content-Encoding (RFC 9110 §15.5.16, §12.5.3)', () => {
  test('POST /v1/orders with Content-Encoding: gzip MUST be 415 with Accept-Encoding: identity and a problem, keyed or not', async () => {
    for (const headers of [{}, { 'idempotency-key': `gz-${++keys}` }]) {
      const response = await post(gzipSync(JSON.stringify(order)), {
        'content-encoding': 'gzip',
        ...headers,
      })
      expect(response.status).toBe(415)
      expect(response.headers.get('accept-encoding')).toBe('identity')
      expect(response.headers.get('content-type')).toBe('application/problem+json')
      expect(await response.json()).toMatchObject({ status: 415, accepted: ['identity'] })
    }
  })

  test('Content-Encoding: identity is accepted', async () => {
    const response = await post(JSON.stringify(order), {
      'content-encoding': 'identity',
      'idempotency-key': `id-${++keys}`,
    })
    expect(response.status).toBe(201)
  })
})
