// What the tests of /graphql through a running service share: the real clients (graphql-ws,
// graphql-sse), writes over REST and GraphQL, and reading orderChanged deterministically.
import type { ExecutionResult } from 'graphql'
import { createClient as createSseClient } from 'graphql-sse'
import { createClient as createWsClient } from 'graphql-ws'
import { expect } from 'vitest'
import WebSocket from 'ws'

export const ORDER_CHANGED = 'subscription { orderChanged { id status customer version } }'
const CREATE =
  'mutation ($input: CreateOrderInput!) { createOrder(input: $input) { id status customer version } }'

export interface ChangedOrder {
  id: string
  status: string
  customer: string
  version: number
}

export type Changes = AsyncIterableIterator<
  ExecutionResult<{ orderChanged: ChangedOrder }, unknown>
>

/** POST /v1/orders on `base` with `authorization`; the order created. */
export async function restCreate(
  base: string,
  authorization: string,
  customer: string,
): Promise<ChangedOrder> {
  const response = await fetch(`${base}/v1/orders`, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/json' },
    body: JSON.stringify({ customer, items: [{ sku: 'BOOK-042', quantity: 1 }] }),
  })
  expect(response.status).toBe(201)
  return (await response.json()) as ChangedOrder
}

/** The createOrder mutation on `base`/graphql; the order created. */
export async function graphqlCreate(
  base: string,
  authorization: string,
  customer: string,
): Promise<ChangedOrder> {
  const response = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/json' },
    body: JSON.stringify({
      query: CREATE,
      variables: { input: { customer, items: [{ sku: 'BOOK-042', quantity: 1 }] } },
    }),
  })
  const body = (await response.json()) as ExecutionResult<{ createOrder: ChangedOrder }>
  expect(body.errors).toBeUndefined()
  return body.data?.createOrder as ChangedOrder
}

/**
 * Resolves once `changes` is live: a subscription is in place on the server some time after
 * the client sent it (no protocol message says when), so `prime` writes orders (customer
 * `priming`) until one arrives. Every write after that reaches the subscriber; {@link until}
 * skips the priming ones.
 */
export async function live(changes: Changes, prime: () => Promise<unknown>): Promise<void> {
  let arrived = false
  const first = changes.next().then((result) => {
    arrived = true
    return result
  })
  while (!arrived) {
    await prime()
    await new Promise((resolve) => setImmediate(resolve))
  }
  expect((await first).value?.data?.orderChanged.customer).toBe('priming')
}

/** The next change of the order `id`, skipping the others. */
export async function until(changes: Changes, id: string): Promise<ChangedOrder> {
  for (;;) {
    const { value, done } = await changes.next()
    if (done) throw new Error('the subscription ended')
    expect(value.errors).toBeUndefined()
    const order = value.data?.orderChanged as ChangedOrder
    if (order.id === id) return order
  }
}

/** A graphql-ws client of `base`/graphql (no retries, connected at the first subscribe). */
export function wsClient(
  base: string,
  connectionParams: Record<string, unknown>,
): ReturnType<typeof createWsClient> {
  return createWsClient({
    url: `${base.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams,
    retryAttempts: 0,
    lazy: true,
  })
}

/** A graphql-sse client of `base`/graphql (distinct connections, no retries). */
export function sseClient(
  base: string,
  headers: Record<string, string>,
): ReturnType<typeof createSseClient> {
  return createSseClient({ url: `${base}/graphql`, headers, retryAttempts: 0 })
}
