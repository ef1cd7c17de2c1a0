// Creating an order, shared by POST /v1/orders and the createOrder mutation of /graphql, so
// that both interfaces validate alike and write through the same path (the store, its webhook
// events, its Idempotency-Key record, the orderChanged publication).
import type { CreateOrder, Order } from './schema.ts'
import type { OrderStore, Respond } from './store.ts'

/** Creates an order from a validated input and answers with `respond`, in one write. */
export type OrderCreator = <R>(input: CreateOrder, respond: Respond<Order, R>) => Promise<R>

/** Creates orders: `createLatencyMs` (a demonstration knob) then the store's create. */
export function orderCreator(options: {
  store: OrderStore
  createLatencyMs: number
}): OrderCreator {
  const { store, createLatencyMs } = options
  return async (input, respond) => {
    if (createLatencyMs > 0) await new Promise((resolve) => setTimeout(resolve, createLatencyMs))
    return store.create(input, respond)
  }
}
