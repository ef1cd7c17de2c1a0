// Representations (RFC 9110 §8, §13, §15.4.5) over a real socket, as src/main.ts serves the
// service: each content coding has its own strong ETag, conditional requests work across
// codings, only bodies of 1 KiB or more are compressed, and nothing a client sends is echoed
// back unchecked.
import { once } from 'node:events'
import type { IncomingHttpHeaders } from 'node:http'
import { request as httpRequest } from 'node:http'
import type { AddressInfo } from 'node:net'
import { connect } from 'node:net'
import { gunzipSync } from 'node:zlib'
import { serve } from '@api-blocks/node'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createService } from '../src/app.ts'
import { clientCredentialsToken } from './oauth-client.ts'

let port: number
// Every /v1 route needs a bearer token.
let token: string
let server: ReturnType<typeof serve>
beforeAll(async () => {
  server = serve(
    createService({
      rateLimits: [{ name: 'tests', quota: 1_000_000, windowSeconds: 1 }],
      corsOrigins: ['https://app.example'],
    }),
    { port: 0, hostname: '127.0.0.1', lightweight: true },
  )
  await once(server, 'listening')
  port = (server.address() as AddressInfo).port
  token = await clientCredentialsToken(fetch, `http://127.0.0.1:${port}`)
})
afterAll(() => new Promise((resolve) => server.close(resolve)))

interface Answer {
  status: number
  headers: IncomingHttpHeaders
  body: Buffer
}

// node:http, not fetch: fetch decodes content codings and sets Accept-Encoding itself.
function send(
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: unknown,
): Promise<Answer> {
  const payload = body === undefined ? undefined : JSON.stringify(body)
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        headers: {
          authorization: `Bearer ${token}`,
          ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
        },
      },
      (response) => {
        const chunks: Buffer[] = []
        response.on('data', (chunk: Buffer) => chunks.push(chunk))
        response.on('end', () =>
          resolve({
            status: response.statusCode!,
            headers: response.headers,
            body: Buffer.concat(chunks),
          }),
        )
      },
    )
    outgoing.on('error', reject)
    outgoing.end(payload)
  })
}

// Bytes node:http refuses to send (obs-text, DEL): written on a socket by hand.
function sendRaw(head: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    const chunks: Buffer[] = []
    socket.on('data', (chunk) => chunks.push(chunk))
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('latin1')))
    socket.on('error', reject)
    socket.end(Buffer.from(`${head}\r\nhost: localhost\r\nconnection: close\r\n\r\n`, 'latin1'))
  })
}

const vary = (answer: Answer) =>
  String(answer.headers.vary ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())

// 60 line items: about 2 KiB of JSON, over compress()'s 1 KiB threshold.
const bigOrder = {
  customer: 'Ada Lovelace',
  items: Array.from({ length: 60 }, (_, i) => ({ sku: `BOOK-${i}`, quantity: i + 1 })),
}
const smallOrder = { customer: 'Ada Lovelace', items: [{ sku: 'BOOK-042', quantity: 2 }] }

async function create(order: unknown): Promise<string> {
  const created = await send('POST', '/v1/orders', {}, order)
  expect(created.status).toBe(201)
  return created.headers.location!
}

describe('RFC 9110 §8.8.3.3: each coding of an order is a representation with its own strong tag', () => {
  test('GET gzip → 200 + tag; If-None-Match that tag → 304 with the same tag; If-Match it → the write goes ahead', async () => {
    const path = await create(bigOrder)

    const gzip = await send('GET', path, { 'accept-encoding': 'gzip' })
    expect(gzip.status).toBe(200)
    expect(gzip.headers['content-encoding']).toBe('gzip')
    expect(gzip.headers.etag).toBe('"1%-gzip"')
    expect(vary(gzip)).toContain('accept-encoding')
    expect(JSON.parse(gunzipSync(gzip.body).toString())).toMatchObject(bigOrder)

    const identity = await send('GET', path)
    expect(identity.headers['content-encoding']).toBeUndefined()
    expect(identity.headers.etag).toBe('"1"')
    expect(vary(identity)).toContain('accept-encoding')

    // RFC 9110 §15.4.5: the 304 carries the ETag and Vary the 200 for this request would.
    const revalidated = await send('GET', path, {
      'accept-encoding': 'gzip',
      'if-none-match': '"1%-gzip"',
    })
    expect(revalidated.status).toBe(304)
    expect(revalidated.headers.etag).toBe('"1%-gzip"')
    expect(vary(revalidated)).toContain('accept-encoding')
    expect(revalidated.body).toHaveLength(0)
    // The identity tag names the identity form: it matches when this request selects that
    // form, and not when it selects the gzip form (RFC 9110 §13.1.2), which it then gets.
    const plain = await send('GET', path, { 'if-none-match': '"1"' })
    expect(plain.status).toBe(304)
    expect(plain.headers.etag).toBe('"1"')
    expect(vary(plain)).toContain('accept-encoding')
    const other = await send('GET', path, { 'accept-encoding': 'gzip', 'if-none-match': '"1"' })
    expect(other.status).toBe(200)
    expect(other.headers.etag).toBe('"1%-gzip"')
    expect(JSON.parse(gunzipSync(other.body).toString())).toMatchObject(bigOrder)

    // RFC 9110 §9.3.2: HEAD carries the fields GET does, the coded tag included.
    const head = await send('HEAD', path, { 'accept-encoding': 'gzip' })
    expect(head.status).toBe(200)
    expect(head.headers['content-encoding']).toBe('gzip')
    expect(head.headers.etag).toBe('"1%-gzip"')
    expect(vary(head)).toContain('accept-encoding')
    expect(head.body).toHaveLength(0)

    const patched = await send(
      'PATCH',
      path,
      { 'accept-encoding': 'gzip', 'if-match': '"1%-gzip"' },
      { note: 'Gift wrap' },
    )
    expect(patched.status).toBe(200)
    expect(patched.headers.etag).toBe('"2%-gzip"')
    // The version moved on: the old tag, in any form, no longer matches.
    const stale = await send('PATCH', path, { 'if-match': '"1%-gzip"' }, { note: 'x' })
    expect(stale.status).toBe(412)
    // Any coding's tag of the current version matches, the identity one too.
    const again = await send('PATCH', path, { 'if-match': '"2%-deflate"' }, { note: 'y' })
    expect(again.status).toBe(200)
    expect(again.headers.etag).toBe('"3"')
  })

  test('MUST: If-Match uses the strong comparison, so a weak tag is 412 (RFC 9110 §13.1.1)', async () => {
    const path = await create(bigOrder)
    for (const tag of ['W/"1"', 'W/"1%-gzip"']) {
      const answer = await send('PATCH', path, { 'if-match': tag }, { note: 'x' })
      expect(answer.status, tag).toBe(412)
      expect(answer.headers['content-type']).toBe('application/problem+json')
    }
    expect((await send('GET', path)).headers.etag).toBe('"1"')
  })
})

describe('compression only from 1 KiB of body, with or without Content-Length', () => {
  test('a 200-byte order is sent as is, with its identity tag and no Vary: Accept-Encoding', async () => {
    const path = await create(smallOrder)
    const answer = await send('GET', path, { 'accept-encoding': 'gzip' })
    expect(answer.status).toBe(200)
    expect(answer.body.length).toBeLessThan(1024)
    expect(answer.headers['content-encoding']).toBeUndefined()
    expect(answer.headers.etag).toBe('"1"')
    expect(vary(answer)).not.toContain('accept-encoding')
    expect(JSON.parse(answer.body.toString())).toMatchObject(smallOrder)

    // RFC 9110 §15.4.5: its 304 carries the identity tag and, like its 200, no such Vary.
    const again = await send('GET', path, { 'accept-encoding': 'gzip', 'if-none-match': '"1"' })
    expect(again.status).toBe(304)
    expect(again.headers.etag).toBe('"1"')
    expect(vary(again)).not.toContain('accept-encoding')
    const head = await send('HEAD', path, { 'accept-encoding': 'gzip' })
    expect(head.headers['content-encoding']).toBeUndefined()
    expect(head.headers.etag).toBe('"1"')
  })
})

describe('what a client sends is echoed back only once checked', () => {
  test('X-Request-Id: kept when well formed, replaced otherwise (length, charset)', async () => {
    const kept = await send('GET', '/', { 'x-request-id': 'client-42' })
    expect(kept.headers['x-request-id']).toBe('client-42')
    for (const id of ['a'.repeat(201), 'a b', 'a,b', '<script>', 'a"b']) {
      const answer = await send('GET', '/', { 'x-request-id': id })
      expect(answer.headers['x-request-id'], id).toMatch(/^[0-9a-f-]{36}$/)
    }
    // obs-text reaches the service and is replaced; node's parser refuses DEL itself (400).
    const obsText = await sendRaw('GET / HTTP/1.1\r\nx-request-id: id\u00e9')
    expect(obsText).toMatch(/\r\nx-request-id: [0-9a-f-]{36}\r\n/)
    expect(obsText).not.toContain('id\u00e9')
    const control = await sendRaw('GET / HTTP/1.1\r\nx-request-id: id\u007f')
    expect(control).not.toContain('id\u007f')
  })

  test('CORS: only an allowed Origin is echoed; Access-Control-Request-Headers never is', async () => {
    for (const origin of ['https://evil.example', `https://app.example${'a'.repeat(1100)}`]) {
      const answer = await send('GET', '/', { origin })
      expect(answer.headers['access-control-allow-origin']).toBeUndefined()
    }
    const preflight = await send('OPTIONS', '/v1/orders', {
      origin: 'https://app.example',
      'access-control-request-method': 'PATCH',
      'access-control-request-headers': 'x-evil, if-match',
    })
    expect(preflight.headers['access-control-allow-origin']).toBe('https://app.example')
    expect(preflight.headers['access-control-allow-headers']).not.toMatch(/x-evil/i)
  })

  test('a 414 does not echo the URI it refused', async () => {
    const path = `/${'a'.repeat(9000)}`
    const answer = await send('GET', path)
    expect(answer.status).toBe(414)
    expect(answer.body.length).toBeLessThan(1024)
    expect(JSON.parse(answer.body.toString())).not.toHaveProperty('instance')
  })

  test('a 422 quotes at most 256 characters of an unknown member name', async () => {
    const key = 'k'.repeat(3000)
    const answer = await send('POST', '/v1/orders', {}, { ...smallOrder, [key]: 1 })
    expect(answer.status).toBe(422)
    expect(answer.body.length).toBeLessThan(1024)
    const problem = JSON.parse(answer.body.toString())
    expect(problem.errors[0].detail.length).toBeLessThanOrEqual(256)
  })
})
