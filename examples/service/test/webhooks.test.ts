// The service's webhooks end to end, over real sockets: a token from the service's own
// authorisation server, endpoints registered over the API, orders written, and a real receiver
// on 127.0.0.1 (allowed through WEBHOOK_ALLOWED_PRIVATE_ORIGINS) that gets each event signed:
// verified by @api-blocks/webhook-signature and by the `standardwebhooks` package.
import { createHash } from 'node:crypto'
import { createVerifier } from '@api-blocks/webhook-signature'
import { Webhook } from 'standardwebhooks'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { DEMO_CLIENTS } from '../src/auth/accounts.ts'
import { clientCredentialsToken } from './oauth-client.ts'
import type { RunningService } from './serve-on-stores.ts'
import { serveOnStores } from './serve-on-stores.ts'
import type { ReceivedRequest, TestReceiver } from './webhook-receivers.ts'
import { eventOf, startTestReceiver } from './webhook-receivers.ts'

const OTHER = { id: 'other-backend', secret: 'other-backend-secret' }
const ALL = 'read:orders write:orders manage:webhooks'
const order = { customer: 'Ada Lovelace', items: [{ sku: 'BOOK-042', quantity: 2 }] }

let receiver: TestReceiver
let running: RunningService
let strict: RunningService
let token: string

beforeAll(async () => {
  receiver = await startTestReceiver()
  const service = {
    rateLimits: [{ name: 'tests', quota: 1_000_000, windowSeconds: 1 }],
    oauth: {
      clients: [
        ...DEMO_CLIENTS,
        {
          id: OTHER.id,
          secretHashes: [createHash('sha256').update(OTHER.secret).digest('base64url')],
          grantTypes: ['client_credentials' as const],
          scopes: ['read:orders', 'write:orders', 'manage:webhooks'],
        },
      ],
    },
  }
  running = await serveOnStores(
    {},
    {
      service,
      webhooks: {
        settings: {
          retry: { baseMs: 5, maxMs: 20, maxAttempts: 3 },
          timeoutMs: 2_000,
          allowedOrigins: [receiver.origin],
        },
        pollIntervalMs: 20,
      },
    },
  )
  // The same service without the allow-list: loopback receivers are refused.
  strict = await serveOnStores({}, { service })
  token = await clientCredentialsToken(fetch, running.base, ALL)
})

afterAll(async () => {
  await running?.close()
  await strict?.close()
  await receiver?.close()
})

function call(
  base: string,
  path: string,
  init: { method?: string; body?: unknown; token?: string | null } = {},
): Promise<Response> {
  const headers = new Headers()
  const bearer = init.token === undefined ? token : init.token
  if (bearer !== null) headers.set('authorization', `Bearer ${bearer}`)
  if (init.body !== undefined) headers.set('content-type', 'application/json')
  return fetch(`${base}${path}`, {
    method: init.method ?? 'GET',
    headers,
    ...(init.body !== undefined
      ? { body: typeof init.body === 'string' ? init.body : JSON.stringify(init.body) }
      : {}),
  })
}

interface Created {
  id: string
  url: string
  events: string[] | null
  status: string
  secret: string
  created_at: string
}

async function register(url: string, events?: string[]): Promise<Created> {
  const response = await call(running.base, '/v1/webhook_endpoints', {
    method: 'POST',
    body: { url, ...(events ? { events } : {}) },
  })
  const body = await response.json()
  expect(response.status, JSON.stringify(body)).toBe(201)
  return body as Created
}

async function createOrder(): Promise<{ id: string; version: number }> {
  const response = await call(running.base, '/v1/orders', { method: 'POST', body: order })
  expect(response.status).toBe(201)
  return (await response.json()) as { id: string; version: number }
}

/** The deliveries to `path` of the event about `orderId` of `type`. */
const about =
  (path: string, type: string, orderId: string) =>
  (request: ReceivedRequest): boolean =>
    request.path === path &&
    eventOf(request).type === type &&
    eventOf(request).data.object['id'] === orderId

function verifyBoth(request: ReceivedRequest, secret: string): void {
  // Theirs: throws when no signature verifies.
  const verified = new Webhook(secret).verify(request.body, request.headers) as { id: string }
  expect(verified.id).toBe(eventOf(request).id)
}

describe('registering an endpoint', () => {
  test('201 with id, url, events, status and the secret, shown once; GET shows no secret', async () => {
    const created = await register(`${receiver.origin}/ok`, ['order.created'])
    expect(created).toMatchObject({
      url: `${receiver.origin}/ok`,
      events: ['order.created'],
      status: 'enabled',
    })
    expect(created.id).toMatch(/^we_[A-Za-z0-9_-]+$/)
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    const read = await call(running.base, `/v1/webhook_endpoints/${created.id}`)
    expect(read.status).toBe(200)
    expect(read.headers.get('cache-control')).toBe('private, no-store')
    const body = await read.json()
    expect(body).not.toHaveProperty('secret')
    expect(JSON.stringify(body)).not.toContain(created.secret.slice(6))
    const { secret: _, ...shown } = created
    expect(body).toEqual(shown)
    // events absent: every type (null).
    expect((await register(`${receiver.origin}/ok`)).events).toBeNull()
  })

  test('the list envelope, ids ascending, paged with a signed cursor and Link', async () => {
    const other = await clientCredentialsToken(fetch, running.base, ALL, OTHER)
    const ids: string[] = []
    for (let index = 0; index < 3; index += 1) {
      const response = await call(running.base, '/v1/webhook_endpoints', {
        method: 'POST',
        token: other,
        body: { url: `${receiver.origin}/ok` },
      })
      ids.push(((await response.json()) as Created).id)
    }
    const first = await call(running.base, '/v1/webhook_endpoints?limit=2', { token: other })
    const page = await first.json()
    expect(page.data.map((endpoint: Created) => endpoint.id)).toEqual([...ids].sort().slice(0, 2))
    expect(page.has_more).toBe(true)
    expect(first.headers.get('link')).toContain('rel="next"')
    const second = await (
      await call(
        running.base,
        `/v1/webhook_endpoints?limit=2&after=${encodeURIComponent(page.next_cursor)}`,
        { token: other },
      )
    ).json()
    expect(second).toMatchObject({ has_more: false, next_cursor: null })
    expect(second.data.map((endpoint: Created) => endpoint.id)).toEqual([...ids].sort().slice(2))
    // Another principal's cursor lists nothing of its own: refused.
    const foreign = await call(
      running.base,
      `/v1/webhook_endpoints?after=${encodeURIComponent(page.next_cursor)}`,
    )
    expect(foreign.status).toBe(400)
  })

  test('bodies are validated: problems with pointers', async () => {
    const cases: [unknown, number, string | undefined][] = [
      ['{"url":', 400, undefined],
      [{}, 422, '/url'],
      [{ url: 42 }, 422, '/url'],
      [{ url: `${receiver.origin}/ok`, events: ['order.shipped'] }, 422, '/events/0'],
      [{ url: `${receiver.origin}/ok`, events: [] }, 422, '/events'],
      [
        { url: `${receiver.origin}/ok`, events: ['order.created', 'order.created'] },
        422,
        '/events',
      ],
      [{ url: `${receiver.origin}/ok`, secret: 'mine' }, 422, undefined],
      [{ url: 'ftp://hooks.example.com/x' }, 422, '/url'],
      [{ url: 'https://user:pass@hooks.example.com/x' }, 422, '/url'],
      [{ url: `https://hooks.example.com/${'x'.repeat(2048)}` }, 422, '/url'],
    ]
    for (const [body, status, pointer] of cases) {
      const response = await call(running.base, '/v1/webhook_endpoints', { method: 'POST', body })
      const problem = await response.json()
      expect(response.status, JSON.stringify(body).slice(0, 100)).toBe(status)
      expect(response.headers.get('content-type')).toBe('application/problem+json')
      if (pointer) {
        expect(problem.errors.map((error: { pointer: string }) => error.pointer)).toContain(pointer)
      }
    }
    // The body limit of every route.
    const large = await call(running.base, '/v1/webhook_endpoints', {
      method: 'POST',
      body: { url: `${receiver.origin}/ok`, pad: 'x'.repeat(70 * 1024) },
    })
    expect(large.status).toBe(413)
  })

  test('a URL the SSRF guard refuses is a 422 problem pointing at /url', async () => {
    const strictToken = await clientCredentialsToken(fetch, strict.base, ALL)
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'http://127.0.0.1:1/',
      'http://localhost/',
      'http://[::1]/',
      'http://10.0.0.8/hooks',
      'http://[::ffff:127.0.0.1]/',
      'http://2130706433/',
      // Allowed on the other service, not here.
      `${receiver.origin}/ok`,
    ]) {
      const response = await call(strict.base, '/v1/webhook_endpoints', {
        method: 'POST',
        token: strictToken,
        body: { url },
      })
      const problem = await response.json()
      expect(response.status, url).toBe(422)
      expect(problem.errors[0].pointer, url).toBe('/url')
    }
    // With the allow-list, only the exact origin passes: another loopback port does not.
    const port = Number(new URL(receiver.origin).port)
    const elsewhere = await call(running.base, '/v1/webhook_endpoints', {
      method: 'POST',
      body: { url: `http://127.0.0.1:${port === 65_535 ? port - 1 : port + 1}/ok` },
    })
    expect(elsewhere.status).toBe(422)
  })

  test('401 without a token, 403 without manage:webhooks (a registration without read:orders), 404 for another principal’s endpoint', async () => {
    const noToken = await call(running.base, '/v1/webhook_endpoints', { token: null })
    expect(noToken.status).toBe(401)
    expect(noToken.headers.get('www-authenticate')).toMatch(/^Bearer/)
    const ordersOnly = await clientCredentialsToken(fetch, running.base, 'read:orders write:orders')
    for (const [method, path] of [
      ['GET', '/v1/webhook_endpoints'],
      ['POST', '/v1/webhook_endpoints'],
    ] as const) {
      const response = await call(running.base, path, {
        method,
        token: ordersOnly,
        ...(method === 'POST' ? { body: { url: `${receiver.origin}/ok` } } : {}),
      })
      expect(response.status, `${method} ${path}`).toBe(403)
      expect(response.headers.get('www-authenticate')).toContain('insufficient_scope')
    }
    // manage:webhooks alone manages endpoints but cannot register one: an endpoint receives
    // every order's events, which GET /v1/orders refuses without read:orders.
    const webhooksOnly = await clientCredentialsToken(fetch, running.base, 'manage:webhooks')
    expect((await call(running.base, '/v1/orders', { token: webhooksOnly })).status).toBe(403)
    expect(
      (await call(running.base, '/v1/webhook_endpoints', { token: webhooksOnly })).status,
    ).toBe(200)
    const refused = await call(running.base, '/v1/webhook_endpoints', {
      method: 'POST',
      token: webhooksOnly,
      body: { url: `${receiver.origin}/spy` },
    })
    expect(refused.status).toBe(403)
    expect(refused.headers.get('content-type')).toBe('application/problem+json')
    expect(refused.headers.get('www-authenticate')).toMatch(
      /error="insufficient_scope", .*scope="manage:webhooks read:orders"$/,
    )
    const withRead = await clientCredentialsToken(
      fetch,
      running.base,
      'manage:webhooks read:orders',
    )
    const registered = await call(running.base, '/v1/webhook_endpoints', {
      method: 'POST',
      token: withRead,
      body: { url: `${receiver.origin}/ok` },
    })
    expect(registered.status).toBe(201)
    const { id } = (await registered.json()) as Created
    expect(
      (await call(running.base, `/v1/webhook_endpoints/${id}`, { method: 'DELETE' })).status,
    ).toBe(204)
    const mine = await register(`${receiver.origin}/ok`)
    const other = await clientCredentialsToken(fetch, running.base, ALL, OTHER)
    for (const [method, path] of [
      ['GET', `/v1/webhook_endpoints/${mine.id}`],
      ['DELETE', `/v1/webhook_endpoints/${mine.id}`],
      ['POST', `/v1/webhook_endpoints/${mine.id}/rotate_secret`],
      ['GET', `/v1/webhook_endpoints/${mine.id}/deliveries`],
      ['POST', `/v1/webhook_endpoints/${mine.id}/deliveries/evt_x/redeliver`],
    ] as const) {
      const response = await call(running.base, path, { method, token: other })
      expect(response.status, `${method} ${path}`).toBe(404)
      expect(response.headers.get('content-type')).toBe('application/problem+json')
    }
    // Nor does it list it.
    const listed = await (
      await call(running.base, '/v1/webhook_endpoints?limit=100', { token: other })
    ).json()
    expect(listed.data.map((endpoint: Created) => endpoint.id)).not.toContain(mine.id)
    // The owner still has it.
    expect((await call(running.base, `/v1/webhook_endpoints/${mine.id}`)).status).toBe(200)
  })
})

describe('order events', () => {
  test('created, updated, cancelled and deleted reach the receiver, signed, verifiable by both libraries', async () => {
    const endpoint = await register(`${receiver.origin}/ok?flow`)
    const ours = createVerifier({ secrets: endpoint.secret })
    const created = await createOrder()
    const createdEvent = await receiver.waitFor(about('/ok?flow', 'order.created', created.id))
    verifyBoth(createdEvent, endpoint.secret)
    const verified = await ours.verify(
      createdEvent.headers,
      new TextEncoder().encode(createdEvent.body),
    )
    const envelope = eventOf(createdEvent)
    expect(verified.id).toBe(envelope.id)
    expect(createdEvent.headers['webhook-id']).toBe(envelope.id)
    expect(createdEvent.headers['content-type']).toBe('application/json')
    expect(envelope).toMatchObject({ type: 'order.created', version: '1' })
    expect(envelope.id).toMatch(/^evt_/)
    expect(Math.abs(envelope.created - Date.now() / 1000)).toBeLessThan(600)
    // Fat: the order as the API shows it.
    const shown = await (await call(running.base, `/v1/orders/${created.id}`)).json()
    expect(envelope.data.object).toEqual(shown)

    const patched = await call(running.base, `/v1/orders/${created.id}`, {
      method: 'PATCH',
      body: { note: 'Gift wrap' },
    })
    expect(patched.status).toBe(428) // writes need If-Match
    const withTag = await fetch(`${running.base}/v1/orders/${created.id}`, {
      method: 'PATCH',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        'if-match': '"1"',
      },
      body: JSON.stringify({ note: 'Gift wrap' }),
    })
    expect(withTag.status).toBe(200)
    const updated = await receiver.waitFor(about('/ok?flow', 'order.updated', created.id))
    verifyBoth(updated, endpoint.secret)
    expect(eventOf(updated).data.object).toMatchObject({ note: 'Gift wrap', version: 2 })

    const cancel = await call(running.base, `/v1/orders/${created.id}/cancel`, { method: 'POST' })
    expect(cancel.status).toBe(202)
    const cancelled = await receiver.waitFor(about('/ok?flow', 'order.cancelled', created.id))
    expect(eventOf(cancelled).data.object).toMatchObject({ status: 'cancelled' })

    const current = await (await call(running.base, `/v1/orders/${created.id}`)).json()
    const deleted = await fetch(`${running.base}/v1/orders/${created.id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${token}`, 'if-match': `"${current.version}"` },
    })
    expect(deleted.status).toBe(204)
    const gone = await receiver.waitFor(about('/ok?flow', 'order.deleted', created.id))
    expect(eventOf(gone).data.object).toEqual(current)
    // Four distinct events, each delivered once to this endpoint so far.
    const mine = receiver.received.filter(
      (request) => request.path === '/ok?flow' && eventOf(request).data.object['id'] === created.id,
    )
    const ids = new Set(mine.map((request) => request.headers['webhook-id']))
    expect(ids.size).toBe(4)
  })

  test('an endpoint receives only the types it selected', async () => {
    const selective = await register(`${receiver.origin}/ok?selective`, ['order.deleted'])
    const everyType = await register(`${receiver.origin}/ok?every`)
    expect(everyType.events).toBeNull()
    const created = await createOrder()
    // One publish enqueues the event for every subscribed endpoint at once: once one has it,
    // the other would have it queued too if it had selected the type.
    await receiver.waitFor(about('/ok?every', 'order.created', created.id))
    const path = `/v1/webhook_endpoints/${selective.id}/deliveries`
    expect((await (await call(running.base, path)).json()).data).toEqual([])
    expect(receiver.received.some((request) => request.path === '/ok?selective')).toBe(false)
  })
})

describe('secrets, deliveries and redelivery', () => {
  test('rotate_secret: 200 with a new secret; deliveries then carry two signatures, each secret verifies', async () => {
    const endpoint = await register(`${receiver.origin}/ok?rotated`)
    const rotated = await call(running.base, `/v1/webhook_endpoints/${endpoint.id}/rotate_secret`, {
      method: 'POST',
    })
    expect(rotated.status).toBe(200)
    const body = (await rotated.json()) as Created
    expect(body.id).toBe(endpoint.id)
    expect(body.secret).toMatch(/^whsec_/)
    expect(body.secret).not.toBe(endpoint.secret)
    const created = await createOrder()
    const delivery = await receiver.waitFor(about('/ok?rotated', 'order.created', created.id))
    const signatures = delivery.headers['webhook-signature']?.split(' ') ?? []
    expect(signatures).toHaveLength(2)
    for (const signature of signatures) expect(signature).toMatch(/^v1,/)
    // Theirs, with the old secret alone and the new one alone.
    verifyBoth(delivery, endpoint.secret)
    verifyBoth(delivery, body.secret)
    // Ours, likewise.
    for (const secret of [endpoint.secret, body.secret]) {
      await createVerifier({ secrets: secret }).verify(delivery.headers, delivery.body)
    }
    // A secret never issued verifies nothing.
    expect(() =>
      new Webhook('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwJLuSb2H8z5A=').verify(
        delivery.body,
        delivery.headers,
      ),
    ).toThrow()
  })

  test('deliveries list each event with its status and attempts; redeliver sends the same webhook-id again', async () => {
    const endpoint = await register(`${receiver.origin}/ok?log`)
    const orders = [await createOrder(), await createOrder(), await createOrder()]
    for (const created of orders) {
      await receiver.waitFor(about('/ok?log', 'order.created', created.id))
    }
    const path = `/v1/webhook_endpoints/${endpoint.id}/deliveries`
    // Settled just after the receiver answered: wait for the log to say so.
    let page: {
      data: {
        event_id: string
        event_type: string
        status: string
        attempt_count: number
        attempts: { status_code: number; latency_ms: number; attempt: number }[]
      }[]
      has_more: boolean
      next_cursor: string | null
    }
    const deadline = Date.now() + 10_000
    do {
      page = await (await call(running.base, `${path}?limit=2`)).json()
      if (page.data.every((delivery) => delivery.status === 'succeeded')) break
      await new Promise((resolve) => setTimeout(resolve, 20))
    } while (Date.now() < deadline)
    expect(page.data).toHaveLength(2)
    expect(page.has_more).toBe(true)
    for (const delivery of page.data) {
      expect(delivery).toMatchObject({
        event_type: 'order.created',
        status: 'succeeded',
        attempt_count: 1,
      })
      expect(delivery.attempts).toHaveLength(1)
      expect(delivery.attempts[0]).toMatchObject({ attempt: 0, status_code: 200 })
      expect(delivery.attempts[0]?.latency_ms).toBeGreaterThanOrEqual(0)
    }
    const rest = await (
      await call(running.base, `${path}?limit=2&after=${encodeURIComponent(page.next_cursor!)}`)
    ).json()
    expect(rest).toMatchObject({ has_more: false, next_cursor: null })
    // Newest event first; every event once.
    const listed = [...page.data, ...rest.data].map((delivery) => delivery.event_id)
    const sent = receiver.received
      .filter((request) => request.path === '/ok?log')
      .map((request) => request.headers['webhook-id'])
    expect(new Set(listed)).toEqual(new Set(sent))
    expect(listed).toHaveLength(3)
    expect((await call(running.base, `${path}?status=dead`)).status).toBe(200)
    expect((await call(running.base, `${path}?status=lost`)).status).toBe(400)

    // Redeliver the oldest: 202, then the same webhook-id and body again.
    const oldest = rest.data[0].event_id as string
    const before = receiver.received.length
    const first = receiver.received.find((request) => request.headers['webhook-id'] === oldest)!
    const redelivered = await call(running.base, `${path}/${oldest}/redeliver`, { method: 'POST' })
    expect(redelivered.status).toBe(202)
    expect(await redelivered.json()).toMatchObject({ event_id: oldest, status: 'pending' })
    const again = await receiver.waitFor((request) => request.headers['webhook-id'] === oldest, {
      from: before,
    })
    expect(again.body).toBe(first.body)
    verifyBoth(again, endpoint.secret)
    const unknown = await call(running.base, `${path}/evt_unknown/redeliver`, { method: 'POST' })
    expect(unknown.status).toBe(404)
  })

  test('a receiver that answers 500 ends dead after WEBHOOK_MAX_ATTEMPTS, every attempt logged', async () => {
    const endpoint = await register(`${receiver.origin}/fail`)
    const created = await createOrder()
    const path = `/v1/webhook_endpoints/${endpoint.id}/deliveries`
    let delivery: { status: string; attempt_count: number; attempts: { status_code: number }[] }
    const deadline = Date.now() + 15_000
    do {
      const page = await (await call(running.base, path)).json()
      delivery = page.data[0]
      if (delivery?.status === 'dead') break
      await new Promise((resolve) => setTimeout(resolve, 20))
    } while (Date.now() < deadline)
    expect(delivery).toMatchObject({ status: 'dead', attempt_count: 3 })
    expect(delivery.attempts.map((attempt) => attempt.status_code)).toEqual([500, 500, 500])
    const tries = receiver.received.filter(about('/fail', 'order.created', created.id))
    expect(tries).toHaveLength(3)
    // One event, one webhook-id, three attempts.
    expect(new Set(tries.map((request) => request.headers['webhook-id'])).size).toBe(1)
  })

  test('DELETE removes the endpoint: 204, then 404', async () => {
    const endpoint = await register(`${receiver.origin}/ok?deleted`)
    const deleted = await call(running.base, `/v1/webhook_endpoints/${endpoint.id}`, {
      method: 'DELETE',
    })
    expect(deleted.status).toBe(204)
    expect((await call(running.base, `/v1/webhook_endpoints/${endpoint.id}`)).status).toBe(404)
    expect(
      (await call(running.base, `/v1/webhook_endpoints/${endpoint.id}`, { method: 'DELETE' }))
        .status,
    ).toBe(404)
  })

  test('the Idempotency-Key is not honoured here: the answer holds a secret that would be stored', async () => {
    const send = () =>
      fetch(`${running.base}/v1/webhook_endpoints`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'idempotency-key': 'same-key',
        },
        body: JSON.stringify({ url: `${receiver.origin}/ok?keyed` }),
      })
    const [first, second] = [await send(), await send()]
    expect(second.headers.get('idempotent-replayed')).toBeNull()
    expect(((await first.json()) as Created).id).not.toBe(((await second.json()) as Created).id)
  })
})

describe('the receiver’s answers decide the delivery (docs/spec.md §3.1)', () => {
  test('410 fails the delivery and disables the endpoint; a receiver past WEBHOOK_TIMEOUT_MS times out', async () => {
    // A service with a short deadline, for the hanging receiver.
    const quick = await serveOnStores(
      {},
      {
        service: { rateLimits: [{ name: 'tests', quota: 1_000_000, windowSeconds: 1 }] },
        webhooks: {
          settings: {
            retry: { baseMs: 5, maxMs: 20, maxAttempts: 2 },
            timeoutMs: 200,
            allowedOrigins: [receiver.origin],
          },
          pollIntervalMs: 20,
        },
      },
    )
    try {
      const bearer = await clientCredentialsToken(fetch, quick.base, ALL)
      const send = (path: string, method = 'GET', body?: unknown) =>
        fetch(`${quick.base}${path}`, {
          method,
          headers: {
            authorization: `Bearer ${bearer}`,
            ...(body ? { 'content-type': 'application/json' } : {}),
          },
          ...(body ? { body: JSON.stringify(body) } : {}),
        })
      const gone = (await (
        await send('/v1/webhook_endpoints', 'POST', { url: `${receiver.origin}/gone` })
      ).json()) as Created
      const hang = (await (
        await send('/v1/webhook_endpoints', 'POST', { url: `${receiver.origin}/hang` })
      ).json()) as Created
      expect((await send('/v1/orders', 'POST', order)).status).toBe(201)
      const settled = async (id: string, status: string) => {
        const deadline = Date.now() + 10_000
        for (;;) {
          const page = await (await send(`/v1/webhook_endpoints/${id}/deliveries`)).json()
          if (page.data[0]?.status === status || Date.now() > deadline) return page.data[0]
          await new Promise((resolve) => setTimeout(resolve, 20))
        }
      }
      expect(await settled(gone.id, 'failed')).toMatchObject({
        status: 'failed',
        attempt_count: 1,
        attempts: [{ status_code: 410 }],
      })
      expect(await (await send(`/v1/webhook_endpoints/${gone.id}`)).json()).toMatchObject({
        status: 'disabled',
        disabled_reason: 'gone',
      })
      const timedOut = await settled(hang.id, 'dead')
      expect(timedOut).toMatchObject({ status: 'dead', attempt_count: 2 })
      expect(timedOut.attempts.map((attempt: { failure: string }) => attempt.failure)).toEqual([
        'timeout',
        'timeout',
      ])
      for (const attempt of timedOut.attempts as { latency_ms: number; status_code: null }[]) {
        expect(attempt.status_code).toBeNull()
      }
    } finally {
      await quick.close()
    }
  })
})
