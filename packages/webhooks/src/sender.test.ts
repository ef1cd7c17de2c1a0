import type { IncomingHttpHeaders, Server } from 'node:http'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { formatHttpDate } from '@api-blocks/conditional'
import { createVerifier } from '@api-blocks/webhook-signature'
import fc from 'fast-check'
import { Webhook } from 'standardwebhooks'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createWebhookSender, retryAfterMs } from './sender.ts'
import { createSsrfGuard } from './ssrf/guard.ts'

const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
const oldSecret = 'whsec_dGhlIG9sZCBzZWNyZXQgb2YgdGhpcyBlbmRwb2ludA=='
const NOW = 1_764_460_800_000 // 2025-11-30T00:00:00Z

interface Received {
  method: string
  path: string
  headers: IncomingHttpHeaders
  body: Buffer
}

let server: Server
let origin: string
const received: Received[] = []
/** Sockets the server saw close before it finished its answer (the sender dropped them). */
let dropped = 0

beforeAll(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const path = request.url ?? '/'
      received.push({
        method: request.method ?? '',
        path,
        headers: request.headers,
        body: Buffer.concat(chunks),
      })
      switch (path) {
        case '/ok':
          return response.end('thanks')
        case '/no-content':
          response.statusCode = 204
          return response.end()
        case '/bad':
          response.statusCode = 400
          return response.end('{"error":"bad"}')
        case '/gone':
          response.statusCode = 410
          return response.end()
        case '/busy':
          response.writeHead(429, { 'retry-after': '120' })
          return response.end('slow down')
        case '/busy-date':
          response.writeHead(429, { 'retry-after': formatHttpDate(NOW + 90_000) })
          return response.end()
        case '/busy-nonsense':
          response.writeHead(503, { 'retry-after': 'soon' })
          return response.end()
        case '/error':
          response.statusCode = 500
          return response.end('oops')
        case '/hang':
          return // never answers
        case '/hang-body':
          response.writeHead(200, { 'content-length': '100' })
          return response.write('partial') // never finishes
        case '/reset':
          return request.socket.destroy()
        case '/redirect':
          response.writeHead(302, { location: `${origin}/ok` })
          return response.end('moved')
        case '/redirect-permanent':
          response.writeHead(308, { location: `${origin}/ok` })
          return response.end()
        case '/huge': {
          // Writes until the client goes away: a sender that read it all would never finish.
          response.writeHead(200, { 'content-type': 'text/plain' })
          const block = Buffer.alloc(64 * 1024, 'x')
          const pump = () => {
            while (!response.destroyed && response.write(block)) {}
            if (!response.destroyed) response.once('drain', pump)
          }
          response.on('close', () => {
            if (!response.writableFinished) dropped++
          })
          return pump()
        }
        case '/utf8':
          return response.end('é'.repeat(600)) // 1,200 bytes: the cut falls inside a character
        default:
          response.statusCode = 404
          return response.end()
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
})

/** A clock that moves 7 ms at every reading: latencies are exact. */
function steppingClock(start = NOW, step = 7) {
  let now = start - step
  return () => {
    now += step
    return now
  }
}

function makeSender(options: Parameters<typeof createWebhookSender>[0] = {}) {
  const guard = createSsrfGuard({ allowedOrigins: [origin] })
  const sender = createWebhookSender({ guard, clock: steppingClock(), ...options })
  return {
    sender,
    close: async () => {
      await sender.close()
      await guard.close()
    },
  }
}

const payload =
  '{"id":"evt_1","type":"order.created","created":1764460800,"version":"1","data":{"object":{"note":"é€😀"}}}'

async function sendTo(path: string, options: Parameters<typeof createWebhookSender>[0] = {}) {
  const { sender, close } = makeSender(options)
  try {
    return await sender.send({
      url: `${origin}${path}`,
      eventId: 'evt_1',
      payload,
      secrets: [secret],
    })
  } finally {
    await close()
  }
}

describe('createWebhookSender', () => {
  test('POSTs the payload bytes with Content-Type, User-Agent and the three webhook-* fields', async () => {
    const before = received.length
    const result = await sendTo('/ok')
    expect(result).toEqual({
      kind: 'response',
      status: 200,
      retryAfterMs: null,
      body: 'thanks',
      latencyMs: 7,
    })
    const [seen] = received.slice(before)
    expect(seen?.method).toBe('POST')
    expect(seen?.body.equals(Buffer.from(payload))).toBe(true)
    expect(seen?.headers['content-type']).toBe('application/json')
    expect(seen?.headers['user-agent']).toBe(
      'api-blocks-webhooks/1 (+https://github.com/api-blocks/api-blocks)',
    )
    expect(seen?.headers['webhook-id']).toBe('evt_1')
    expect(seen?.headers['webhook-timestamp']).toBe(String(NOW / 1000))
    expect(seen?.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/)
  })

  test('the receiver verifies it with @api-blocks/webhook-signature, either secret during a rotation', async () => {
    const before = received.length
    await sendTo('/ok', { clock: () => NOW })
    const { sender, close } = makeSender({ clock: () => NOW })
    await sender.send({
      url: `${origin}/ok`,
      eventId: 'evt_2',
      payload,
      secrets: [secret, oldSecret],
    })
    await close()
    const [one, two] = received.slice(before)
    for (const [seen, secrets] of [
      [one, [secret]],
      [two, [secret]],
      [two, [oldSecret]],
    ] as const) {
      const verifier = createVerifier({ secrets, clock: () => NOW })
      await expect(
        verifier.verify(seen!.headers as Record<string, string>, seen!.body),
      ).resolves.toEqual({
        id: seen!.headers['webhook-id'],
        timestamp: NOW / 1000,
      })
    }
    expect(String(two?.headers['webhook-signature']).split(' ')).toHaveLength(2)
    // And not with a secret it was not signed with.
    await expect(
      createVerifier({ secrets: oldSecret, clock: () => NOW }).verify(
        one!.headers as Record<string, string>,
        one!.body,
      ),
    ).rejects.toMatchObject({ code: 'SIGNATURE_MISMATCH' })
  })

  test('the receiver verifies it with the standardwebhooks package (real clock)', async () => {
    const before = received.length
    const result = await sendTo('/ok', { clock: Date.now })
    expect(result.kind).toBe('response')
    const [seen] = received.slice(before)
    const verified = new Webhook(secret).verify(seen!.body.toString('utf8'), {
      'webhook-id': String(seen!.headers['webhook-id']),
      'webhook-timestamp': String(seen!.headers['webhook-timestamp']),
      'webhook-signature': String(seen!.headers['webhook-signature']),
    })
    expect(verified).toEqual(JSON.parse(payload))
  })

  test('the timestamp-body scheme signs timestamp.body', async () => {
    const before = received.length
    await sendTo('/ok', { scheme: 'timestamp-body', clock: () => NOW })
    const [seen] = received.slice(before)
    const verifier = createVerifier({ secrets: secret, scheme: 'timestamp-body', clock: () => NOW })
    await expect(
      verifier.verify(seen!.headers as Record<string, string>, seen!.body),
    ).resolves.toBeTruthy()
  })

  test.each([
    ['/no-content', 204, ''],
    ['/bad', 400, '{"error":"bad"}'],
    ['/gone', 410, ''],
    ['/error', 500, 'oops'],
    ['/missing', 404, ''],
  ])('%s: the status and the body are reported', async (path, status, body) => {
    expect(await sendTo(path)).toEqual({
      kind: 'response',
      status,
      retryAfterMs: null,
      body,
      latencyMs: 7,
    })
  })

  test('429 with Retry-After in seconds', async () => {
    expect(await sendTo('/busy')).toMatchObject({
      status: 429,
      retryAfterMs: 120_000,
      body: 'slow down',
    })
  })

  test('429 with Retry-After as an HTTP-date, read against the clock at the answer', async () => {
    // The clock reads NOW at the start and NOW + 7 at the answer.
    expect(await sendTo('/busy-date')).toMatchObject({ status: 429, retryAfterMs: 90_000 - 7 })
  })

  test('a Retry-After that is neither form is null', async () => {
    expect(await sendTo('/busy-nonsense')).toMatchObject({ status: 503, retryAfterMs: null })
  })

  test('MUST NOT follow a redirect: the 3xx is the response', async () => {
    const before = received.length
    expect(await sendTo('/redirect')).toMatchObject({
      kind: 'response',
      status: 302,
      body: 'moved',
    })
    expect(await sendTo('/redirect-permanent')).toMatchObject({ kind: 'response', status: 308 })
    expect(received.slice(before).map((seen) => seen.path)).toEqual([
      '/redirect',
      '/redirect-permanent',
    ])
  })

  test('a receiver that never answers is a timeout at the deadline', async () => {
    expect(await sendTo('/hang', { timeoutMs: 150 })).toEqual({
      kind: 'failure',
      failure: 'timeout',
      message: 'No complete answer within 150 ms',
      latencyMs: 7,
    })
  })

  test('the deadline covers the body: headers then silence is a timeout', async () => {
    expect(await sendTo('/hang-body', { timeoutMs: 150 })).toMatchObject({
      kind: 'failure',
      failure: 'timeout',
    })
  })

  test('a reset connection is a connection failure', async () => {
    const result = await sendTo('/reset')
    expect(result).toMatchObject({ kind: 'failure', failure: 'connection', latencyMs: 7 })
    expect((result as { message: string }).message).not.toBe('')
  })

  test('a closed port is a connection failure', async () => {
    const closed = createServer()
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/`
    await new Promise((resolve) => closed.close(resolve))
    const guard = createSsrfGuard({ allowedOrigins: [new URL(url).origin] })
    const sender = createWebhookSender({ guard, clock: steppingClock() })
    const result = await sender.send({ url, eventId: 'evt_1', payload, secrets: [secret] })
    await guard.close()
    expect(result).toMatchObject({ kind: 'failure', failure: 'connection' })
    expect((result as { message: string }).message).toContain('ECONNREFUSED')
  })

  test('a huge body is cut at responseBodyBytes and the connection dropped, not read', async () => {
    const before = dropped
    const result = await sendTo('/huge', { timeoutMs: 5_000 })
    expect(result).toMatchObject({ kind: 'response', status: 200 })
    expect((result as { body: string }).body).toBe('x'.repeat(1024))
    await expect.poll(() => dropped).toBe(before + 1)
  })

  test('responseBodyBytes sets the cut; a cut inside a character decodes to U+FFFD', async () => {
    const result = await sendTo('/utf8', { responseBodyBytes: 5 })
    expect((result as { body: string }).body).toBe('éé\uFFFD')
    expect(await sendTo('/ok', { responseBodyBytes: 0 })).toMatchObject({ status: 200, body: '' })
  })

  test('an address the guard refuses is address-refused, and nothing is sent', async () => {
    const before = received.length
    const guard = createSsrfGuard() // 127.0.0.1 not allowed
    const sender = createWebhookSender({ guard, clock: steppingClock() })
    const result = await sender.send({
      url: `${origin}/ok`,
      eventId: 'evt_1',
      payload,
      secrets: [secret],
    })
    await guard.close()
    expect(result).toMatchObject({ kind: 'failure', failure: 'address-refused', latencyMs: 7 })
    expect((result as { message: string }).message).toContain('127.0.0.1')
    expect(received.length).toBe(before)
  })

  test('the default guard refuses loopback', async () => {
    const sender = createWebhookSender({ clock: steppingClock() })
    const result = await sender.send({
      url: `${origin}/ok`,
      eventId: 'evt_1',
      payload,
      secrets: [secret],
    })
    await sender.close()
    expect(result).toMatchObject({ kind: 'failure', failure: 'address-refused' })
  })

  test.each([['ftp://127.0.0.1/'], ['not a url'], ['http://user:pass@example.com/']])(
    '%s is address-refused without a connection',
    async (url) => {
      const { sender, close } = makeSender()
      const result = await sender.send({ url, eventId: 'evt_1', payload, secrets: [secret] })
      await close()
      expect(result).toMatchObject({ kind: 'failure', failure: 'address-refused' })
    },
  )

  test('never throws: no secrets or a bad id is a failure value', async () => {
    const { sender, close } = makeSender()
    const url = `${origin}/ok`
    await expect(
      sender.send({ url, eventId: 'evt_1', payload, secrets: [] }),
    ).resolves.toMatchObject({
      kind: 'failure',
      failure: 'connection',
    })
    await expect(
      sender.send({ url, eventId: 'bad id\n', payload, secrets: [secret] }),
    ).resolves.toMatchObject({ kind: 'failure', failure: 'connection' })
    await close()
  })

  test('options are checked at construction', () => {
    expect(() => createWebhookSender({ timeoutMs: 0 })).toThrow(RangeError)
    expect(() => createWebhookSender({ responseBodyBytes: -1 })).toThrow(RangeError)
  })
})

describe('retryAfterMs', () => {
  test.each([
    ['0', 0],
    ['120', 120_000],
    [' 5 ', 5_000],
    [formatHttpDate(NOW + 60_000), 60_000],
    [formatHttpDate(NOW - 60_000), 0],
    ['Sunday, 30-Nov-25 00:01:00 GMT', 60_000],
    ['Sun Nov 30 00:01:00 2025', 60_000],
    ['-1', null],
    ['1.5', null],
    ['soon', null],
    ['', null],
    ['9999999999', null],
  ])('%j → %j', (value, expected) => {
    expect(retryAfterMs(value, NOW)).toBe(expected)
  })

  test('absent or repeated is null', () => {
    expect(retryAfterMs(undefined, NOW)).toBeNull()
    expect(retryAfterMs(['1', '2'], NOW)).toBeNull()
  })
})

describe('retryAfterMs (properties)', () => {
  test('never throws; null or a whole, non-negative number of milliseconds', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.stringMatching(/^[0-9 ]{0,12}$/),
          fc.date().map((date) => date.toUTCString()),
        ),
        fc.integer({ min: 0, max: 253_402_300_799_000 }),
        (value, now) => {
          const delay = retryAfterMs(value, now)
          if (delay !== null) {
            expect(Number.isSafeInteger(delay)).toBe(true)
            expect(delay).toBeGreaterThanOrEqual(0)
          }
        },
      ),
      { interruptAfterTimeLimit: 2000 },
    )
  })
})
