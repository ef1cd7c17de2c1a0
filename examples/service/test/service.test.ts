// The reference service's conventions (docs/spec.md §4.3, §7.2), checked on its Fetch handler.
import fc from 'fast-check'
import { beforeEach, describe, expect, test } from 'vitest'
import { createService } from '../src/app.ts'
import { clientCredentialsToken } from './oauth-client.ts'

const BASE = 'http://service.test'
// Where clients reach the service: absolute URLs are built on it, never on the Host (BASE).
const PUBLIC = 'https://api.example'
let tasks: (() => void)[]
let service: ReturnType<typeof createService>
// Every /v1 route needs a bearer token: the demo back end's, read:orders and write:orders, got
// from the service's own token endpoint (test/oauth-*.test.ts test the tokens themselves).
let token: string

beforeEach(async () => {
  tasks = []
  let id = 0
  service = createService({
    clock: () => Date.UTC(2026, 10, 22, 10, 0, 0),
    schedule: (task) => tasks.push(task),
    generateRequestId: () => `req-${++id}`,
    maxBodyBytes: 4096,
    publicUrl: PUBLIC,
    // The conventions below are not about rate limits: a quota no test reaches.
    rateLimits: [{ name: 'tests', quota: 1_000_000, windowSeconds: 1 }],
    // Where the requests come from: what scopes their Idempotency-Keys.
    clientAddress: () => '192.0.2.1',
  })
  token = await clientCredentialsToken(service, BASE)
})

function call(
  method: string,
  path: string,
  init: { body?: unknown; headers?: Record<string, string> } = {},
) {
  const headers = new Headers(init.headers)
  if (!headers.has('authorization')) headers.set('authorization', `Bearer ${token}`)
  let body: string | undefined
  if (init.body !== undefined) {
    body = typeof init.body === 'string' ? init.body : JSON.stringify(init.body)
    if (!headers.has('content-type')) headers.set('content-type', 'application/json')
  }
  return service(new Request(`${BASE}${path}`, { method, headers, body: body ?? null }))
}

const newOrder = { customer: 'Ada Lovelace', items: [{ sku: 'BOOK-042', quantity: 2 }] }

async function create() {
  const response = await call('POST', '/v1/orders', { body: newOrder })
  const order = (await response.json()) as { id: string; version: number }
  return { ...order, etag: response.headers.get('etag') ?? '' }
}

describe('docs/spec.md §4.3 conventions on /v1/orders', () => {
  test('POST creates: 201 with Location, Content-Type and X-Request-Id', async () => {
    const response = await call('POST', '/v1/orders', { body: newOrder })
    expect(response.status).toBe(201)
    const order = await response.json()
    // Absolute, on the configured public URL: not on the Host the request named (BASE).
    expect(response.headers.get('location')).toBe(`${PUBLIC}/v1/orders/${order.id}`)
    expect(order.id).toMatch(/^ord_[0-9A-HJKMNP-TV-Z]{26}$/)
    expect(response.headers.get('content-type')).toBe('application/json')
    // req-1 was the token request of beforeEach.
    expect(response.headers.get('x-request-id')).toBe('req-2')
    expect(order).toMatchObject({ ...newOrder, status: 'open', note: null, version: 1 })
  })

  test('GET lists in the §2.3 envelope', async () => {
    await create()
    const response = await call('GET', '/v1/orders')
    expect(response.status).toBe(200)
    const page = await response.json()
    expect(page.data).toHaveLength(1)
    expect(page.has_more).toBe(false)
    expect(page.next_cursor).toBeNull()
  })

  test('GET reads one; an unknown or odd id is a 404 problem', async () => {
    const { id } = await create()
    expect((await call('GET', `/v1/orders/${id}`)).status).toBe(200)
    for (const odd of ['ord_999999', '..%2F..%2Fetc', 'x'.repeat(65), '%00', 'a%20b']) {
      const response = await call('GET', `/v1/orders/${odd}`)
      expect(response.status, odd).toBe(404)
      expect(response.headers.get('content-type')).toBe('application/problem+json')
      expect((await response.json()).status).toBe(404)
    }
  })

  test('PUT replaces the whole resource; a partial body is 422 with pointers', async () => {
    const { id, etag } = await create()
    const replaced = await call('PUT', `/v1/orders/${id}`, {
      body: { customer: 'Grace Hopper', items: [{ sku: 'X-1', quantity: 1 }], note: 'hi' },
      headers: { 'if-match': etag },
    })
    expect(replaced.status).toBe(200)
    expect(await replaced.json()).toMatchObject({
      customer: 'Grace Hopper',
      note: 'hi',
      version: 2,
    })
    const partial = await call('PUT', `/v1/orders/${id}`, {
      body: { customer: 'Grace' },
      headers: { 'if-match': replaced.headers.get('etag') ?? '' },
    })
    expect(partial.status).toBe(422)
    const problem = await partial.json()
    expect(problem.errors.map((e: { pointer: string }) => e.pointer).sort()).toEqual([
      '/items',
      '/note',
    ])
  })

  test('PATCH sets members absolutely, so applying it twice gives the same state', async () => {
    const { id, etag } = await create()
    const patch = (tag: string) =>
      call('PATCH', `/v1/orders/${id}`, {
        body: { note: 'Gift wrap' },
        headers: { 'if-match': tag },
      })
    const firstResponse = await patch(etag)
    const first = await firstResponse.json()
    const second = await (await patch(firstResponse.headers.get('etag') ?? '')).json()
    expect(first.note).toBe('Gift wrap')
    expect({ ...second, version: 0, updated_at: '' }).toEqual({
      ...first,
      version: 0,
      updated_at: '',
    })
  })

  // Changed on purpose (issue 13): `{}` was a 422; RFC 7396 §2 makes it a patch that changes nothing.
  test('MUST: an empty merge patch is a no-op: 200, the resource and its version unchanged (RFC 7396 §2)', async () => {
    const { id, etag } = await create()
    const before = await (await call('GET', `/v1/orders/${id}`)).json()
    const empty = await call('PATCH', `/v1/orders/${id}`, {
      body: {},
      headers: { 'if-match': etag },
    })
    expect(empty.status).toBe(200)
    expect(empty.headers.get('etag')).toBe(etag)
    expect(await empty.json()).toEqual(before)
    expect(await (await call('GET', `/v1/orders/${id}`)).json()).toEqual(before)
    // Still a write: If-Match is required and checked.
    expect((await call('PATCH', `/v1/orders/${id}`, { body: {} })).status).toBe(428)
    const stale = await call('PATCH', `/v1/orders/${id}`, {
      body: {},
      headers: { 'if-match': '"9"' },
    })
    expect(stale.status).toBe(412)
  })

  test('PATCH with an unknown member is 422', async () => {
    const { id, etag } = await create()
    const unknown = await call('PATCH', `/v1/orders/${id}`, {
      body: { total: 5 },
      headers: { 'if-match': etag },
    })
    expect(unknown.status).toBe(422)
  })

  test('DELETE answers 204 without a body, then the order is gone', async () => {
    const { id, etag } = await create()
    const response = await call('DELETE', `/v1/orders/${id}`, { headers: { 'if-match': etag } })
    expect(response.status).toBe(204)
    expect(await response.text()).toBe('')
    expect(response.headers.get('x-request-id')).toBeTruthy()
    expect((await call('GET', `/v1/orders/${id}`)).status).toBe(404)
  })

  test('the cancel action answers 202 with a polling URL that reports completion', async () => {
    const { id } = await create()
    const accepted = await call('POST', `/v1/orders/${id}/cancel`)
    expect(accepted.status).toBe(202)
    const location = accepted.headers.get('location') ?? ''
    expect(location).toMatch(/^https:\/\/api\.example\/v1\/operations\/op_[0-9A-Z]{26}$/)
    const poll = new URL(location).pathname
    expect(accepted.headers.get('retry-after')).toBe('1')
    expect((await (await call('GET', poll)).json()).status).toBe('running')
    for (const task of tasks) task()
    await new Promise((resolve) => setTimeout(resolve, 0)) // the task writes asynchronously
    const done = await (await call('GET', poll)).json()
    expect(done.status).toBe('succeeded')
    expect((await (await call('GET', `/v1/orders/${id}`)).json()).status).toBe('cancelled')
    expect((await call('POST', `/v1/orders/${id}/cancel`)).status).toBe(409)
  })

  test('HEAD answers the GET headers without a body', async () => {
    await create()
    const get = await call('GET', '/v1/orders')
    const head = await call('HEAD', '/v1/orders')
    expect(head.status).toBe(200)
    expect(await head.text()).toBe('')
    expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'))
  })

  test('OPTIONS lists the allowed methods', async () => {
    const response = await call('OPTIONS', '/v1/orders')
    expect(response.status).toBe(200)
    expect(response.headers.get('allow')).toBe('GET, HEAD, POST, OPTIONS')
  })

  test('MUST: 405 carries Allow (RFC 9110 §15.5.6), also for unknown methods', async () => {
    for (const method of ['DELETE', 'FOO', 'PUT']) {
      const response = await call(method, '/v1/orders')
      expect(response.status, method).toBe(405)
      expect(response.headers.get('allow')).toBe('GET, HEAD, POST, OPTIONS')
      expect(response.headers.get('content-type')).toBe('application/problem+json')
    }
  })

  test('CORS: a preflight from an allowed origin is answered; Vary: Origin everywhere', async () => {
    const preflight = await call('OPTIONS', '/v1/orders', {
      headers: {
        origin: 'http://localhost:5173',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, idempotency-key',
      },
    })
    expect(preflight.status).toBe(200)
    expect(preflight.headers.get('access-control-allow-origin')).toBe('http://localhost:5173')
    expect(preflight.headers.get('access-control-allow-headers')).toMatch(/Idempotency-Key/i)
    const refused = await call('GET', '/v1/orders', { headers: { origin: 'https://evil.example' } })
    expect(refused.headers.get('access-control-allow-origin')).toBeNull()
    expect(refused.headers.get('vary')).toMatch(/Origin/)
    const created = await call('POST', '/v1/orders', {
      body: newOrder,
      headers: { origin: 'http://localhost:5173' },
    })
    expect(created.headers.get('access-control-expose-headers')).toMatch(/Location/i)
    expect(created.headers.get('access-control-expose-headers')).toMatch(/X-Request-Id/i)
  })
})

describe('bad input gets the right problem', () => {
  test('invalid JSON → 400', async () => {
    const response = await call('POST', '/v1/orders', { body: '{"customer":' })
    expect(response.status).toBe(400)
    expect(response.headers.get('content-type')).toBe('application/problem+json')
  })

  test('a wrong Content-Type → 415', async () => {
    const response = await call('POST', '/v1/orders', {
      body: 'customer=Ada',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    expect(response.status).toBe(415)
  })

  test('a body over the limit → 413', async () => {
    const response = await call('POST', '/v1/orders', {
      body: { ...newOrder, note: 'x'.repeat(5000) },
    })
    expect(response.status).toBe(413)
    expect((await response.json()).max_bytes).toBe(4096)
  })

  test('Accept that no representation satisfies → 406', async () => {
    const response = await call('GET', '/v1/orders', { headers: { accept: 'text/html' } })
    expect(response.status).toBe(406)
  })

  test('a well-formed X-Request-Id is echoed; a 10 KB one is replaced', async () => {
    const echoed = await call('GET', '/v1/orders', { headers: { 'x-request-id': 'abc-123' } })
    expect(echoed.headers.get('x-request-id')).toBe('abc-123')
    const huge = await call('GET', '/v1/orders', {
      headers: { 'x-request-id': 'a'.repeat(10_240) },
    })
    expect(huge.headers.get('x-request-id')).toMatch(/^req-\d+$/)
  })

  test('problem titles follow Accept-Language', async () => {
    const response = await call('GET', '/v1/orders/ord_999999', {
      headers: { 'accept-language': 'de-DE,de;q=0.9' },
    })
    expect(response.headers.get('content-language')).toBe('de')
    expect((await response.json()).title).toBe('Die Ressource wurde nicht gefunden.')
  })

  test('no request makes the service answer 500', async () => {
    const methods = fc.constantFrom(
      'GET',
      'HEAD',
      'POST',
      'PUT',
      'PATCH',
      'DELETE',
      'OPTIONS',
      'FOO',
    )
    const paths = fc.oneof(
      fc.constantFrom(
        '/v1/orders',
        '/v1/orders/ord_000001',
        '/v1/orders/ord_000001/cancel',
        '/',
        '/token',
        '/authorize',
        '/login',
        '/consent',
        '/oauth/introspect',
        '/oauth/revoke',
        '/.well-known/openid-configuration',
      ),
      fc.webPath(),
    )
    const headerValue = fc.string({ maxLength: 300 }).filter((v) => !/[\r\n\0]/.test(v))
    const headers = fc.dictionary(
      fc.constantFrom(
        'accept',
        'accept-language',
        'accept-encoding',
        'origin',
        'content-type',
        'x-request-id',
        'if-match',
        'authorization',
        'cookie',
      ),
      headerValue,
      { maxKeys: 4 },
    )
    const body = fc.option(fc.oneof(fc.string({ maxLength: 500 }), fc.json({ maxDepth: 3 })), {
      nil: undefined,
    })
    await fc.assert(
      fc.asyncProperty(
        methods,
        paths,
        headers,
        body,
        fc.boolean(),
        async (method, path, hdrs, payload, authorized) => {
          await create()
          let request: Request
          try {
            request = new Request(`${BASE}${path.startsWith('/') ? path : `/${path}`}`, {
              method,
              // Mostly with a valid token, so the layers behind the bearer check see the input too.
              headers:
                authorized && hdrs['authorization'] === undefined
                  ? { ...hdrs, authorization: `Bearer ${token}` }
                  : hdrs,
              body: method === 'GET' || method === 'HEAD' ? null : (payload ?? null),
            })
          } catch {
            return // not a request a client could send
          }
          const response = await service(request)
          expect(response.status).toBeLessThan(500)
          expect(response.headers.get('x-request-id')).toBeTruthy()
          await response.arrayBuffer()
        },
      ),
      { interruptAfterTimeLimit: 4000, numRuns: 400 },
    )
  })
})

describe('pagination (docs/spec.md §2.3)', () => {
  test('pages follow next_cursor and Link until has_more is false', async () => {
    const created: string[] = []
    for (let i = 0; i < 5; i += 1) created.push((await create()).id)
    const seen: string[] = []
    let path = '/v1/orders?limit=2'
    for (let pages = 0; pages < 10; pages += 1) {
      const response = await call('GET', path)
      const page = await response.json()
      seen.push(...page.data.map((o: { id: string }) => o.id))
      expect(page.has_more).toBe(page.next_cursor !== null)
      if (!page.has_more) {
        expect(response.headers.get('link')).toBeNull()
        break
      }
      // On the public URL, whatever Host the request named; the query kept, the cursor set.
      expect(response.headers.get('link')).toBe(
        `<${PUBLIC}${path.replace(/&after=.*$/, '')}&after=${page.next_cursor}>; rel="next"`,
      )
      path = `/v1/orders?limit=2&after=${page.next_cursor}`
    }
    // Creation order, even within one millisecond (the test's clock is fixed): ids are monotonic.
    expect(seen).toEqual(created)
  })

  test('a tampered cursor, or one replayed on another filter, is the invalid-cursor problem', async () => {
    for (let i = 0; i < 3; i += 1) await create()
    const { next_cursor: cursor } = await (await call('GET', '/v1/orders?limit=1')).json()
    const tampered = `${cursor.slice(0, -2)}${cursor.endsWith('A') ? 'B' : 'A'}A`
    for (const path of [
      `/v1/orders?after=${tampered}`,
      `/v1/orders?status=open&after=${cursor}`,
      '/v1/orders?after=',
    ]) {
      const response = await call('GET', path)
      expect(response.status, path).toBe(400)
      expect((await response.json()).type).toMatch(/invalid-cursor$/)
    }
  })

  test('limit: garbage is 400, above the maximum is clamped', async () => {
    for (const limit of ['-1', 'abc', '1.5']) {
      expect((await call('GET', `/v1/orders?limit=${limit}`)).status, limit).toBe(400)
    }
    expect((await call('GET', '/v1/orders?limit=100000')).status).toBe(200)
    expect((await call('GET', '/v1/orders?status=bogus')).status).toBe(400)
  })
})

describe('conditional requests (docs/spec.md §4.3 rules 7 and 9)', () => {
  test('GET answers ETag, Last-Modified and private, no-store; If-None-Match gives 304', async () => {
    const { id } = await create()
    const response = await call('GET', `/v1/orders/${id}`)
    const etag = response.headers.get('etag')
    expect(etag).toBe('"1"')
    expect(response.headers.get('last-modified')).toBe('Sun, 22 Nov 2026 10:00:00 GMT')
    expect(response.headers.get('cache-control')).toBe('private, no-store')
    const cached = await call('GET', `/v1/orders/${id}`, {
      headers: { 'if-none-match': etag ?? '' },
    })
    expect(cached.status).toBe(304)
    expect(await cached.text()).toBe('')
    expect(cached.headers.get('etag')).toBe(etag)
    expect(cached.headers.get('x-request-id')).toBeTruthy()
    const stale = await call('GET', `/v1/orders/${id}`, {
      headers: { 'if-none-match': '"0", W/"9"' },
    })
    expect(stale.status).toBe(200)
  })

  test('a write with a stale If-Match is 412 and changes nothing', async () => {
    const { id, etag } = await create()
    const headers = { 'if-match': etag }
    expect((await call('PATCH', `/v1/orders/${id}`, { body: { note: 'a' }, headers })).status).toBe(
      200,
    )
    const lost = await call('PATCH', `/v1/orders/${id}`, { body: { note: 'b' }, headers })
    expect(lost.status).toBe(412)
    expect((await lost.json()).type).toMatch(/precondition-failed$/)
    expect((await (await call('GET', `/v1/orders/${id}`)).json()).note).toBe('a')
    expect((await call('DELETE', `/v1/orders/${id}`, { headers })).status).toBe(412)
  })

  test('a write without If-Match is 428 (RFC 6585 §3)', async () => {
    const { id } = await create()
    for (const method of ['PUT', 'PATCH', 'DELETE']) {
      const response = await call(method, `/v1/orders/${id}`, {
        body: method === 'DELETE' ? undefined : { note: 'x' },
      })
      expect(response.status, method).toBe(428)
      expect(response.headers.get('content-type')).toBe('application/problem+json')
      // Thrown by the handler, answered by errorBoundary() below the limiter: headers too.
      expect(response.headers.get('ratelimit-limit')).toBeTruthy()
    }
  })

  test('a 404 wins over preconditions (RFC 9110 §13.2.1)', async () => {
    const response = await call('PATCH', '/v1/orders/ord_424242', { body: { note: 'x' } })
    expect(response.status).toBe(404)
  })

  test('garbage conditional headers never crash: If-Match garbage is 412, dates are ignored', async () => {
    const { id } = await create()
    for (const value of ['garbage', '"unterminated', 'W/', ',,,', `"${'x'.repeat(8000)}"`]) {
      const write = await call('PATCH', `/v1/orders/${id}`, {
        body: { note: 'x' },
        headers: { 'if-match': value },
      })
      expect(write.status, value).toBe(412)
    }
    const read = await call('GET', `/v1/orders/${id}`, {
      headers: { 'if-modified-since': 'yesterday' },
    })
    expect(read.status).toBe(200)
  })
})

describe('rate limits (docs/spec.md §7.2, §8)', () => {
  test('every response carries the limit headers; past the quota, 429 with Retry-After', async () => {
    let now = Date.UTC(2026, 10, 22, 10, 0, 0)
    const limited = createService({
      clock: () => now,
      rateLimits: [{ name: 'burst', quota: 3, windowSeconds: 1 }],
      clientAddress: () => '203.0.113.7',
    })
    // The token request is charged to the address; /v1 to the principal the token names.
    const bearer = `Bearer ${await clientCredentialsToken(limited, BASE)}`
    const get = () =>
      limited(new Request(`${BASE}/v1/orders`, { headers: { authorization: bearer } }))
    for (const remaining of ['2', '1', '0']) {
      const response = await get()
      expect(response.status).toBe(200)
      expect(response.headers.get('ratelimit-limit')).toBe('3')
      expect(response.headers.get('ratelimit-remaining')).toBe(remaining)
      expect(response.headers.get('x-ratelimit-remaining')).toBe(remaining)
    }
    const refused = await get()
    expect(refused.status).toBe(429)
    expect(refused.headers.get('retry-after')).toBe('1')
    expect(refused.headers.get('ratelimit-reset')).toBe('1')
    expect(refused.headers.get('x-request-id')).toBeTruthy()
    const problem = await refused.json()
    expect(problem.type).toBe('https://iana.org/assignments/http-problem-types#quota-exceeded')
    expect(problem['violated-policies']).toEqual(['burst'])
    now += 1000
    expect((await get()).status).toBe(200)
  })

  test('without a token (public routes), clients are limited apart by IP (IPv6 by /56); an unverified API key changes nothing', async () => {
    const limited = createService({
      rateLimits: [{ name: 'burst', quota: 1, windowSeconds: 60 }],
      clientAddress: (request) => request.headers.get('x-test-ip') ?? undefined,
    })
    const get = (headers: Record<string, string>) =>
      limited(new Request(`${BASE}/openapi.json`, { headers }))
    expect((await get({ 'x-test-ip': '2001:db8:0:1::1' })).status).toBe(200)
    expect((await get({ 'x-test-ip': '2001:db8:0:2::9' })).status).toBe(429) // same /56
    expect((await get({ 'x-test-ip': '2001:db8:1::1' })).status).toBe(200)
    // A made-up key per request must not buy a fresh quota.
    for (const key of ['rand-1', 'rand-2']) {
      expect((await get({ 'x-api-key': key, 'x-test-ip': '2001:db8:0:1::1' })).status).toBe(429)
    }
  })
})

describe('Idempotency-Key (docs/spec.md §4.3 rule 6)', () => {
  const post = (key: string, body: unknown, path = '/v1/orders') =>
    call('POST', path, { body, headers: { 'idempotency-key': key } })

  test('a repeat with the same key and body replays the first result byte for byte', async () => {
    const first = await post('key-1', newOrder)
    const firstBody = await first.text()
    const again = await post('key-1', { items: newOrder.items, customer: newOrder.customer })
    expect(again.status).toBe(201)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.headers.get('location')).toBe(first.headers.get('location'))
    expect(await again.text()).toBe(firstBody)
    const list = await (await call('GET', '/v1/orders')).json()
    expect(list.data).toHaveLength(1)
  })

  test('a deterministic 4xx is stored too: the same invalid body replays its 422', async () => {
    const invalid = { customer: 'Ada', items: [] }
    const first = await post('key-422', invalid)
    expect(first.status).toBe(422)
    const again = await post('key-422', invalid)
    expect(again.status).toBe(422)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
  })

  test('the same key with another body is 409', async () => {
    await post('key-2', newOrder)
    const reused = await post('key-2', { ...newOrder, note: 'different' })
    expect(reused.status).toBe(409)
    expect((await reused.json()).type).toMatch(/idempotency-key-reused$/)
  })

  test('the cancel action replays its 202', async () => {
    const { id } = await create()
    const first = await post('cancel-1', undefined, `/v1/orders/${id}/cancel`)
    const again = await post('cancel-1', undefined, `/v1/orders/${id}/cancel`)
    expect(first.status).toBe(202)
    expect(again.status).toBe(202)
    expect(again.headers.get('location')).toBe(first.headers.get('location'))
  })

  test('malformed keys are 400; a key past the header limit is 431', async () => {
    for (const key of ['', 'a'.repeat(300), 'tab\tkey']) {
      const response = await post(key, newOrder)
      expect(response.status, JSON.stringify(key.slice(0, 10))).toBe(400)
      expect((await response.json()).type).toMatch(/idempotency-key-invalid$/)
    }
    // limits() answers before the idempotency block reads a 10 KB header field (RFC 6585 §5).
    expect((await post('a'.repeat(10_240), newOrder)).status).toBe(431)
  })
})

describe('edge input and URLs', () => {
  // Raw JSON text, so that the escapes reach the parser as a client sends them.
  const raw = (customer: string, note: string) =>
    `{"customer":"${customer}","items":[{"sku":"BOOK-042","quantity":1}],"note":"${note}"}`

  test('MUST: lone surrogates and control characters are refused with 422 and a pointer', async () => {
    const cases: [customer: string, note: string, pointer: string][] = [
      ['\\ud800', 'ok', '/customer'], // a high surrogate with no pair
      ['Ada \\udc00', 'ok', '/customer'], // a lone low surrogate
      ['Ada', 'x\\udbff', '/note'],
      ['Ada\\u0000', 'ok', '/customer'],
      ['Ada\\n', 'ok', '/customer'], // a name is one line
      ['Ada\\u001f', 'ok', '/customer'],
      ['Ada\\u007f', 'ok', '/customer'],
      ['Ada\\u0085', 'ok', '/customer'], // NEL, C1
      ['Ada\\u009f', 'ok', '/customer'],
      ['Ada', 'bell\\u0007', '/note'],
      ['Ada', 'esc\\u001b[31m', '/note'],
    ]
    for (const [customer, note, pointer] of cases) {
      const response = await call('POST', '/v1/orders', { body: raw(customer, note) })
      expect(response.status, `${customer} ${note}`).toBe(422)
      const problem = await response.json()
      expect(problem.errors.map((e: { pointer: string }) => e.pointer)).toEqual([pointer])
    }
    // PUT and PATCH use the same members.
    const { id, etag } = await create()
    const patched = await call('PATCH', `/v1/orders/${id}`, {
      body: '{"customer":"\\ud800"}',
      headers: { 'if-match': etag },
    })
    expect(patched.status).toBe(422)
  })

  test('a note may hold tabs and line breaks; paired surrogates (emoji) and other scripts pass', async () => {
    const response = await call('POST', '/v1/orders', {
      body: raw('Ada Lovelace \\ud83d\\ude00 Łukasz 東京', 'Line 1\\r\\nLine 2\\tend'),
    })
    expect(response.status).toBe(201)
    const order = await response.json()
    expect(order.customer).toBe('Ada Lovelace 😀 Łukasz 東京')
    expect(order.note).toBe('Line 1\r\nLine 2\tend')
  })

  test('MUST NOT build Location or Link from the Host header: a forged Host changes nothing', async () => {
    for (let i = 0; i < 3; i += 1) await create()
    const forged = (path: string, init: RequestInit = {}) =>
      service(
        new Request(`http://evil.example${path}`, {
          ...init,
          headers: {
            ...(init.headers as Record<string, string>),
            authorization: `Bearer ${token}`,
          },
        }),
      )
    const created = await forged('/v1/orders', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(newOrder),
    })
    expect(created.headers.get('location')).toMatch(/^https:\/\/api\.example\/v1\/orders\/ord_/)
    const list = await forged('/v1/orders?limit=1')
    expect(list.headers.get('link')).toMatch(/^<https:\/\/api\.example\/v1\/orders\?limit=1&after=/)
  })

  test('ids are unique across instances, even on one clock (no per-process sequence)', async () => {
    const clock = () => Date.UTC(2026, 10, 22, 10, 0, 0)
    const options = { clock, rateLimits: [{ name: 'tests', quota: 1000, windowSeconds: 1 }] }
    const [a, b] = [createService(options), createService(options)]
    // Each instance is its own authorisation server here (memory store, random keys).
    const tokens = new Map([
      [a, await clientCredentialsToken(a, BASE)],
      [b, await clientCredentialsToken(b, BASE)],
    ])
    const post = (instance: typeof service) =>
      instance(
        new Request(`${BASE}/v1/orders`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            authorization: `Bearer ${tokens.get(instance)}`,
          },
          body: JSON.stringify(newOrder),
        }),
      ).then((response) => response.json() as Promise<{ id: string }>)
    const ids = new Set<string>()
    for (let i = 0; i < 20; i += 1) {
      ids.add((await post(a)).id)
      ids.add((await post(b)).id)
    }
    expect(ids.size).toBe(40)
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]{1,64}$/) // the router's id pattern
  })
})
