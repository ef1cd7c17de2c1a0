import type { IncomingHttpHeaders, Server } from 'node:http'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { formatHttpDate } from '@api-blocks/conditional'
import { createVerifier } from '@api-blocks/webhook-signature'
import fc from 'fast-check'
import { Webhook } from 'standardwebhooks'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { AttemptResult } from './attempt.ts'
import { createRetryPolicy } from './retry-policy.ts'
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
/** Sockets of `/hang` requests that closed (the sender dropped them at its deadline). */
let hangsDropped = 0

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
      switch (path.split('?')[0]) {
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
          // Never answers; the close of the socket is counted.
          request.socket.once('close', () => hangsDropped++)
          return
        case '/early-hints':
          // RFC 8297: an interim 103 before the final answer.
          response.writeEarlyHints({ link: '</style.css>; rel=preload; as=style' })
          return response.end('after the hints')
        case '/exact':
          return response.end('y'.repeat(1024))
        case '/chunks':
          // Three writes a tick apart, so the body usually arrives in several chunks.
          response.writeHead(200, { 'content-type': 'text/plain' })
          response.write('one,')
          return setTimeout(() => {
            response.write('two,')
            setTimeout(() => response.end('three'), 5)
          }, 5)
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

  test('at the deadline the connection is dropped, not left to the receiver', async () => {
    const before = hangsDropped
    const { sender, close } = makeSender({ timeoutMs: 100 })
    const result = await sender.send({
      url: `${origin}/hang`,
      eventId: 'evt_1',
      payload,
      secrets: [secret],
    })
    expect(result).toMatchObject({ kind: 'failure', failure: 'timeout' })
    await expect.poll(() => hangsDropped).toBe(before + 1)
    // And the dispatcher has nothing left in flight: closing it does not wait for the receiver.
    await close()
  })

  test('attempts in flight together each get their own deadline, whatever order they settle in', async () => {
    // One sender's attempts share one timer: answered ones leave the list from its head, its
    // middle and its tail, and the ones that hang still time out.
    const { sender, close } = makeSender({ timeoutMs: 200 })
    const paths = ['/hang', '/ok', '/chunks', '/hang', '/no-content', '/hang', '/ok']
    const results = await Promise.all(
      paths.map((path, index) =>
        sender.send({
          url: `${origin}${path}`,
          eventId: `evt_${index}`,
          payload,
          secrets: [secret],
        }),
      ),
    )
    expect(
      results.map((result) => (result.kind === 'response' ? result.status : result.failure)),
    ).toEqual(['timeout', 200, 200, 'timeout', 204, 'timeout', 200])
    // The list emptied and the timer was cleared: a later attempt still gets its deadline.
    expect(
      await sender.send({ url: `${origin}/hang`, eventId: 'evt_9', payload, secrets: [secret] }),
    ).toMatchObject({
      failure: 'timeout',
    })
    expect(
      await sender.send({ url: `${origin}/ok`, eventId: 'evt_10', payload, secrets: [secret] }),
    ).toMatchObject({
      status: 200,
      body: 'thanks',
    })
    await close()
  })

  test('a deadline that passes while the connection is being made: a timeout, and the POST is never written', async () => {
    const before = received.length
    const port = new URL(origin).port
    let answered: () => void = () => {}
    const lookupAnswered = new Promise<void>((resolve) => {
      answered = resolve
    })
    // A resolver that answers once the attempt has timed out.
    let timedOut: () => void = () => {}
    const attemptTimedOut = new Promise<void>((resolve) => {
      timedOut = resolve
    })
    const guard = createSsrfGuard({
      allowedOrigins: [`http://slow-dns.test:${port}`],
      lookup: (_hostname, _options, callback) => {
        void attemptTimedOut.then(() => {
          callback(null, [{ address: '127.0.0.1', family: 4 }])
          answered()
        })
      },
    })
    const sender = createWebhookSender({ guard, timeoutMs: 100, clock: steppingClock() })
    const result = await sender.send({
      url: `http://slow-dns.test:${port}/ok`,
      eventId: 'evt_1',
      payload,
      secrets: [secret],
    })
    expect(result).toEqual({
      kind: 'failure',
      failure: 'timeout',
      message: 'No complete answer within 100 ms',
      latencyMs: 7,
    })
    timedOut()
    await lookupAnswered
    // Closing waits for the request undici still held: it starts on the new connection and is
    // aborted before a byte of it is written.
    await guard.close()
    expect(received.length).toBe(before)
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

  test('a body of exactly responseBodyBytes is read whole; one in several chunks is joined', async () => {
    expect(await sendTo('/exact')).toMatchObject({ status: 200, body: 'y'.repeat(1024) })
    expect(await sendTo('/chunks')).toMatchObject({ status: 200, body: 'one,two,three' })
    expect(await sendTo('/chunks', { responseBodyBytes: 6 })).toMatchObject({
      status: 200,
      body: 'one,tw',
    })
  })

  test('an interim 1xx answer is skipped: the final answer is reported', async () => {
    expect(await sendTo('/early-hints')).toEqual({
      kind: 'response',
      status: 200,
      retryAfterMs: null,
      body: 'after the hints',
      latencyMs: 7,
    })
  })

  test('a receiver URL sent to again is parsed once, an invalid one is refused every time', async () => {
    const { sender, close } = makeSender()
    for (let round = 0; round < 3; round += 1) {
      expect(
        await sender.send({
          url: `${origin}/ok?round=1`,
          eventId: 'evt_1',
          payload,
          secrets: [secret],
        }),
      ).toMatchObject({ status: 200 })
      expect(
        await sender.send({
          url: 'ftp://127.0.0.1/',
          eventId: 'evt_1',
          payload,
          secrets: [secret],
        }),
      ).toMatchObject({ failure: 'address-refused' })
    }
    // Past the cache's bound (256 URLs) every URL still goes where it says, query included.
    const before = received.length
    for (let index = 0; index < 300; index += 1) {
      await sender.send({
        url: `${origin}/ok?n=${index}`,
        eventId: 'evt_1',
        payload,
        secrets: [secret],
      })
    }
    await sender.send({ url: `${origin}/ok?n=0`, eventId: 'evt_1', payload, secrets: [secret] })
    expect(received.slice(before).map((seen) => seen.path)).toEqual([
      ...Array.from({ length: 300 }, (_, index) => `/ok?n=${index}`),
      '/ok?n=0',
    ])
    await close()
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
    // The attempt log says which check refused, never the address.
    const message = (result as { message: string }).message
    expect(message).toContain('URL_REFUSED')
    expect(message).toContain('(literal check)')
    expect(message).not.toContain('127.0.0.1')
    expect(received.length).toBe(before)
  })

  test('a name that resolves inside the network: address-refused, neither the address nor the name in the log', async () => {
    // The endpoint's owner controls their name; a CNAME can make it resolve any internal name.
    const guard = createSsrfGuard({
      lookup: (_hostname, _options, callback) =>
        callback(null, [{ address: '127.0.0.1', family: 4 }]),
    })
    const sender = createWebhookSender({ guard, clock: steppingClock() })
    const before = received.length
    const result = await sender.send({
      url: `http://hooks.owner.test:${new URL(origin).port}/ok`,
      eventId: 'evt_1',
      payload,
      secrets: [secret],
    })
    await guard.close()
    expect(result).toMatchObject({ kind: 'failure', failure: 'address-refused' })
    const message = (result as { message: string }).message
    expect(message).toContain('(lookup check)')
    expect(message).not.toContain('127.0.0.1')
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

  test('never throws: a delivery that cannot be signed is invalid-delivery, and nothing is sent', async () => {
    const { sender, close } = makeSender()
    const url = `${origin}/ok`
    const before = received.length
    for (const delivery of [
      { eventId: 'evt_1', secrets: [] },
      { eventId: 'evt_1', secrets: ['whsec_'] },
      { eventId: 'evt_1', secrets: ['not a secret'] },
      { eventId: 'bad id\n', secrets: [secret] },
      { eventId: '', secrets: [secret] },
    ]) {
      const result = await sender.send({ url, payload, ...delivery })
      expect(result).toMatchObject({ kind: 'failure', failure: 'invalid-delivery' })
      expect((result as { message: string }).message).toMatch(/^Not sent, it could not be signed/)
    }
    expect(received.length).toBe(before)
    await close()
  })

  test('the retry policy fails an invalid-delivery for good, at any attempt (retrying signs the same way)', async () => {
    const { sender, close } = makeSender()
    const result = await sender.send({
      url: `${origin}/ok`,
      eventId: 'evt_1',
      payload,
      secrets: [],
    })
    await close()
    expect(result).toMatchObject({ failure: 'invalid-delivery' })
    const policy = createRetryPolicy({ random: () => 0.5 })
    for (const attempt of [0, 1, policy.maxAttempts - 1]) {
      expect(policy.decide(result, attempt)).toEqual({ status: 'failed', disableEndpoint: false })
    }
    // A connection failure at the same attempt is retried (the test can fail).
    expect(policy.decide({ ...result, failure: 'connection' } as AttemptResult, 0)).toMatchObject({
      status: 'pending',
    })
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
    // Delay-seconds of any length (RFC 9110 §10.2.3: 1*DIGIT), capped at 10^9 seconds.
    ['999999999', 999_999_999_000],
    ['9999999999', 1e12],
    ['1'.repeat(400), 1e12],
    ['0000000000005', 5_000],
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
          fc.stringMatching(/^[0-9 ]{0,40}$/),
          fc.date().map((date) => date.toUTCString()),
        ),
        fc.integer({ min: 0, max: 253_402_300_799_000 }),
        (value, now) => {
          const delay = retryAfterMs(value, now)
          if (delay !== null) {
            expect(Number.isSafeInteger(delay)).toBe(true)
            expect(delay).toBeGreaterThanOrEqual(0)
          }
          // Digits alone are always read, however many.
          if (/^ *[0-9]+ *$/.test(value)) expect(delay).not.toBeNull()
        },
      ),
      { interruptAfterTimeLimit: 2000 },
    )
  })
})
