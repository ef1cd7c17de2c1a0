import type { Principal } from '@api-blocks/core'
import { afterEach, expect, test, vi } from 'vitest'
import type { GraphQLWebSocketEvent } from '../src/ws/index.ts'
import type { Harness, RawSocket } from './ws-support.ts'
import { MemoryPubSub, makeSchema, raw, start } from './ws-support.ts'

// What a socket holds on the server (subscriptions, timers, queued bytes) stays bounded and
// ends with it, whatever order the client's messages come in.

let harness: Harness | undefined
afterEach(async () => {
  await harness?.close()
  harness = undefined
})

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

async function acknowledged(url: string): Promise<RawSocket> {
  const socket = await raw(url)
  socket.send({ type: 'connection_init', payload: { authorization: 'Bearer reader' } })
  await socket.message((m) => m['type'] === 'connection_ack')
  return socket
}

const orders = { query: 'subscription { orderChanged { id } }' }

// Frames sent in one go reach the server in one read, so each arrives while the operations of
// the ones before are still being admitted.
test('an id reused while its completed operation is still admitted closes with 4409 and leaks no subscription', async () => {
  const pubsub = new MemoryPubSub()
  harness = await start({ schema: makeSchema(pubsub), keepAlive: 0 })
  const socket = await acknowledged(harness.url)
  socket.send({ id: '1', type: 'subscribe', payload: orders })
  socket.send({ id: '1', type: 'complete' })
  socket.send({ id: '1', type: 'subscribe', payload: orders })
  socket.send({ id: 'marker', type: 'subscribe', payload: { query: '{ hello }' } })
  const ended = await Promise.race([
    socket.closed,
    socket.message((m) => m['id'] === 'marker' && m['type'] === 'complete'),
  ])
  expect(ended).toMatchObject({ code: 4409 })
  await harness.close()
  harness = undefined
  for (let i = 0; i < 5; i++) await turn()
  expect(pubsub.subscribers('orders')).toBe(0)
})

test('operations completed while admitted still count for maxOperations', async () => {
  const pubsub = new MemoryPubSub()
  harness = await start({ schema: makeSchema(pubsub), keepAlive: 0, maxOperations: 2 })
  const socket = await acknowledged(harness.url)
  socket.send({ id: 'a', type: 'subscribe', payload: orders })
  socket.send({ id: 'a', type: 'complete' })
  socket.send({ id: 'b', type: 'subscribe', payload: { query: '{ hello }' } })
  socket.send({ id: 'c', type: 'subscribe', payload: { query: '{ hello }' } })
  const answer = await socket.message(
    (m) => m['id'] === 'c' && (m['type'] === 'error' || m['type'] === 'complete'),
  )
  expect(answer).toMatchObject({
    type: 'error',
    payload: [{ extensions: { code: 'BAD_REQUEST', limit: 2, actual: 3 } }],
  })
  await socket.message((m) => m['id'] === 'b' && m['type'] === 'complete')
  socket.socket.close()
  await socket.closed
  await harness.close()
  harness = undefined
  for (let i = 0; i < 5; i++) await turn()
  expect(pubsub.subscribers('orders')).toBe(0)
})

test('a socket closed while authenticate runs arms no expiry timer', async () => {
  const pending: ((principal: Principal) => void)[] = []
  const waiters: (() => void)[] = []
  const closedWaiters: (() => void)[] = []
  harness = await start({
    schema: makeSchema(new MemoryPubSub()),
    keepAlive: 0,
    authenticate: () =>
      new Promise((resolve) => {
        pending.push(resolve)
        waiters.shift()?.()
      }),
    onEvent: (event: GraphQLWebSocketEvent) => {
      if (event.type === 'closed') closedWaiters.shift()?.()
    },
  })
  // The expiry timer is unref()ed, so process.getActiveResourcesInfo() would not show it: watch
  // for a timer as long as the credentials' lifetime being set at all.
  const setTimeoutSpy = vi.spyOn(globalThis, 'setTimeout')
  const cycles = 20
  for (let i = 0; i < cycles; i++) {
    const socket = await raw(harness.url)
    const called = new Promise<void>((resolve) => waiters.push(resolve))
    socket.send({ type: 'connection_init', payload: { authorization: 'Bearer reader' } })
    await called
    const closed = new Promise<void>((resolve) => closedWaiters.push(resolve))
    socket.socket.close()
    await closed
    // The credentials expire in about 11 days: a timer that long would outlive everything.
    pending.shift()?.({
      subject: 'reader',
      scopes: [],
      claims: { exp: Math.floor(Date.now() / 1000) + 1_000_000 },
    })
    await turn()
  }
  const expiries = setTimeoutSpy.mock.calls.filter(
    ([, delay]) => typeof delay === 'number' && delay > 100_000_000,
  )
  setTimeoutSpy.mockRestore()
  expect(expiries).toEqual([])
})

test('pings from a client that does not read go unanswered past maxBufferedBytes', async () => {
  const admitted: (() => void)[] = []
  harness = await start({
    schema: makeSchema(new MemoryPubSub()),
    keepAlive: 0,
    maxBufferedBytes: 64 * 1024,
    onEvent: (event) => {
      if (event.type === 'operation' && event.operationName === 'Marker') admitted.shift()?.()
    },
  })
  const socket = await acknowledged(harness.url)
  socket.socket.pause()
  // 1,500 pongs of 60 kB (90 MB) are far more than the kernel's socket buffers hold.
  const pings = 1500
  const payload = { echo: 'x'.repeat(60_000) }
  for (let i = 0; i < pings; i++) socket.send({ type: 'ping', payload })
  const marker = new Promise<void>((resolve) => admitted.push(resolve))
  socket.send({ id: 'm', type: 'subscribe', payload: { query: 'query Marker { hello }' } })
  // Admitted after every ping before it was handled.
  await marker
  socket.socket.resume()
  await socket.message((m) => m['id'] === 'm' && m['type'] === 'complete')
  const pongs = socket.messages.filter((m) => (m as { type?: unknown }).type === 'pong').length
  expect(pongs).toBeGreaterThan(0)
  expect(pongs).toBeLessThan(pings / 2)
})
