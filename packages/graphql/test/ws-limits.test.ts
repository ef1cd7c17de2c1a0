import { once } from 'node:events'
import { createRateLimiter, MemoryRateLimitStore } from '@api-blocks/rate-limit'
import { afterEach, describe, expect, test } from 'vitest'
import WebSocket from 'ws'
import type { Harness } from './ws-support.ts'
import { collect, MemoryPubSub, makeSchema, raw, start } from './ws-support.ts'

// Bounds of the WebSocket server and the close codes of graphql-ws PROTOCOL.md for input
// its client never sends. Every case ends with a code, never a crash or a hang.

let harness: Harness | undefined
afterEach(async () => {
  await harness?.close()
  harness = undefined
})

async function acknowledged(url: string) {
  const socket = await raw(url)
  socket.send({ type: 'connection_init', payload: { authorization: 'Bearer reader' } })
  await socket.message((m) => m['type'] === 'connection_ack')
  return socket
}

/** The HTTP status an upgrade is refused with. */
async function refusedUpgrade(url: string, protocol = 'graphql-transport-ws'): Promise<number> {
  const socket = new WebSocket(url, protocol)
  socket.on('error', () => {})
  const [, response] = (await once(socket, 'unexpected-response')) as [
    unknown,
    { statusCode: number },
  ]
  return response.statusCode
}

describe('protocol violations close the socket with their code', () => {
  const table: [string, (socket: Awaited<ReturnType<typeof acknowledged>>) => void, number][] = [
    ['a message that is not JSON', (s) => s.send('{nope'), 4400],
    ['an unknown message type', (s) => s.send({ type: 'launch' }), 4400],
    [
      'subscribe without an id',
      (s) => s.send({ type: 'subscribe', payload: { query: '{ hello }' } }),
      4400,
    ],
    [
      'variables that are an array',
      (s) => s.send({ id: '1', type: 'subscribe', payload: { query: '{ hello }', variables: [] } }),
      4400,
    ],
    [
      'a query that is not a string',
      (s) => s.send({ id: '1', type: 'subscribe', payload: { query: 7 } }),
      4400,
    ],
    ['a second connection_init', (s) => s.send({ type: 'connection_init' }), 4429],
    [
      'a next message (the server sends those)',
      (s) => s.send({ id: '1', type: 'next', payload: {} }),
      4400,
    ],
    [
      'a connection_ack message (the server sends those)',
      (s) => s.send({ type: 'connection_ack' }),
      4400,
    ],
    [
      'an error message (the server sends those)',
      (s) => s.send({ id: '1', type: 'error', payload: [] }),
      4400,
    ],
    [
      'a duplicate subscription id',
      (s) => {
        const subscribe = {
          id: 'dup',
          type: 'subscribe',
          payload: { query: 'subscription { orderChanged { id } }' },
        }
        s.send(subscribe)
        s.send(subscribe)
      },
      4409,
    ],
  ]
  for (const [name, act, code] of table) {
    test(`${name}: ${code}`, async () => {
      harness ??= await start({ schema: makeSchema(new MemoryPubSub()) })
      const socket = await acknowledged(harness.url)
      act(socket)
      expect((await socket.closed).code).toBe(code)
    })
  }

  test('subscribe before connection_ack: 4401 Unauthorized', async () => {
    harness = await start({ schema: makeSchema(new MemoryPubSub()) })
    const socket = await raw(harness.url)
    socket.send({ id: '1', type: 'subscribe', payload: { query: '{ hello }' } })
    expect((await socket.closed).code).toBe(4401)
  })

  test('only graphql-transport-ws: a socket without it gets 4406', async () => {
    harness = await start({ schema: makeSchema(new MemoryPubSub()) })
    const socket = await raw(harness.url, [])
    expect((await socket.closed).code).toBe(4406)
  })

  test('only graphql-transport-ws: the legacy graphql-ws subprotocol is not agreed to', async () => {
    harness = await start({ schema: makeSchema(new MemoryPubSub()) })
    const socket = new WebSocket(harness.url, 'graphql-ws')
    socket.on('error', () => {})
    const [response] = (await once(socket, 'upgrade')) as [{ headers: Record<string, unknown> }]
    expect(response.headers['sec-websocket-protocol']).toBeUndefined()
    await once(socket, 'close')
  })

  test('no connection_init within connectionInitWaitTimeout: 4408', async () => {
    harness = await start({ schema: makeSchema(new MemoryPubSub()), connectionInitWaitTimeout: 20 })
    const socket = await raw(harness.url)
    expect((await socket.closed).code).toBe(4408)
  })
})

describe('keep-alive', () => {
  test('the server pings every keepAlive ms', async () => {
    harness = await start({ schema: makeSchema(new MemoryPubSub()), keepAlive: 10 })
    const socket = await acknowledged(harness.url)
    // One ping is the proof: a second one depends on the pong beating the next tick.
    await once(socket.socket, 'ping')
    socket.socket.close()
  })

  test('a socket that does not answer a ping is dropped', async () => {
    harness = await start({ schema: makeSchema(new MemoryPubSub()), keepAlive: 10 })
    const socket = new WebSocket(harness.url, 'graphql-transport-ws', { autoPong: false })
    socket.on('error', () => {})
    await once(socket, 'open')
    const [code] = (await once(socket, 'close')) as [number]
    // Terminated without a close frame: RFC 6455 §7.1.5, 1006 Abnormal Closure.
    expect(code).toBe(1006)
    while (harness.ws.connections() > 0) await new Promise((resolve) => setImmediate(resolve))
  })
})

describe('bounds', () => {
  test('a message over maxPayloadBytes: 1009 Message Too Big (RFC 6455 §7.4.1)', async () => {
    harness = await start({ schema: makeSchema(new MemoryPubSub()), maxPayloadBytes: 1024 })
    const socket = await acknowledged(harness.url)
    socket.send({ id: '1', type: 'subscribe', payload: { query: `{ hello ${' '.repeat(1024)}}` } })
    expect((await socket.closed).code).toBe(1009)
  })

  test('a message just under maxPayloadBytes runs', async () => {
    harness = await start({ schema: makeSchema(new MemoryPubSub()), maxPayloadBytes: 1024 })
    const socket = await acknowledged(harness.url)
    const frame = (padding: number) =>
      JSON.stringify({
        id: '1',
        type: 'subscribe',
        payload: { query: `{ hello${' '.repeat(padding)}}` },
      })
    const base = frame(0).length
    socket.send(frame(1024 - base))
    expect(await socket.message((m) => m['id'] === '1')).toMatchObject({ type: 'next' })
  })

  test('maxOperations: one more operation on the connection is refused with the limit', async () => {
    harness = await start({ schema: makeSchema(new MemoryPubSub()), maxOperations: 2 })
    const socket = await acknowledged(harness.url)
    const subscription = { query: 'subscription { orderChanged { id } }' }
    socket.send({ id: 'a', type: 'subscribe', payload: subscription })
    socket.send({ id: 'b', type: 'subscribe', payload: subscription })
    socket.send({ id: 'c', type: 'subscribe', payload: subscription })
    expect(await socket.message((m) => m['id'] === 'c')).toEqual({
      id: 'c',
      type: 'error',
      payload: [
        {
          message: 'This connection already runs 2 operations; complete one first.',
          extensions: { code: 'BAD_REQUEST', limit: 2, actual: 3 },
        },
      ],
    })
    // Completing one frees its place.
    socket.send({ id: 'a', type: 'complete' })
    socket.send({ id: 'd', type: 'subscribe', payload: { query: '{ hello }' } })
    expect(await socket.message((m) => m['id'] === 'd')).toMatchObject({ type: 'next' })
  })

  test('maxConnections: an upgrade beyond answers 503, and is served again once one closes', async () => {
    const refused: unknown[] = []
    harness = await start({
      schema: makeSchema(new MemoryPubSub()),
      maxConnections: 1,
      onEvent: (event) => {
        if (event.type === 'refused') refused.push(event.status)
      },
    })
    const first = await acknowledged(harness.url)
    expect(await refusedUpgrade(harness.url)).toBe(503)
    expect(refused).toEqual([503])
    first.socket.close()
    await first.closed
    // The server sees the close after the client does: wait for its count to drop.
    while (harness.ws.connections() > 0) await new Promise((resolve) => setImmediate(resolve))
    const again = await acknowledged(harness.url)
    again.socket.close()
  })

  test('an upgrade to another path answers 404 when nothing else listens', async () => {
    harness = await start({ schema: makeSchema(new MemoryPubSub()) })
    expect(await refusedUpgrade(harness.url.replace('/graphql', '/other'))).toBe(404)
    expect(await refusedUpgrade(harness.url.replace('/graphql', '/graphql/x'))).toBe(404)
  })

  test('an upgrade to another path is left to the other upgrade listeners', async () => {
    harness = await start({ schema: makeSchema(new MemoryPubSub()) })
    harness.server.on('upgrade', (request, socket) => {
      if (request.url === '/other')
        socket.end('HTTP/1.1 418 I am a teapot\r\nContent-Length: 0\r\n\r\n')
    })
    expect(await refusedUpgrade(harness.url.replace('/graphql', '/other'))).toBe(418)
  })

  test('the query string of the upgrade is ignored for the path', async () => {
    harness = await start({ schema: makeSchema(new MemoryPubSub()) })
    const socket = await acknowledged(`${harness.url}?client=web`)
    socket.socket.close()
  })

  test('rateLimit: each operation is charged its cost; refused with RATE_LIMITED', async () => {
    const limiter = createRateLimiter({
      store: new MemoryRateLimitStore(),
      policies: [{ name: 'ops', quota: 2, windowSeconds: 3600 }],
    })
    harness = await start({
      schema: makeSchema(new MemoryPubSub()),
      rateLimit: { limiter, key: (principal) => `principal:${principal?.subject}` },
    })
    const client = harness.client()
    expect((await collect(client, { query: '{ hello }' })).results).toHaveLength(1)
    expect((await collect(client, { query: '{ hello }' })).results).toHaveLength(1)
    const refused = await collect(client, { query: '{ hello }' })
    const [error] = refused.error as { extensions: Record<string, unknown> }[]
    expect(error!.extensions).toMatchObject({ code: 'RATE_LIMITED', cost: 1 })
    expect(error!.extensions['retryAfterSeconds']).toBeGreaterThan(0)
  })
})

describe('close()', () => {
  test('closes every socket with 1001 Going Away and stops accepting upgrades', async () => {
    harness = await start({ schema: makeSchema(new MemoryPubSub()) })
    const socket = await acknowledged(harness.url)
    await harness.ws.close()
    expect((await socket.closed).code).toBe(1001)
    expect(harness.ws.connections()).toBe(0)
    // No upgrade listener any more: Node hands the request to the request listener (404 here).
    expect(await refusedUpgrade(harness.url)).toBe(404)
    // Closing again is harmless.
    await harness.ws.close()
  })

  test('attaching refuses bad bounds', async () => {
    const { createServer } = await import('node:http')
    const { attachGraphQLWebSocket } = await import('../src/ws/index.ts')
    const server = createServer()
    expect(() =>
      attachGraphQLWebSocket(server, { schema: makeSchema(new MemoryPubSub()), maxOperations: -1 }),
    ).toThrow(RangeError)
    expect(server.listenerCount('upgrade')).toBe(0)
  })
})
