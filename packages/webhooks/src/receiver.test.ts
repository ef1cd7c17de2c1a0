import type { Server } from 'node:http'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { toNodeListener } from '@api-blocks/node'
import { createSigner } from '@api-blocks/webhook-signature'
import fc from 'fast-check'
import { afterEach, describe, expect, test, vi } from 'vitest'
import type { DedupStore } from './dedup-store.ts'
import type { WebhookEvent } from './event.ts'
import { createEvent } from './event.ts'
import { MemoryDedupStore } from './memory/dedup-store.ts'
import type { WebhookContext, WebhookReceiverOptions } from './receiver.ts'
import { createWebhookReceiver } from './receiver.ts'
import { createWebhookSender } from './sender.ts'
import { createSsrfGuard } from './ssrf/guard.ts'

const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
const newSecret = 'whsec_bmV3IHNlY3JldCBhZnRlciB0aGUgcm90YXRpb24h'
const NOW = 1_764_460_800_000
const clock = () => NOW
const url = 'https://receiver.example/hooks'

const event = createEvent(
  { type: 'order.created', object: { id: 'ord_1', status: 'open' }, id: 'evt_1' },
  { clock },
)

async function delivery(
  options: {
    body?: string | Uint8Array
    id?: string
    timestamp?: number
    secrets?: string[]
    headers?: Record<string, string>
    method?: string
  } = {},
): Promise<Request> {
  const body = options.body ?? JSON.stringify(event)
  const signed = await createSigner({ secrets: options.secrets ?? [secret] }).sign({
    id: options.id ?? event.id,
    timestamp: options.timestamp ?? NOW / 1000,
    body,
  })
  return new Request(url, {
    method: options.method ?? 'POST',
    headers: { 'content-type': 'application/json', ...signed, ...options.headers },
    body: body as BodyInit,
  })
}

/** A receiver whose handler tasks wait until `run()`: "after the answer" made observable. */
function makeReceiver(overrides: Partial<WebhookReceiverOptions> = {}) {
  const tasks: (() => Promise<void>)[] = []
  const handled: [WebhookEvent, WebhookContext][] = []
  const errors: unknown[] = []
  const dedup = new MemoryDedupStore({ clock })
  const receiver = createWebhookReceiver({
    secrets: secret,
    clock,
    dedup,
    handler: (received, context) => {
      handled.push([received, context])
    },
    schedule: (task) => tasks.push(task),
    onError: (error) => errors.push(error),
    ...overrides,
  })
  return {
    receiver,
    handled,
    errors,
    dedup,
    tasks,
    async run() {
      while (tasks.length > 0) await tasks.shift()!()
    },
  }
}

async function problemOf(response: Response) {
  expect(response.headers.get('content-type')).toBe('application/problem+json')
  return (await response.json()) as { type: string; status: number; detail?: string }
}

describe('createWebhookReceiver', () => {
  test('a valid delivery answers 200 at once; the handler runs after, with the event and its id', async () => {
    const { receiver, handled, run } = makeReceiver()
    const response = await receiver.handle(await delivery())
    expect(response.status).toBe(200)
    expect(handled).toEqual([]) // not yet: after the answer
    await run()
    expect(handled).toEqual([[event, { id: 'evt_1', timestamp: NOW / 1000 }]])
  })

  test('by default the handler runs after the answer on a timer', async () => {
    const handled: string[] = []
    const receiver = createWebhookReceiver({
      secrets: secret,
      clock,
      handler: (received) => {
        handled.push(received.id)
      },
    })
    expect((await receiver.handle(await delivery())).status).toBe(200)
    expect(handled).toEqual([])
    await vi.waitFor(() => expect(handled).toEqual(['evt_1']))
  })

  test('MUST answer a repeated webhook-id 2xx without running the handler again', async () => {
    const { receiver, handled, run } = makeReceiver()
    for (let i = 0; i < 3; i++) {
      expect((await receiver.handle(await delivery({ timestamp: NOW / 1000 + i }))).status).toBe(
        200,
      )
    }
    await run()
    expect(handled).toHaveLength(1)
  })

  test('50 concurrent deliveries of one id run the handler once', async () => {
    const { receiver, handled, run } = makeReceiver()
    const requests = await Promise.all(Array.from({ length: 50 }, () => delivery()))
    const responses = await Promise.all(requests.map((request) => receiver.handle(request)))
    expect(responses.map((response) => response.status)).toEqual(Array(50).fill(200))
    await run()
    expect(handled).toHaveLength(1)
  })

  test('either secret verifies during a rotation', async () => {
    const { receiver, handled, run } = makeReceiver({ secrets: [newSecret, secret] })
    expect((await receiver.handle(await delivery({ secrets: [secret] }))).status).toBe(200)
    const other = createEvent({ type: 'order.updated', object: {}, id: 'evt_2' }, { clock })
    const request = await delivery({
      body: JSON.stringify(other),
      id: 'evt_2',
      secrets: [newSecret],
    })
    expect((await receiver.handle(request)).status).toBe(200)
    await run()
    expect(handled.map(([received]) => received.id)).toEqual(['evt_1', 'evt_2'])
  })

  describe('refusals are 400 problems, and nothing is claimed or run', () => {
    test.each([
      [
        'a signature under another secret',
        () => delivery({ secrets: [newSecret] }),
        'No webhook signature',
      ],
      ['a timestamp too old', () => delivery({ timestamp: NOW / 1000 - 301 }), 'too old'],
      ['a timestamp too new', () => delivery({ timestamp: NOW / 1000 + 301 }), 'too new'],
      [
        'a body changed after signing',
        async () => {
          const signed = await delivery()
          return new Request(signed, { body: JSON.stringify({ ...event, type: 'order.deleted' }) })
        },
        'No webhook signature',
      ],
      [
        'a signature made over re-serialised JSON',
        async () => {
          const spaced = JSON.stringify(event, null, 2)
          const request = await delivery({ body: spaced })
          return new Request(request, { body: JSON.stringify(event) })
        },
        'No webhook signature',
      ],
      ['no webhook-signature', () => delivery({ headers: { 'webhook-signature': '' } }), 'missing'],
      [
        'a malformed timestamp',
        () => delivery({ headers: { 'webhook-timestamp': '1e9' } }),
        'digits',
      ],
    ] as const)('%s', async (_name, make, detail) => {
      const { receiver, handled, dedup, run } = makeReceiver()
      const response = await receiver.handle(await make())
      expect(response.status).toBe(400)
      const problem = await problemOf(response)
      expect(problem.status).toBe(400)
      expect(problem.detail).toContain(detail)
      await run()
      expect(handled).toEqual([])
      // The id was not claimed: the genuine delivery still runs.
      expect(await dedup.claim('evt_1', 1000)).toBe(true)
    })

    test.each([
      ['not JSON', 'not json', 'The body is not JSON in UTF-8'],
      ['not UTF-8', new Uint8Array([0x7b, 0xff, 0x7d]), 'The body is not JSON in UTF-8'],
      ['not an envelope', '{"id":"evt_1"}', '/type'],
      [
        'an envelope under another webhook-id',
        JSON.stringify({ ...event, id: 'evt_other' }),
        '/id',
      ],
    ])('a signed body that is %s: EVENT_INVALID', async (_name, body, detail) => {
      const { receiver, handled, run } = makeReceiver()
      const response = await receiver.handle(await delivery({ body }))
      expect(response.status).toBe(400)
      expect((await problemOf(response)).detail).toContain(detail)
      await run()
      expect(handled).toEqual([])
    })
  })

  test('a body over maxBodyBytes is a 413 problem, by Content-Length or while streaming', async () => {
    const { receiver, handled } = makeReceiver({ maxBodyBytes: 64 })
    const large = JSON.stringify({ ...event, data: { object: { note: 'x'.repeat(100) } } })
    const declared = await receiver.handle(await delivery({ body: large }))
    expect(declared.status).toBe(413)
    expect(await problemOf(declared)).toMatchObject({ status: 413, max_bytes: 64 })
    const signed = await delivery({ body: large })
    const bytes = new TextEncoder().encode(large)
    const streamed = new Request(url, {
      method: 'POST',
      headers: signed.headers,
      body: new ReadableStream({
        start(controller) {
          for (let at = 0; at < bytes.length; at += 16) controller.enqueue(bytes.slice(at, at + 16))
          controller.close()
        },
      }),
      duplex: 'half',
    } as RequestInit)
    expect(streamed.headers.get('content-length')).toBeNull()
    expect((await receiver.handle(streamed)).status).toBe(413)
    expect(handled).toEqual([])
  })

  test('a method other than POST is 405 with Allow', async () => {
    const { receiver } = makeReceiver()
    const response = await receiver.handle(new Request(url))
    expect(response.status).toBe(405)
    expect(response.headers.get('allow')).toBe('POST')
    expect(await problemOf(response)).toMatchObject({ allowed_methods: ['POST'] })
  })

  test('a failing handler releases the id and is reported; the redelivery runs it again', async () => {
    let calls = 0
    const failure = new Error('database down')
    const { receiver, errors, run } = makeReceiver({
      handler: () => {
        calls++
        if (calls === 1) throw failure
      },
    })
    expect((await receiver.handle(await delivery())).status).toBe(200)
    await run()
    expect(errors).toEqual([failure])
    expect((await receiver.handle(await delivery())).status).toBe(200)
    await run()
    expect(calls).toBe(2)
    // Handled now: a third delivery is a repeat.
    await receiver.handle(await delivery())
    await run()
    expect(calls).toBe(2)
  })

  test('an onError that throws does not escape the task', async () => {
    const { receiver, tasks } = makeReceiver({
      handler: () => {
        throw new Error('handler')
      },
      onError: () => {
        throw new Error('reporter')
      },
    })
    await receiver.handle(await delivery())
    await expect(tasks[0]!()).resolves.toBeUndefined()
  })

  test('a dedup store that fails answers 500 (the sender retries) and runs nothing', async () => {
    const broken: DedupStore = {
      claim: () => Promise.reject(new Error('redis down')),
      release: () => Promise.resolve(),
    }
    const { receiver, handled, run } = makeReceiver({ dedup: broken })
    const response = await receiver.handle(await delivery())
    expect(response.status).toBe(500)
    expect(await problemOf(response)).not.toHaveProperty('detail', 'redis down')
    await run()
    expect(handled).toEqual([])
  })

  test('a schedule that throws answers 500 and releases the id', async () => {
    const dedup = new MemoryDedupStore({ clock })
    const { receiver } = makeReceiver({
      dedup,
      schedule: () => {
        throw new Error('no room')
      },
    })
    expect((await receiver.handle(await delivery())).status).toBe(500)
    expect(await dedup.claim('evt_1', 1000)).toBe(true)
  })

  test('options are checked at construction', () => {
    const handler = () => undefined
    expect(() => createWebhookReceiver({ secrets: secret, handler, dedupTtlMs: 0 })).toThrow(
      RangeError,
    )
    expect(() => createWebhookReceiver({ secrets: secret, handler, maxBodyBytes: -1 })).toThrow(
      RangeError,
    )
    expect(() => createWebhookReceiver({ secrets: [], handler })).toThrow(TypeError)
  })
})

describe('createWebhookReceiver (properties)', () => {
  test('any signed bytes: 200 or a 400 problem, never a 500 or a throw', async () => {
    const { receiver } = makeReceiver()
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.uint8Array({ maxLength: 256 }),
          fc.json().map((text) => new TextEncoder().encode(text)),
          fc
            .record({
              id: fc.constantFrom('evt_1', 'evt_x'),
              type: fc.constantFrom('order.created', 'Order', ''),
              created: fc.oneof(fc.integer(), fc.double()),
              version: fc.constantFrom('1', ''),
              data: fc.anything(),
            })
            .map((value) => new TextEncoder().encode(JSON.stringify(value))),
        ),
        async (body) => {
          const response = await receiver.handle(await delivery({ body }))
          expect([200, 400]).toContain(response.status)
        },
      ),
      { interruptAfterTimeLimit: 2000 },
    )
  })
})

describe('the sender and the receiver over node:http', () => {
  let server: Server | undefined
  afterEach(async () => {
    await new Promise((resolve) => server?.close(resolve))
  })

  test('a delivery and its retry reach the handler once', async () => {
    const handled: string[] = []
    const receiver = createWebhookReceiver({
      secrets: secret,
      clock,
      handler: (received) => {
        handled.push(received.id)
      },
    })
    server = createServer(toNodeListener((request) => receiver.handle(request)))
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve))
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    const guard = createSsrfGuard({ allowedOrigins: [origin] })
    const sender = createWebhookSender({ guard, clock })
    const payload = JSON.stringify(event)
    try {
      for (let attempt = 0; attempt < 2; attempt++) {
        const result = await sender.send({
          url: `${origin}/hooks`,
          eventId: event.id,
          payload,
          secrets: [secret],
        })
        expect(result).toMatchObject({ kind: 'response', status: 200 })
      }
      const tampered = await sender.send({
        url: `${origin}/hooks`,
        eventId: event.id,
        payload,
        secrets: [newSecret],
      })
      expect(tampered).toMatchObject({ kind: 'response', status: 400 })
      await vi.waitFor(() => expect(handled).toEqual(['evt_1']))
    } finally {
      await guard.close()
    }
  })
})
