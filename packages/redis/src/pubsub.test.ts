import type { PubSubEvent } from '@api-blocks/graphql'
import { runPubSubConformance } from '@api-blocks/graphql/testing'
import { createClient } from 'redis'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { clientOptions, redisUrl, serverSuite, testPrefix } from '../test/server.ts'
import { RedisStoreError } from './error.ts'
import type {
  RedisMessageListener,
  RedisPubSubClient,
  RedisPubSubEvent,
  RedisSubscriberClient,
} from './pubsub.ts'
import { RedisPubSub } from './pubsub.ts'

/** A subscriber connection that never reaches Redis: `subscribe` does what `onSubscribe` says. */
function fakeSubscriber(onSubscribe: () => Promise<unknown>): RedisSubscriberClient {
  return { subscribe: onSubscribe, unsubscribe: async () => {} }
}

const unusedClient: RedisPubSubClient = {
  publish: async () => 0,
  duplicate: () => {
    throw new Error('not duplicated in these tests')
  },
}

describe('RedisPubSub without a server', () => {
  test('the constructor refuses a bad client, subscriber, prefix, maxPayloadBytes, bufferSize or onEvent', () => {
    expect(() => new RedisPubSub({ client: {} as RedisPubSubClient })).toThrow(TypeError)
    expect(
      () => new RedisPubSub({ client: unusedClient, subscriber: {} as RedisSubscriberClient }),
    ).toThrow(TypeError)
    expect(() => new RedisPubSub({ client: unusedClient, prefix: 1 as unknown as string })).toThrow(
      TypeError,
    )
    expect(() => new RedisPubSub({ client: unusedClient, maxPayloadBytes: 0 })).toThrow(RangeError)
    expect(() => new RedisPubSub({ client: unusedClient, bufferSize: 0 })).toThrow(RangeError)
    expect(
      () =>
        new RedisPubSub({
          client: unusedClient,
          onEvent: 'log' as unknown as (event: RedisPubSubEvent) => void,
        }),
    ).toThrow(TypeError)
    const pubsub = new RedisPubSub({ client: unusedClient })
    expect([pubsub.prefix, pubsub.bufferSize, pubsub.maxPayloadBytes]).toEqual([
      'api-blocks:pubsub:',
      100,
      1024 * 1024,
    ])
  })

  test('publish sends JSON under the prefix; refuses bad topics, non-JSON and oversize payloads unsent', async () => {
    const sent: string[][] = []
    const client: RedisPubSubClient = {
      ...unusedClient,
      publish: async (channel, message) => sent.push([channel, message]),
    }
    const pubsub = new RedisPubSub({ client, prefix: 'p:', maxPayloadBytes: 16 })
    await pubsub.publish('order.changed', { id: 'é' })
    expect(sent).toEqual([['p:order.changed', '{"id":"é"}']])
    await expect(pubsub.publish('', 1)).rejects.toThrow(TypeError)
    await expect(pubsub.publish('t', undefined)).rejects.toThrow(TypeError)
    const cyclic: { self?: unknown } = {}
    cyclic.self = cyclic
    await expect(pubsub.publish('t', cyclic)).rejects.toThrow(TypeError)
    await expect(pubsub.publish('t', 'x'.repeat(15))).rejects.toThrow(RangeError) // 17 bytes of JSON
    await expect(pubsub.publish('t', 'é'.repeat(8))).rejects.toThrow(RangeError) // 10 characters, 18 bytes
    expect(sent).toHaveLength(1)
  })

  test('a failed PUBLISH or SUBSCRIBE rejects with COMMAND_FAILED (503); the next subscribe tries again', async () => {
    const failure = new Error('Socket closed unexpectedly')
    const failing = new RedisPubSub({
      client: { ...unusedClient, publish: () => Promise.reject(failure) },
    })
    const error = await failing.publish('t', 1).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(RedisStoreError)
    expect(error).toMatchObject({ code: 'COMMAND_FAILED', operation: 'pubsub.publish' })
    expect((error as RedisStoreError).cause).toBe(failure)
    expect((error as RedisStoreError).toProblem().status).toBe(503)

    let attempts = 0
    const pubsub = new RedisPubSub({
      client: unusedClient,
      subscriber: fakeSubscriber(async () => {
        attempts++
        if (attempts === 1) throw failure
      }),
    })
    await expect(pubsub.subscribe('t')).rejects.toMatchObject({
      code: 'COMMAND_FAILED',
      operation: 'pubsub.subscribe',
      cause: failure,
    })
    const iterator = await pubsub.subscribe('t')
    expect(attempts).toBe(2)
    await iterator.return?.()
  })

  test('a subscriber connection that cannot connect: subscribe rejects with COMMAND_FAILED, errors go to onEvent, the next subscribe tries again', async () => {
    // A real node-redis client on a port where nothing listens, without reconnects.
    const client = createClient({
      url: 'redis://127.0.0.1:1',
      socket: { reconnectStrategy: false, connectTimeout: 1_000 },
    })
    const events: RedisPubSubEvent[] = []
    const pubsub = new RedisPubSub({ client, onEvent: (event) => events.push(event) })
    for (const attempt of [1, 2]) {
      const error = await pubsub.subscribe('t').catch((caught: unknown) => caught)
      expect(error, `attempt ${attempt}`).toBeInstanceOf(RedisStoreError)
      expect(error).toMatchObject({ code: 'COMMAND_FAILED', operation: 'pubsub.subscribe' })
    }
    expect(events.length).toBeGreaterThanOrEqual(2)
    expect(events.every((event) => event.type === 'subscriber_error')).toBe(true)
    await pubsub.close()
  })

  test('a topic shares one SUBSCRIBE; UNSUBSCRIBE follows the last leaver, with the listener subscribed', async () => {
    const log: string[] = []
    const listeners = new Set<RedisMessageListener>()
    const subscriber: RedisSubscriberClient = {
      subscribe: async (channel, listener) => {
        log.push(`SUBSCRIBE ${channel}`)
        listeners.add(listener)
      },
      unsubscribe: async (channel, listener) => {
        log.push(`UNSUBSCRIBE ${channel} ${listeners.delete(listener)}`)
      },
    }
    const pubsub = new RedisPubSub({ client: unusedClient, subscriber, prefix: 'p:' })
    const controller = new AbortController()
    const a = await pubsub.subscribe('t', { signal: controller.signal })
    const b = await pubsub.subscribe('t')
    expect(log).toEqual(['SUBSCRIBE p:t'])
    controller.abort()
    await b.return?.()
    await b.return?.() // a second return() releases nothing more
    await new Promise((resolve) => setImmediate(resolve))
    expect(log).toEqual(['SUBSCRIBE p:t', 'UNSUBSCRIBE p:t true'])
    expect(await a.next()).toEqual({ done: true, value: undefined })
    // Leaving while the SUBSCRIBE is in flight: UNSUBSCRIBE waits for it.
    let confirm = () => {}
    const slow: RedisSubscriberClient = {
      subscribe: (channel, listener) => {
        log.push(`SUBSCRIBE ${channel}`)
        return new Promise<void>((resolve) => {
          confirm = () => {
            listeners.add(listener)
            resolve()
          }
        })
      },
      unsubscribe: subscriber.unsubscribe,
    }
    const waiting = new RedisPubSub({ client: unusedClient, subscriber: slow, prefix: 'p:' })
    const leaving = new AbortController()
    const pending = waiting.subscribe('u', { signal: leaving.signal })
    await new Promise((resolve) => setImmediate(resolve))
    leaving.abort()
    confirm()
    await pending
    await new Promise((resolve) => setImmediate(resolve))
    expect(log.slice(2)).toEqual(['SUBSCRIBE p:u', 'UNSUBSCRIBE p:u true'])
  })
})

describe.skipIf(redisUrl === undefined)(serverSuite('RedisPubSub on Redis'), () => {
  const client = createClient(clientOptions)
  client.on('error', () => {}) // failures reach the tests as rejections
  const prefix = testPrefix('pubsub')

  beforeAll(async () => {
    await client.connect()
  })
  afterAll(() => {
    client.destroy()
  })

  /** How many connections subscribe to `channel` on the server. */
  async function subscribers(channel: string): Promise<number> {
    const counts = await client.pubSubNumSub(channel)
    return Number(counts[channel] ?? 0)
  }

  /** Waits until the server counts `n` subscriptions of `channel` (it learns of them asynchronously). */
  async function untilSubscribers(channel: string, n: number): Promise<void> {
    while ((await subscribers(channel)) !== n)
      await new Promise((resolve) => setTimeout(resolve, 5))
  }

  runPubSubConformance('RedisPubSub', () => new RedisPubSub({ client, prefix }), {
    bufferSize: 100,
    cleanup: (pubsub) => (pubsub as RedisPubSub).close(),
  })
  runPubSubConformance(
    'RedisPubSub (buffer 10)',
    () => new RedisPubSub({ client, prefix, bufferSize: 10 }),
    { bufferSize: 10, cleanup: (pubsub) => (pubsub as RedisPubSub).close() },
  )

  test('local subscribers of a topic share one Redis subscription; the last to leave ends it', async () => {
    const pubsub = new RedisPubSub({ client, prefix })
    const topic = `shared:${crypto.randomUUID()}`
    const iterators = await Promise.all([1, 2, 3].map(() => pubsub.subscribe(topic)))
    expect(await subscribers(prefix + topic)).toBe(1)
    await iterators[0]!.return?.()
    await iterators[1]!.return?.()
    expect(await subscribers(prefix + topic)).toBe(1)
    await iterators[2]!.return?.()
    await untilSubscribers(prefix + topic, 0)
    await pubsub.close()
  })

  test('a payload published on one instance reaches the subscribers of every instance', async () => {
    const instances = [1, 2, 3].map(() => new RedisPubSub({ client, prefix }))
    const topic = `across:${crypto.randomUUID()}`
    const iterators = await Promise.all(instances.slice(0, 2).map((p) => p.subscribe(topic)))
    expect(await subscribers(prefix + topic)).toBe(2)
    await instances[2]!.publish(topic, { id: 'ord_1', items: [{ sku: 'A', quantity: 2 }] })
    for (const iterator of iterators) {
      expect(await iterator.next()).toEqual({
        done: false,
        value: { id: 'ord_1', items: [{ sku: 'A', quantity: 2 }] },
      })
    }
    await Promise.all(instances.map((p) => p.close()))
    await untilSubscribers(prefix + topic, 0)
  })

  test('after the subscriber connection is killed, node-redis reconnects and subscribes again; the iterator stays open', async () => {
    const subscriber = createClient(clientOptions)
    const errors: unknown[] = []
    subscriber.on('error', (error) => errors.push(error))
    await subscriber.connect()
    const id = await subscriber.clientId()
    const pubsub = new RedisPubSub({ client, subscriber, prefix })
    const topic = `reconnect:${crypto.randomUUID()}`
    const iterator = await pubsub.subscribe(topic)
    await pubsub.publish(topic, 'before')
    expect(await iterator.next()).toEqual({ done: false, value: 'before' })
    await client.sendCommand(['CLIENT', 'KILL', 'ID', String(id)])
    // Subscribed again once the server counts the subscription (on a new connection).
    while ((await subscriber.isReady) === false || (await subscribers(prefix + topic)) !== 1) {
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
    expect(await subscriber.clientId()).not.toBe(id)
    await pubsub.publish(topic, 'after')
    expect(await iterator.next()).toEqual({ done: false, value: 'after' })
    await pubsub.close()
    subscriber.destroy()
  })

  test('a message that is not JSON is reported and skipped; the next one arrives', async () => {
    const events: RedisPubSubEvent[] = []
    const pubsub = new RedisPubSub({ client, prefix, onEvent: (event) => events.push(event) })
    const topic = `invalid:${crypto.randomUUID()}`
    const iterator = await pubsub.subscribe(topic)
    await client.publish(prefix + topic, 'not json')
    await pubsub.publish(topic, 'valid')
    expect(await iterator.next()).toEqual({ done: false, value: 'valid' })
    expect(events).toEqual([{ type: 'invalid_message', topic }])
    await pubsub.close()
    // An observer that throws changes nothing (it runs inside node-redis's dispatch).
    const throwing = new RedisPubSub({
      client,
      prefix,
      onEvent: () => {
        throw new Error('observer failed')
      },
    })
    const again = await throwing.subscribe(topic)
    await client.publish(prefix + topic, 'not json')
    await throwing.publish(topic, 'still valid')
    expect(await again.next()).toEqual({ done: false, value: 'still valid' })
    await throwing.close()
  })

  test('a slow subscriber loses the oldest payloads, reported as dropped', async () => {
    const events: PubSubEvent[] = []
    const pubsub = new RedisPubSub({
      client,
      prefix,
      bufferSize: 2,
      onEvent: (event) => {
        if (event.type === 'dropped') events.push(event)
      },
    })
    const topic = `slow:${crypto.randomUUID()}`
    const slow = await pubsub.subscribe(topic)
    const reader = await pubsub.subscribe(topic)
    for (const n of [1, 2, 3, 4]) {
      await pubsub.publish(topic, n)
      expect((await reader.next()).value).toBe(n)
    }
    expect(events).toEqual([
      { type: 'dropped', topic, dropped: 1 },
      { type: 'dropped', topic, dropped: 2 },
    ])
    expect([(await slow.next()).value, (await slow.next()).value]).toEqual([3, 4])
    await pubsub.close()
  })

  test('close ends every iterator and closes the subscriber connection it made; subscribe then refuses', async () => {
    const pubsub = new RedisPubSub({ client, prefix })
    const topic = `close:${crypto.randomUUID()}`
    const iterator = await pubsub.subscribe(topic)
    const waiting = iterator.next()
    await pubsub.close()
    expect(await waiting).toEqual({ done: true, value: undefined })
    await untilSubscribers(prefix + topic, 0)
    await expect(pubsub.subscribe(topic)).rejects.toThrow(TypeError)
  })
})
