/**
 * The in-process {@link PubSub}: topics held in a `Map`, each subscriber an async iterator with
 * a bounded buffer of its own.
 *
 * @module
 */
import type { PubSub, SubscribeOptions } from './pubsub.ts'

/**
 * What a pub/sub reports to `onEvent`: `dropped` when a subscriber's buffer was full and its
 * oldest payload was dropped to make room (`dropped` is how many that subscriber lost so far).
 * Frequent drops mean a consumer (a slow client) cannot keep up, or `bufferSize` is too small.
 *
 * @example
 * ```ts
 * const onEvent = (event: PubSubEvent) => {
 *   if (event.type === 'dropped') console.warn(`a subscriber of ${event.topic} lost ${event.dropped} payloads`)
 * }
 * ```
 */
export interface PubSubEvent {
  readonly type: 'dropped'
  readonly topic: string
  readonly dropped: number
}

/**
 * Options of {@link MemoryPubSub}.
 *
 * @example
 * ```ts
 * const options: MemoryPubSubOptions = { bufferSize: 50, onEvent: (event) => console.warn(event) }
 * const pubsub = new MemoryPubSub(options)
 * ```
 */
export interface MemoryPubSubOptions {
  /**
   * The most payloads one subscriber holds before it reads them (default 100). Past it the
   * oldest is dropped and reported to `onEvent`.
   */
  readonly bufferSize?: number
  /** Told of dropped payloads (what it throws is ignored). */
  readonly onEvent?: (event: PubSubEvent) => void
}

const DEFAULT_BUFFER_SIZE = 100
const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined })

/**
 * One subscriber: an async iterator over a ring buffer of `size` payloads. Consumers waiting in
 * `next()` are served first, in order; the iterator ends (and releases its slot in the topic)
 * on `return()` or when its signal aborts.
 */
class Subscription implements AsyncIterableIterator<unknown> {
  readonly #buffer: unknown[]
  #head = 0
  #length = 0
  #dropped = 0
  #done = false
  readonly #waiting: ((result: IteratorResult<unknown>) => void)[] = []
  readonly #topic: string
  readonly #onEvent: ((event: PubSubEvent) => void) | undefined
  readonly #release: () => void
  readonly #signal: AbortSignal | undefined
  readonly #onAbort = (): void => {
    this.#finish()
  }

  constructor(
    topic: string,
    size: number,
    onEvent: ((event: PubSubEvent) => void) | undefined,
    release: () => void,
    signal: AbortSignal | undefined,
  ) {
    this.#topic = topic
    this.#buffer = new Array<unknown>(size)
    this.#onEvent = onEvent
    this.#release = release
    this.#signal = signal
    signal?.addEventListener('abort', this.#onAbort, { once: true })
  }

  /** Delivers `payload`: to a waiting `next()`, else into the buffer (the oldest dropped when full). */
  push(payload: unknown): void {
    if (this.#done) return
    const waiter = this.#waiting.shift()
    if (waiter !== undefined) {
      waiter({ done: false, value: payload })
      return
    }
    const size = this.#buffer.length
    if (this.#length === size) {
      this.#buffer[this.#head] = payload
      this.#head = (this.#head + 1) % size
      this.#dropped++
      try {
        this.#onEvent?.({ type: 'dropped', topic: this.#topic, dropped: this.#dropped })
      } catch {
        // An observer that throws must not stop the delivery to the other subscribers.
      }
      return
    }
    this.#buffer[(this.#head + this.#length) % size] = payload
    this.#length++
  }

  next(): Promise<IteratorResult<unknown>> {
    if (this.#length > 0) {
      const value = this.#buffer[this.#head]
      this.#buffer[this.#head] = undefined
      this.#head = (this.#head + 1) % this.#buffer.length
      this.#length--
      return Promise.resolve({ done: false, value })
    }
    if (this.#done) return Promise.resolve(DONE)
    return new Promise((resolve) => this.#waiting.push(resolve))
  }

  return(): Promise<IteratorResult<unknown>> {
    this.#finish()
    return Promise.resolve(DONE)
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<unknown> {
    return this
  }

  /** Ends the iterator: pending `next()` calls answer done, the buffer and the slot are released. */
  #finish(): void {
    if (this.#done) return
    this.#done = true
    this.#signal?.removeEventListener('abort', this.#onAbort)
    this.#buffer.fill(undefined)
    this.#length = 0
    this.#release()
    for (const waiter of this.#waiting.splice(0)) waiter(DONE)
  }
}

/**
 * A {@link PubSub} for one process: `publish` hands the payload to every current subscriber of
 * the topic synchronously, so each subscriber sees the payloads in publish order. Subscribers
 * receive the very value published (not a copy): publish plain JSON-serialisable data and do
 * not mutate it, so that switching to the Redis pub/sub (which sends JSON) changes nothing.
 *
 * - **Bounded**: each subscriber holds at most `bufferSize` payloads it has not read; past it the
 *   oldest is dropped and `onEvent` hears of it (`{ type: 'dropped' }`), so a stalled client
 *   costs a fixed amount of memory.
 * - **Ending**: the iterator ends when `options.signal` aborts or its `return()` is called (what
 *   graphql-js does when a subscription stops); the subscriber is then removed and its buffer
 *   released. A signal already aborted gives an iterator that is already done.
 * - **At most once**: what was published before `subscribe` resolved is not delivered.
 *
 * @example
 * ```ts
 * const pubsub = new MemoryPubSub({ bufferSize: 100 })
 * const controller = new AbortController()
 * const changes = await pubsub.subscribe('order.changed', { signal: controller.signal })
 * await pubsub.publish('order.changed', { id: 'ord_1' })
 * console.log(await changes.next()) // { done: false, value: { id: 'ord_1' } }
 * controller.abort() // ends the iterator
 * ```
 */
export class MemoryPubSub implements PubSub {
  /** The most unread payloads one subscriber holds. */
  readonly bufferSize: number
  readonly #onEvent: ((event: PubSubEvent) => void) | undefined
  readonly #topics = new Map<string, Set<Subscription>>()

  constructor(options: MemoryPubSubOptions = {}) {
    const { bufferSize = DEFAULT_BUFFER_SIZE, onEvent } = options
    if (!Number.isSafeInteger(bufferSize) || bufferSize < 1) {
      throw new RangeError('MemoryPubSub: bufferSize must be a positive integer')
    }
    if (onEvent !== undefined && typeof onEvent !== 'function') {
      throw new TypeError('MemoryPubSub: onEvent must be a function')
    }
    this.bufferSize = bufferSize
    this.#onEvent = onEvent
  }

  /** How many subscribers `topic` has now. */
  subscribers(topic: string): number {
    return this.#topics.get(topic)?.size ?? 0
  }

  publish(topic: string, payload: unknown): Promise<void> {
    if (typeof topic !== 'string' || topic.length === 0) {
      return Promise.reject(new TypeError('MemoryPubSub: a topic is a non-empty string'))
    }
    const subscribers = this.#topics.get(topic)
    if (subscribers !== undefined) for (const subscriber of subscribers) subscriber.push(payload)
    return Promise.resolve()
  }

  subscribe(
    topic: string,
    options: SubscribeOptions = {},
  ): Promise<AsyncIterableIterator<unknown>> {
    if (typeof topic !== 'string' || topic.length === 0) {
      return Promise.reject(new TypeError('MemoryPubSub: a topic is a non-empty string'))
    }
    const { signal } = options
    let subscribers = this.#topics.get(topic)
    if (subscribers === undefined) {
      subscribers = new Set()
      this.#topics.set(topic, subscribers)
    }
    const set = subscribers
    const subscription: Subscription = new Subscription(
      topic,
      this.bufferSize,
      this.#onEvent,
      () => {
        set.delete(subscription)
        if (set.size === 0 && this.#topics.get(topic) === set) this.#topics.delete(topic)
      },
      signal,
    )
    set.add(subscription)
    if (signal?.aborted) void subscription.return()
    return Promise.resolve(subscription)
  }
}
