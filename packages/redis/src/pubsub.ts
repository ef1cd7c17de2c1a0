/**
 * `PubSub` of `@api-blocks/graphql` on Redis: `PUBLISH` of JSON text on the caller's client, and
 * one dedicated subscriber connection holding one Redis `SUBSCRIBE` per topic, shared by every
 * local subscriber of it (a `MemoryPubSub` fans the messages out, with its bounded buffers).
 *
 * @module
 */
import type { PubSub, PubSubEvent, SubscribeOptions } from '@api-blocks/graphql'
import { MemoryPubSub } from '@api-blocks/graphql'
import { RedisStoreError } from './error.ts'

/** A message listener of node-redis's `subscribe`: the message text and its channel. */
export type RedisMessageListener = (message: string, channel: string) => void

/**
 * The connection subscriptions run on: a node-redis client in subscriber mode (after its first
 * `subscribe` it runs no other command). node-redis clients satisfy it as they are.
 *
 * @example
 * ```ts
 * const subscriber: RedisSubscriberClient = await client.duplicate().on('error', console.error).connect()
 * ```
 */
export interface RedisSubscriberClient {
  /** `SUBSCRIBE channel` (sent once per channel; more listeners share it). */
  subscribe(channel: string, listener: RedisMessageListener): Promise<unknown>
  /** Removes `listener`; `UNSUBSCRIBE channel` when it was the channel's last. */
  unsubscribe(channel: string, listener: RedisMessageListener): Promise<unknown>
}

/**
 * What {@link RedisPubSub} needs of the client you give it: `PUBLISH`, and `duplicate()` for
 * the subscriber connection (same options: URL, credentials, timeouts, reconnect strategy).
 * A node-redis client satisfies it as it is.
 *
 * @example
 * ```ts
 * import { createClient } from 'redis'
 *
 * const client: RedisPubSubClient = await createClient({ url: process.env.REDIS_URL }).on('error', console.error).connect()
 * ```
 */
export interface RedisPubSubClient {
  /** `PUBLISH channel message`. */
  publish(channel: string, message: string): Promise<unknown>
  /** A new client with the same options, not connected yet. */
  duplicate(): RedisSubscriberClient & {
    on(event: 'error', listener: (error: Error) => void): unknown
    connect(): Promise<unknown>
    close(): Promise<unknown>
  }
}

/**
 * What a {@link RedisPubSub} reports to `onEvent`: the `dropped` payloads of a slow local
 * subscriber (as `MemoryPubSub`), an `invalid_message` on a channel (not JSON: someone else
 * publishes under the prefix), and `subscriber_error` (an error of the subscriber connection, or
 * an `UNSUBSCRIBE` that failed; node-redis reconnects and subscribes again by itself).
 *
 * @example
 * ```ts
 * const onEvent = (event: RedisPubSubEvent) => {
 *   if (event.type === 'subscriber_error') console.error('redis pub/sub:', event.error)
 * }
 * ```
 */
export type RedisPubSubEvent =
  | PubSubEvent
  | { readonly type: 'invalid_message'; readonly topic: string }
  | { readonly type: 'subscriber_error'; readonly error: unknown }

/**
 * Options of {@link RedisPubSub}.
 *
 * @example
 * ```ts
 * const options: RedisPubSubOptions = { client, prefix: 'orders-api:pubsub:', bufferSize: 100 }
 * const pubsub = new RedisPubSub(options)
 * ```
 */
export interface RedisPubSubOptions {
  /**
   * A connected client to publish on; its `duplicate()` becomes the subscriber connection
   * unless `subscriber` is given. Give it its timeouts, `disableOfflineQueue` and a reconnect
   * strategy: the duplicate inherits them.
   */
  client: RedisPubSubClient
  /**
   * A connected client dedicated to this pub/sub's subscriptions (yours to close). Absent, the
   * pub/sub duplicates `client` at the first `subscribe` and closes it in {@link RedisPubSub.close}.
   */
  subscriber?: RedisSubscriberClient
  /** Put before every topic to make its channel (default `api-blocks:pubsub:`). */
  prefix?: string
  /** The most unread payloads one local subscriber holds (default 100); past it the oldest is dropped. */
  bufferSize?: number
  /** The largest payload published, in UTF-8 bytes of its JSON (default 1 MiB). */
  maxPayloadBytes?: number
  /** Told of dropped payloads, invalid messages and subscriber connection errors (what it throws is ignored). */
  onEvent?: (event: RedisPubSubEvent) => void
}

const DEFAULT_PREFIX = 'api-blocks:pubsub:'
const DEFAULT_MAX_PAYLOAD_BYTES = 1024 * 1024

/** One Redis subscription, shared by the local subscribers of its topic. */
interface Channel {
  count: number
  readonly listener: RedisMessageListener
  readonly ready: Promise<void>
}

/**
 * A {@link PubSub} on Redis for several instances of a service: a payload published on one
 * instance reaches the subscribers of every instance. Passes `runPubSubConformance` against a
 * real server.
 *
 * - **Publish** is one `PUBLISH <prefix><topic> <JSON>` on your client: at most once, in order
 *   per client (Redis delivers a connection's messages in the order it sent them). A payload
 *   that `JSON.stringify` refuses, or over `maxPayloadBytes`, is a `TypeError` / `RangeError`.
 * - **Subscriptions** run on one dedicated connection (`client.duplicate()`, connected at the
 *   first `subscribe`): a topic's first local subscriber sends `SUBSCRIBE`, later ones share it,
 *   and the last one leaving sends `UNSUBSCRIBE`. `subscribe` resolves once Redis confirmed the
 *   subscription, so what is published afterwards is delivered. Each local subscriber has its
 *   own bounded buffer (`bufferSize`; the oldest dropped, reported to `onEvent`).
 * - **Reconnects**: node-redis reconnects the subscriber connection by itself (with your
 *   client's `reconnectStrategy`) and subscribes to every channel again; the iterators stay
 *   open. What was published while it was disconnected is lost (Redis pub/sub keeps nothing):
 *   a subscription is a live feed, not a log.
 * - **Failures**: `publish` and a first `subscribe` of a topic reject with a
 *   {@link RedisStoreError} (`COMMAND_FAILED`, the client's error as `cause`); errors of the
 *   subscriber connection go to `onEvent`.
 *
 * @example
 * ```ts
 * import { RedisPubSub } from '@api-blocks/redis'
 * import { createClient } from 'redis'
 *
 * const client = await createClient({ url: process.env.REDIS_URL }).on('error', console.error).connect()
 * const pubsub = new RedisPubSub({ client, prefix: 'orders-api:pubsub:' })
 * const changes = await pubsub.subscribe('order.changed', { signal: AbortSignal.timeout(60_000) })
 * await pubsub.publish('order.changed', { id: 'ord_1' })
 * console.log((await changes.next()).value) // { id: 'ord_1' }
 * await pubsub.close()
 * ```
 */
export class RedisPubSub implements PubSub {
  /** The client `publish` runs on. */
  readonly client: RedisPubSubClient
  /** The prefix of every channel. */
  readonly prefix: string
  /** The largest payload published, in UTF-8 bytes of its JSON. */
  readonly maxPayloadBytes: number
  readonly #local: MemoryPubSub
  readonly #onEvent: ((event: RedisPubSubEvent) => void) | undefined
  readonly #given: RedisSubscriberClient | undefined
  #subscriber: Promise<RedisSubscriberClient> | undefined
  #owned: { close(): Promise<unknown> } | undefined
  readonly #channels = new Map<string, Channel>()
  readonly #open = new Set<AsyncIterableIterator<unknown>>()
  #closed = false

  constructor(options: RedisPubSubOptions) {
    const {
      client,
      subscriber,
      prefix = DEFAULT_PREFIX,
      maxPayloadBytes = DEFAULT_MAX_PAYLOAD_BYTES,
      onEvent,
    } = options
    if (typeof client?.publish !== 'function' || typeof client.duplicate !== 'function') {
      throw new TypeError('RedisPubSub: client must have publish and duplicate (node-redis)')
    }
    if (
      subscriber !== undefined &&
      (typeof subscriber.subscribe !== 'function' || typeof subscriber.unsubscribe !== 'function')
    ) {
      throw new TypeError(
        'RedisPubSub: subscriber must have subscribe and unsubscribe (node-redis)',
      )
    }
    if (typeof prefix !== 'string') throw new TypeError('RedisPubSub: prefix must be a string')
    if (!Number.isSafeInteger(maxPayloadBytes) || maxPayloadBytes < 1) {
      throw new RangeError('RedisPubSub: maxPayloadBytes must be a positive integer')
    }
    if (onEvent !== undefined && typeof onEvent !== 'function') {
      throw new TypeError('RedisPubSub: onEvent must be a function')
    }
    this.client = client
    this.prefix = prefix
    this.maxPayloadBytes = maxPayloadBytes
    this.#given = subscriber
    // What the observer throws is ignored: it runs inside node-redis's event dispatch.
    this.#onEvent =
      onEvent === undefined
        ? undefined
        : (event) => {
            try {
              onEvent(event)
            } catch {}
          }
    this.#local = new MemoryPubSub({
      ...(options.bufferSize === undefined ? {} : { bufferSize: options.bufferSize }),
      ...(this.#onEvent === undefined ? {} : { onEvent: this.#onEvent }),
    })
  }

  /** The most unread payloads one local subscriber holds. */
  get bufferSize(): number {
    return this.#local.bufferSize
  }

  async publish(topic: string, payload: unknown): Promise<void> {
    checkTopic(topic)
    const message = JSON.stringify(payload) as string | undefined
    if (message === undefined) throw new TypeError('RedisPubSub: a payload must be JSON')
    if (
      message.length > this.maxPayloadBytes ||
      Buffer.byteLength(message, 'utf8') > this.maxPayloadBytes
    ) {
      throw new RangeError(
        `RedisPubSub: a payload is at most ${this.maxPayloadBytes} bytes of JSON`,
      )
    }
    try {
      await this.client.publish(this.prefix + topic, message)
    } catch (cause) {
      throw failed('publish', cause)
    }
  }

  async subscribe(
    topic: string,
    options: SubscribeOptions = {},
  ): Promise<AsyncIterableIterator<unknown>> {
    checkTopic(topic)
    if (this.#closed) throw new TypeError('RedisPubSub: closed')
    const { signal } = options
    // The local subscriber first: a message that arrives as soon as Redis confirms is kept.
    const local = await this.#local.subscribe(topic, options)
    if (signal?.aborted) return local
    let channel = this.#channels.get(topic)
    if (channel === undefined) {
      const listener: RedisMessageListener = (message) => this.#deliver(topic, message)
      channel = { count: 0, listener, ready: this.#redisSubscribe(topic, listener) }
      this.#channels.set(topic, channel)
    }
    channel.count++
    const iterator = this.#track(topic, channel, local, signal)
    try {
      await channel.ready
    } catch (cause) {
      if (this.#channels.get(topic) === channel) this.#channels.delete(topic)
      await iterator.return?.()
      throw failed('subscribe', cause)
    }
    return iterator
  }

  /**
   * Ends every subscription of this pub/sub, and closes the subscriber connection it made
   * (never your `client`, nor a `subscriber` you gave). Call it when the server shuts down.
   *
   * @example
   * ```ts
   * process.once('SIGTERM', () => void pubsub.close())
   * ```
   */
  async close(): Promise<void> {
    this.#closed = true
    await Promise.all([...this.#open].map((iterator) => iterator.return?.()))
    const owned = this.#owned
    this.#owned = undefined
    this.#subscriber = undefined
    if (owned !== undefined) await owned.close()
  }

  /** Wraps a local iterator so that its end (by `return()` or the signal) releases the channel once. */
  #track(
    topic: string,
    channel: Channel,
    local: AsyncIterableIterator<unknown>,
    signal: AbortSignal | undefined,
  ): AsyncIterableIterator<unknown> {
    let released = false
    const release = (): void => {
      if (released) return
      released = true
      signal?.removeEventListener('abort', release)
      this.#open.delete(iterator)
      this.#release(topic, channel)
    }
    const iterator: AsyncIterableIterator<unknown> = {
      next: () => local.next(),
      return: async () => {
        release()
        return (await local.return?.()) ?? { done: true, value: undefined }
      },
      [Symbol.asyncIterator]() {
        return this
      },
    }
    signal?.addEventListener('abort', release, { once: true })
    this.#open.add(iterator)
    return iterator
  }

  #release(topic: string, channel: Channel): void {
    channel.count--
    if (channel.count > 0 || this.#channels.get(topic) !== channel) return
    this.#channels.delete(topic)
    // After the SUBSCRIBE settled: node-redis adds the listener only once Redis confirmed, so
    // removing it earlier would leave the subscription behind. A later subscriber of the topic
    // has a listener of its own, so this UNSUBSCRIBE never takes its subscription away.
    channel.ready
      .then(async () => {
        const subscriber = this.#given ?? (await this.#subscriber)
        await subscriber?.unsubscribe(this.prefix + topic, channel.listener)
      })
      .catch((error: unknown) => this.#onEvent?.({ type: 'subscriber_error', error }))
  }

  async #redisSubscribe(topic: string, listener: RedisMessageListener): Promise<void> {
    const subscriber = await this.#connection()
    await subscriber.subscribe(this.prefix + topic, listener)
  }

  /** The subscriber connection: the one given, or `client.duplicate()` connected once. */
  #connection(): Promise<RedisSubscriberClient> {
    if (this.#given !== undefined) return Promise.resolve(this.#given)
    if (this.#subscriber === undefined) {
      const duplicate = this.client.duplicate()
      // Without a listener an 'error' event would throw; node-redis reconnects by itself.
      duplicate.on('error', (error) => this.#onEvent?.({ type: 'subscriber_error', error }))
      this.#owned = duplicate
      const connecting = duplicate.connect().then(() => duplicate)
      this.#subscriber = connecting
      // A failed connection is forgotten, so the next subscribe tries again.
      connecting.catch(() => {
        if (this.#subscriber === connecting) {
          this.#subscriber = undefined
          this.#owned = undefined
          duplicate.close().catch(() => {})
        }
      })
    }
    return this.#subscriber
  }

  #deliver(topic: string, message: string): void {
    let payload: unknown
    try {
      payload = JSON.parse(message)
    } catch {
      this.#onEvent?.({ type: 'invalid_message', topic })
      return
    }
    void this.#local.publish(topic, payload)
  }
}

function checkTopic(topic: string): void {
  if (typeof topic !== 'string' || topic.length === 0) {
    throw new TypeError('RedisPubSub: a topic is a non-empty string')
  }
}

function failed(operation: string, cause: unknown): RedisStoreError {
  return new RedisStoreError(
    'COMMAND_FAILED',
    `pubsub.${operation}`,
    `The Redis pub/sub could not ${operation}.`,
    { cause },
  )
}
