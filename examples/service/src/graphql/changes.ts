// Order changes for the `orderChanged` subscription: every write through the order store, from
// either interface (the REST routes and the GraphQL mutation share the store), is published to
// the pub/sub once it has committed, never from inside a transaction (a subscriber must never
// see an order that a rollback then undoes). On one instance a MemoryPubSub carries them; with
// REDIS_URL a RedisPubSub, so a subscriber on any instance sees the writes of every instance.
import { storeGuard } from '@api-blocks/core'
import type { PubSub } from '@api-blocks/graphql'
import type { Order } from '../orders/schema.ts'
import type { OrderStore } from '../orders/store.ts'

/** The pub/sub topic of order changes; its payloads are orders as the REST API shows them. */
export const ORDER_CHANGED_TOPIC = 'orders.changed'

/** Options of {@link publishOrderChanges}. */
export interface OrderChangesOptions {
  pubsub: PubSub
  /**
   * Receives a publish that failed or took longer than `timeoutMs` (a Redis that went away or
   * hangs). The write has committed and answers as usual; only the subscribers miss the change
   * (default: the console).
   */
  onError?: (error: unknown) => void
  /**
   * The longest a write's answer waits for its publish, in ms (default 200); while the pub/sub
   * keeps failing, a breaker skips the wait altogether (core's storeGuard).
   */
  timeoutMs?: number
  /** Milliseconds since the epoch, for the breaker. */
  clock?: () => number
}

/**
 * The order store, publishing each committed change of an order to {@link ORDER_CHANGED_TOPIC}:
 * what `create`, `update`, `delete`, `cancel` and `finishCancel` wrote, after the call resolved
 * (the PostgreSQL store resolves after its COMMIT; one that rejects wrote nothing and publishes
 * nothing). The publish is awaited, so a client that gets the answer of a write knows that its
 * change has reached the pub/sub, for at most `timeoutMs`; a failed or late publish is reported
 * and never fails the write.
 */
export function publishOrderChanges(store: OrderStore, options: OrderChangesOptions): OrderStore {
  const { pubsub } = options
  const onError =
    options.onError ?? ((error: unknown) => console.error('orderChanged publish failed:', error))
  const guard = storeGuard({
    timeoutMs: options.timeoutMs ?? 200,
    breaker: {},
    ...(options.clock ? { clock: options.clock } : {}),
  })
  const publish = async (order: Order | undefined): Promise<void> => {
    if (order === undefined) return
    try {
      await guard.run(() => pubsub.publish(ORDER_CHANGED_TOPIC, order))
    } catch (error) {
      onError(error)
    }
  }
  return {
    list: (query) => store.list(query),
    get: (id) => store.get(id),
    getOperation: (id) => store.getOperation(id),
    async create(input, respond) {
      let created: Order | undefined
      const answer = await store.create(input, (order, idempotencyStore) => {
        created = order
        return respond(order, idempotencyStore)
      })
      await publish(created)
      return answer
    },
    async update(current, changes) {
      const order = await store.update(current, changes)
      await publish(order)
      return order
    },
    async delete(current) {
      const deleted = await store.delete(current)
      // The order as it was last: its id tells subscribers which one went.
      if (deleted) await publish(current)
      return deleted
    },
    async cancel(id, target, respond) {
      const answer = await store.cancel(id, target, respond)
      // Accepted: the order is now `cancelling` (read back: the store answers the operation).
      if (answer !== undefined) await publish(await store.get(id))
      return answer
    },
    async finishCancel(orderId, operationId) {
      const before = await store.get(orderId)
      await store.finishCancel(orderId, operationId)
      const after = await store.get(orderId)
      // Only when this call moved it (a second finishCancel changes nothing).
      if (after !== undefined && after.version !== before?.version) await publish(after)
    },
  }
}
