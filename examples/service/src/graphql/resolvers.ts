// The resolvers of src/graphql/schema.ts, over the order store and cursors the REST routes use:
// the same rows, the same validation (orders/schema.ts), the same create path
// (orders/create.ts), the same signed cursors (a next_cursor of GET /v1/orders is an `after`
// here for the same status filter, and an endCursor is an `after` there).
import type { Principal } from '@api-blocks/core'
import type { PubSub } from '@api-blocks/graphql'
import { codedError, resolveConnection } from '@api-blocks/graphql'
import type { CursorCodec } from '@api-blocks/pagination'
import { issuesToPointers } from '@api-blocks/problem-details/validation'
import type { GraphQLFieldResolver } from 'graphql'
import type { OrderCreator } from '../orders/create.ts'
import type { Order } from '../orders/schema.ts'
import { createOrderSchema } from '../orders/schema.ts'
import type { OrderStore } from '../orders/store.ts'
import { LIST_ORDER } from '../orders/store.ts'
import { ORDER_CHANGED_TOPIC } from './changes.ts'

/** What every resolver may read: the principal the bearer token (or `connection_init`) named. */
export interface GraphQLContext {
  principal?: Principal | undefined
}

/** What the resolvers work on: the pieces of the REST routes. */
export interface OrderResolverOptions {
  store: OrderStore
  create: OrderCreator
  cursors: CursorCodec
  /** Page size bounds, those of GET /v1/orders. */
  page: { defaultLimit: number; maxLimit: number }
  pubsub: PubSub
}

type Resolver = GraphQLFieldResolver<unknown, GraphQLContext>
/** A field's resolver, or a subscription field's `subscribe` and `resolve`. */
export type FieldResolvers = Record<
  string,
  Record<string, Resolver | { subscribe: Resolver; resolve: Resolver }>
>

/**
 * The changes `keep` accepts. Not an async generator: one waiting for the next change would
 * queue a `return()` until a change arrives, keeping the subscription (and its buffer) alive
 * after the client left; here `return()` goes straight to the pub/sub's iterator, which ends
 * the pending `next()`.
 */
function only(
  changes: AsyncIterableIterator<unknown>,
  keep: (order: Order) => boolean,
): AsyncIterableIterator<unknown> {
  const filtered: AsyncIterableIterator<unknown> = {
    async next() {
      for (;;) {
        const result = await changes.next()
        if (result.done || keep(result.value as Order)) return result
      }
    },
    return: async () => (await changes.return?.()) ?? { done: true, value: undefined },
    [Symbol.asyncIterator]: () => filtered,
  }
  return filtered
}

const ORDER_ID = /^[A-Za-z0-9_-]{1,64}$/

const STATUSES = { OPEN: 'open', CANCELLING: 'cancelling', CANCELLED: 'cancelled' } as const

/** The resolvers by type and field. */
export function orderResolvers(options: OrderResolverOptions): FieldResolvers {
  const { store, create, cursors: codec, page, pubsub } = options
  return {
    Query: {
      viewer: (_source, _args, context) => context.principal,
      orders: async (_source, args: Record<string, unknown>) => {
        const status = STATUSES[args['status'] as keyof typeof STATUSES] ?? null
        // The query GET /v1/orders?status=… signs its cursors for: they work on both sides.
        const cursors = codec.forQuery({ order: LIST_ORDER, filters: { status } })
        return resolveConnection(args, { cursors, ...page }, (request) =>
          store.list({ status, page: request }),
        )
      },
      // An id /v1/orders/{id} could not route (anything but 1 to 64 of A-Z a-z 0-9 _ -) names
      // no order: not looked up, as the REST router answers it 404 without a lookup.
      order: async (_source, args: Record<string, unknown>) => {
        const id = args['id'] as string
        return ORDER_ID.test(id) ? ((await store.get(id)) ?? null) : null
      },
    },
    Mutation: {
      createOrder: async (_source, args: Record<string, unknown>) => {
        // The rules of POST /v1/orders, and its pointers: `/items/0/quantity` names the same
        // member of the input as of the body.
        const result = await createOrderSchema['~standard'].validate(args['input'])
        if (result.issues) {
          throw codedError(
            'BAD_USER_INPUT',
            `${result.issues.length} member(s) of the input are not valid.`,
            {
              errors: issuesToPointers(result.issues),
            },
          )
        }
        return create(result.value, async (order) => order)
      },
    },
    Subscription: {
      orderChanged: {
        // Ended by graphql-js (return()) when the client completes or goes away.
        subscribe: async (_source, args: Record<string, unknown>) => {
          const changes = await pubsub.subscribe(ORDER_CHANGED_TOPIC)
          const id = args['id']
          return typeof id === 'string' ? only(changes, (order) => order.id === id) : changes
        },
        resolve: (order) => order,
      },
    },
    Order: {
      status: (order) => (order as Order).status.toUpperCase(),
      createdAt: (order) => (order as Order).created_at,
      updatedAt: (order) => (order as Order).updated_at,
    },
  }
}
