import { describe, expectTypeOf, test } from 'vitest'
import type {
  DeliveryWorkerEvent,
  EndpointRegistry,
  RetryDecision,
  WebhookErrorCode,
  WebhookSender,
} from './index.ts'
import {
  createDeliveryWorker,
  createEndpointRegistry,
  createRetryPolicy,
  createWebhookPublisher,
  MemoryDeliveryQueue,
  MemoryEndpointStore,
} from './index.ts'

describe("the engine's public types", () => {
  test('a retry decision has a delay only when pending', () => {
    const decision = createRetryPolicy().decide(
      { kind: 'failure', failure: 'timeout', message: '', latencyMs: 1 },
      0,
    )
    expectTypeOf(decision).toEqualTypeOf<RetryDecision>()
    // @ts-expect-error: not every decision has a delay
    decision.delayMs
    if (decision.status === 'pending') expectTypeOf(decision.delayMs).toEqualTypeOf<number>()
    if (decision.status === 'failed')
      expectTypeOf(decision.disableEndpoint).toEqualTypeOf<boolean>()
  })

  test('a publisher takes a registry or a store, never both, and a queue that only enqueues', () => {
    const store = new MemoryEndpointStore()
    const registry = createEndpointRegistry({ store })
    const queue = new MemoryDeliveryQueue()
    createWebhookPublisher({ registry, queue })
    createWebhookPublisher({ store, queue: { enqueue: async (deliveries) => deliveries.length } })
    // @ts-expect-error: one of `registry` and `store`
    createWebhookPublisher({ registry, store, queue })
    // @ts-expect-error: somewhere to find endpoints
    createWebhookPublisher({ queue })
  })

  test('a worker takes the registry and the sender as they are', () => {
    const registry: EndpointRegistry = createEndpointRegistry({ store: new MemoryEndpointStore() })
    const sender = {} as WebhookSender
    createDeliveryWorker({ queue: new MemoryDeliveryQueue(), registry, sender })
    // @ts-expect-error: a sender is needed
    createDeliveryWorker({ queue: new MemoryDeliveryQueue(), registry })
    expectTypeOf<DeliveryWorkerEvent['type']>().toEqualTypeOf<
      'attempt' | 'dead-letter' | 'endpoint-disabled' | 'error'
    >()
  })

  test('the codes the engine adds are in the union', () => {
    expectTypeOf<'EVENTS_INVALID'>().toExtend<WebhookErrorCode>()
    expectTypeOf<'ENDPOINT_CONFLICT'>().toExtend<WebhookErrorCode>()
    expectTypeOf<'EVENT_ID_REUSED'>().toExtend<WebhookErrorCode>()
  })
})
