/**
 * The publish/subscribe interface subscriptions are fed by: in memory for one process, Redis
 * (in @api-blocks/redis) for several instances.
 *
 * @module
 */

/**
 * Options of {@link PubSub.subscribe}.
 *
 * @example
 * ```ts
 * const options: SubscribeOptions = { signal: AbortSignal.timeout(60_000) }
 * ```
 */
export interface SubscribeOptions {
  /** Ends the subscription (the iterator returns) when it aborts. */
  readonly signal?: AbortSignal
}

/**
 * Topic-based publish/subscribe of JSON-serialisable payloads, at most once: a subscriber gets
 * what is published after its `subscribe` resolved, in publish order per publisher. Each
 * subscriber has a bounded buffer; a subscriber that falls behind by more than it loses the
 * oldest payloads (and the implementation reports how many).
 *
 * @example
 * ```ts
 * const changes = await pubsub.subscribe('order.changed', { signal })
 * await pubsub.publish('order.changed', { id: 'ord_1' })
 * for await (const order of changes) console.log(order)
 * ```
 */
export interface PubSub {
  /** Delivers `payload` to every current subscriber of `topic` (on every instance). */
  publish(topic: string, payload: unknown): Promise<void>
  /**
   * Subscribes to `topic`; resolves once the subscription is in place (so what is published
   * afterwards is delivered). The iterator ends when `signal` aborts or `return()` is called,
   * and then releases everything it held.
   */
  subscribe(topic: string, options?: SubscribeOptions): Promise<AsyncIterableIterator<unknown>>
}
