// Over the WebSocket: an APQ document is stored only once its operation is admitted, results
// carry extensions.cost, and a client that stops reading does not grow the server's queue.
import { createHash } from 'node:crypto'
import type { Socket } from 'node:net'
import { afterEach, expect, test } from 'vitest'
import { MemoryPersistedDocumentStore } from '../src/stores.ts'
import type { Harness } from './ws-support.ts'
import { collect, MemoryPubSub, makeSchema, raw, start } from './ws-support.ts'

let harness: Harness | undefined
afterEach(async () => {
  await harness?.close()
  harness = undefined
})

const persistedQuery = (query: string) => ({
  version: 1,
  sha256Hash: createHash('sha256').update(query).digest('hex'),
})
const codeOf = (error: unknown) => (error as { extensions: { code: string } }[])[0]?.extensions.code

test('an operation type not served, or over the cost limit: refused, its document not stored', async () => {
  const store = new MemoryPersistedDocumentStore()
  harness = await start({
    schema: makeSchema(new MemoryPubSub()),
    operations: ['query', 'subscription'],
    guards: { maxCost: 2, maxDepth: 10 },
    persistedQueries: { store },
  })
  const client = harness.client()
  const mutation = 'mutation { bump }'
  // Over the cost limit too (mutationCost 10): the operation type is checked first.
  const refused = await collect(client, {
    query: mutation,
    extensions: { persistedQuery: persistedQuery(mutation) },
  })
  expect(codeOf(refused.error)).toBe('METHOD_NOT_ALLOWED')
  const costly = '{ deep { deep { deep { deep { leaf } } } } }'
  const tooDear = await collect(client, {
    query: costly,
    extensions: { persistedQuery: persistedQuery(costly) },
  })
  expect(codeOf(tooDear.error)).toBe('COST_LIMIT_EXCEEDED')
  expect(await store.get(`sha256:${persistedQuery(mutation).sha256Hash}`)).toBeUndefined()
  expect(await store.get(`sha256:${persistedQuery(costly).sha256Hash}`)).toBeUndefined()
  const admitted = '{ hello }'
  expect(
    (
      await collect(client, {
        query: admitted,
        extensions: { persistedQuery: persistedQuery(admitted) },
      })
    ).results,
  ).toEqual([{ data: { hello: 'world' } }])
  expect(await store.get(`sha256:${persistedQuery(admitted).sha256Hash}`)).toBe(admitted)
})

test('a client that stops reading: the server queues at most maxBufferedBytes and one message', async () => {
  const pubsub = new MemoryPubSub({ bufferSize: 4 })
  let subscribed = 0
  const maxBufferedBytes = 64 * 1024
  harness = await start({
    schema: makeSchema(pubsub, { subscribed: () => subscribed++ }),
    keepAlive: 0,
    maxBufferedBytes,
  })
  const sockets: Socket[] = []
  harness.server.on('connection', (socket: Socket) => sockets.push(socket))
  const client = await raw(harness.url)
  client.send({ type: 'connection_init', payload: { authorization: 'Bearer reader' } })
  await client.message((m) => m['type'] === 'connection_ack')
  const subscriptions = 30
  for (let i = 0; i < subscriptions; i++) {
    client.send({
      id: `s${i}`,
      type: 'subscribe',
      payload: { query: 'subscription { orderChanged { id } }' },
    })
  }
  while (subscribed < subscriptions) await new Promise((resolve) => setImmediate(resolve))
  // The client stops reading: its socket is paused, so the TCP windows fill up.
  const underlying = (client.socket as unknown as { _socket: Socket })._socket
  underlying.pause()
  try {
    const message = 32 * 1024
    const big = 'x'.repeat(message)
    let most = 0
    for (let i = 0; i < 400; i++) {
      await pubsub.publish('orders', { id: `${i}:${big}` })
      for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve))
      most = Math.max(most, sockets[0]!.writableLength)
    }
    // Without the bound, each of the 30 subscriptions keeps one event queued (about 1 MB).
    expect(most).toBeGreaterThan(0)
    expect(most).toBeLessThanOrEqual(maxBufferedBytes + 2 * (message + 200))
    // Reading again, the client gets the events held and the newest ones.
    const before = client.messages.length
    underlying.resume()
    await client.message(
      (m) =>
        m['type'] === 'next' &&
        String(
          (m['payload'] as { data: { orderChanged: { id: string } } }).data.orderChanged.id,
        ).startsWith('399:'),
    )
    expect(client.messages.length).toBeGreaterThan(before)
  } finally {
    client.socket.terminate()
  }
}, 60_000)
